import net from 'node:net'
import { beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { makeHtml, makeImagePdf, makeTextPdf, renderTextImage } from '../support/document-fixtures.js'
import {
  downloadGrpc,
  downloadRest,
  pageImageGrpc,
  settledDocument,
  UPLOAD_WAYS,
  uploadDocument,
} from '../support/document-uploads.js'
import { FAST_MEMORY_JOBS, startMemoryFixture } from '../support/memory-fixture.js'
import { useFixture } from './case-table.js'

describe.each(ENGINES)('documents, security (%s)', (engine) => {
  const fixture = useFixture(() => startMemoryFixture(engine, FAST_MEMORY_JOBS))
  let privateSpace: string
  let publicSpace: string
  let documentId: string

  beforeAll(async () => {
    const space = async (fields: Record<string, unknown>) => {
      const created = await fixture().call(
        'rest',
        'createSpace',
        { name: `secure-${crypto.randomUUID()}`, ...fields },
        fixture().alice.apiKey,
      )
      return created.body.spaceId as string
    }
    privateSpace = await space({})
    publicSpace = await space({ publicRead: true })
    const scan = renderTextImage('Private ledger', { format: 'jpeg', width: 850, height: 1100 })
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      'rest-raw',
      { spaceId: privateSpace, fileName: 'ledger.pdf', extractPageImages: true, pageImageDpi: 36 },
      makeImagePdf([scan]),
    )
    documentId = answer.body.memoryId
    const memory = await settledDocument(fixture(), documentId)
    expect(memory.processingStatus, memory.processingError).toBe('COMPLETED')
  }, 120_000)

  it("answers another user's document bytes and page images as not found, on both transports", async () => {
    const rest = await downloadRest(fixture(), fixture().bob, documentId)
    expect(rest.status).toBe(404)
    await expect(downloadGrpc(fixture(), fixture().bob, documentId)).rejects.toMatchObject({ code: 5 })
    const image = await fetch(`${fixture().server.restUrl}/v1/memories/${documentId}/pages/1/image`, {
      headers: { authorization: `Bearer ${fixture().bob.apiKey}` },
    })
    expect(image.status).toBe(404)
    expect((await pageImageGrpc(fixture(), fixture().bob, documentId, 1)).status).toBe('NOT_FOUND')
    // The owner gets both.
    expect((await pageImageGrpc(fixture(), fixture().alice, documentId, 1)).status).toBe('OK')
  })

  it.each(UPLOAD_WAYS)("refuses an upload into another user's private space as not found (%s)", async (way) => {
    const answer = await uploadDocument(
      fixture(),
      fixture().bob,
      way,
      { spaceId: privateSpace, contentType: 'application/pdf' },
      makeTextPdf([['intruder']]),
    )
    expect(answer.status).toBe('NOT_FOUND')
  })

  it.each(UPLOAD_WAYS)('refuses an upload into a space another user may only read (%s)', async (way) => {
    const answer = await uploadDocument(
      fixture(),
      fixture().bob,
      way,
      { spaceId: publicSpace, contentType: 'application/pdf' },
      makeTextPdf([['intruder']]),
    )
    expect(answer.status).toBe('PERMISSION_DENIED')
  })

  it.each(['rest-raw', 'grpc-stream'] as const)('refuses an upload without a valid API key (%s)', async (way) => {
    const stranger = { ...fixture().alice, apiKey: 'msk_notakey' }
    const answer = await uploadDocument(fixture(), stranger, way, { spaceId: privateSpace }, makeTextPdf([['x']]))
    expect(answer.status).toBe('UNAUTHENTICATED')
  })

  it('answers 401 to an upload without a key before reading its body', async () => {
    const url = new URL(fixture().server.restUrl)
    const socket = net.connect(Number(url.port), url.hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    const answer = new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (data) => {
        text += data.toString('latin1')
        if (text.includes('\r\n\r\n')) resolve(text)
      })
    })
    // Declares 1 GiB and sends none of it: the answer must not wait for the body.
    socket.write(
      `POST /v1/memories?spaceId=${privateSpace} HTTP/1.1\r\nHost: x\r\n` +
        'Content-Type: application/pdf\r\nContent-Length: 1073741824\r\n\r\n',
    )
    expect(await answer).toMatch(/^HTTP\/1\.1 401 /)
    socket.destroy()
  })

  it('serves a stored HTML page only as a sandboxed attachment, never as a page of this origin', async () => {
    const html = makeHtml('<h1>Hi</h1><script>steal(localStorage)</script>')
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      'rest-raw',
      { spaceId: privateSpace, contentType: 'text/html' },
      html,
    )
    expect(answer.status, answer.message).toBe('OK')
    const download = await downloadRest(fixture(), fixture().alice, answer.body.memoryId)
    expect(download.headers.get('content-disposition')).toBe('attachment')
    expect(download.headers.get('content-security-policy')).toContain('sandbox')
    expect(download.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it.each(['rest-raw', 'grpc-bytes'] as const)(
    'refuses a file name that would break out of Content-Disposition (%s)',
    async (way) => {
      for (const fileName of ['a"\r\nSet-Cookie: x=1', '../etc/passwd', 'dir\\file.pdf']) {
        const answer = await uploadDocument(
          fixture(),
          fixture().alice,
          way,
          { spaceId: privateSpace, fileName, contentType: 'application/pdf' },
          makeTextPdf([['name']]),
        )
        expect(answer.status, fileName).toBe('INVALID_ARGUMENT')
        expect(answer.fields, fileName).toContain('fileName')
      }
    },
  )

  it('keeps the storage details of a document out of its answers', async () => {
    const memory = await fixture().call('rest', 'getMemory', { memoryId: documentId }, fixture().alice.apiKey)
    const text = JSON.stringify(memory.body)
    for (const internal of ['content_id', 'contentId', 'document_sections', 'documentSections', 'sections'])
      expect(text).not.toContain(internal)
  })
})
