import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import {
  deflatedZeros,
  makeDocx,
  makeEncryptedPdf,
  makeManyPagePdf,
  makeTextPdf,
  makeXlsx,
  pngHeader,
  renderTextImage,
} from '../support/document-fixtures.js'
import { settledDocument, transportOf, type UploadWay, uploadDocument } from '../support/document-uploads.js'
import { FAST_MEMORY_JOBS, startMemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'
import { useFixture } from './case-table.js'

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
/** The test server's upload limit (--max-upload-mb), small so that going past it is cheap. */
const UPLOAD_LIMIT_MB = 4
const MIB = 1024 * 1024
/** Each way's status for an error: REST's name it in the body, gRPC's in the x-error-status trailer. */
const WAYS: UploadWay[] = ['rest-raw', 'rest-multipart', 'rest-base64', 'grpc-bytes', 'grpc-stream']

/** An XML part that would expand an entity a billion times, were entities expanded. */
const BILLION_LAUGHS =
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
  '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>' +
  '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>' +
  '<w:t>&lol3;</w:t></w:r></w:p></w:body></w:document>'

describe.each(ENGINES)('documents, bad input (%s)', (engine) => {
  const fixture = useFixture(() =>
    startMemoryFixture(engine, FAST_MEMORY_JOBS, {}, { 'max-upload-mb': UPLOAD_LIMIT_MB }),
  )

  async function newSpace(): Promise<string> {
    const created = await fixture().call(
      'rest',
      'createSpace',
      { name: `bad-docs-${crypto.randomUUID()}` },
      fixture().alice.apiKey,
    )
    expect(created.status, created.message).toBe('OK')
    return created.body.spaceId
  }

  /** No upload's bytes are left behind by one that was refused or cut off. */
  async function storedPartsOfUnfinishedUploads(): Promise<number> {
    const rows = await fixture().server.server.context.sql<Array<{ count: number }>>`
      select count(*)::int as count from memory_content_parts p
      where not exists (select 1 from memories m where m.content_id = p.content_id)`
    return rows[0]!.count
  }

  it.each(WAYS)('answers 415 naming both types when the bytes contradict the declared type (%s)', async (way) => {
    const png = renderTextImage('not a pdf', { format: 'png', width: 200, height: 60 })
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      way,
      { spaceId: await newSpace(), contentType: 'application/pdf' },
      png,
    )
    expect(answer.status).toBe('UNSUPPORTED_MEDIA_TYPE')
    if (transportOf(way) === 'rest') expect(answer.rawStatus).toBe(415)
    expect(answer.message).toContain('application/pdf')
    expect(answer.message).toContain('image/png')
    expect(await storedPartsOfUnfinishedUploads()).toBe(0)
  })

  it.each(WAYS)('answers 415 for a ZIP that is no Office file (%s)', async (way) => {
    const zip = makeXlsx({ sheets: [{ name: 'S', rows: [['a']] }] })
    // The same archive with its workbook renamed is a plain ZIP.
    const renamed = Buffer.from(zip).toString('latin1').replaceAll('xl/workbook.xml', 'xl/notebook.xml')
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      way,
      { spaceId: await newSpace(), contentType: XLSX },
      Buffer.from(renamed, 'latin1'),
    )
    expect(answer.status).toBe('UNSUPPORTED_MEDIA_TYPE')
    expect(answer.message).toContain('application/zip')
  })

  it.each(['rest-raw', 'rest-multipart', 'grpc-stream'] as UploadWay[])(
    'refuses an upload over --max-upload-mb and keeps none of it (%s)',
    async (way) => {
      const oversized = Buffer.concat([
        Buffer.from(makeTextPdf([['big']])),
        Buffer.alloc((UPLOAD_LIMIT_MB + 1) * MIB, 0x20),
      ])
      const answer = await uploadDocument(fixture(), fixture().alice, way, { spaceId: await newSpace() }, oversized)
      expect(answer.status).toBe('PAYLOAD_TOO_LARGE')
      expect(answer.message).toMatch(/limit/)
      expect(await storedPartsOfUnfinishedUploads()).toBe(0)
    },
  )

  it.each(['rest-raw', 'grpc-bytes'] as UploadWay[])('refuses an empty upload, naming content (%s)', async (way) => {
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      way,
      { spaceId: await newSpace(), contentType: 'application/pdf' },
      new Uint8Array(0),
    )
    expect(answer.status).toBe('INVALID_ARGUMENT')
    expect(answer.fields).toContain('content')
  })

  it.each(['rest-raw', 'grpc-stream'] as UploadWay[])(
    'refuses a 30,000 × 30,000 image at upload, from its header alone (%s)',
    async (way) => {
      const answer = await uploadDocument(
        fixture(),
        fixture().alice,
        way,
        { spaceId: await newSpace(), contentType: 'image/png' },
        pngHeader(30_000, 30_000),
      )
      expect(answer.status).toBe('PAYLOAD_TOO_LARGE')
      expect(answer.message).toContain('30000 × 30000')
      expect(await storedPartsOfUnfinishedUploads()).toBe(0)
    },
  )

  const failing: Array<[name: string, bytes: () => Uint8Array, contentType: string, reason: RegExp]> = [
    ['an encrypted PDF', () => makeEncryptedPdf(), 'application/pdf', /encrypted/i],
    [
      'a corrupt PDF',
      () => Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\n%%EOF'),
      'application/pdf',
      /PDF/,
    ],
    ['a PDF of 20,000 pages', () => makeManyPagePdf(20_000), 'application/pdf', /20000 pages/],
    [
      'a DOCX zip bomb',
      () =>
        makeDocx({
          blocks: [{ paragraph: 'tiny' }],
          extraEntries: [{ name: 'word/document.xml', data: new Uint8Array(0), rawDeflated: deflatedZeros(1024) }],
        }),
      DOCX,
      /zip bomb|expands|limit/i,
    ],
    ['a DOCX declaring XML entities', () => makeDocx({ blocks: [], documentXml: BILLION_LAUGHS }), DOCX, /DTD|entit/i],
  ]

  it.each(failing)('ends %s FAILED with the reason', async (_name, bytes, contentType, reason) => {
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      'rest-raw',
      { spaceId: await newSpace(), contentType },
      bytes(),
    )
    expect(answer.status, answer.message).toBe('OK')
    const memory = await settledDocument(fixture(), answer.body.memoryId)
    expect(memory.processingStatus).toBe('FAILED')
    expect(memory.processingError).toMatch(reason)
    expect(memory.chunkCount).toBe(0)
  })

  it('keeps nothing of an upload whose client disconnects halfway, and answers others meanwhile', async () => {
    const spaceId = await newSpace()
    const url = new URL(fixture().server.restUrl)
    const socket = net.connect(Number(url.port), url.hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    const declared = UPLOAD_LIMIT_MB * MIB - 1
    socket.write(
      `POST /v1/memories?spaceId=${spaceId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixture().alice.apiKey}\r\n` +
        `Content-Type: application/pdf\r\nContent-Length: ${declared}\r\n\r\n`,
    )
    socket.write(
      Buffer.concat([Buffer.from(makeTextPdf([['cut off']])), Buffer.alloc(declared, 0x20)]).subarray(
        0,
        (declared * 3) / 4,
      ),
    )
    // The first parts reach the database before the client goes.
    await waitFor('the upload to be stored in part', async () => (await storedPartsOfUnfinishedUploads()) > 0)
    const during = await fixture().call('rest', 'getMe', {}, fixture().bob.apiKey)
    expect(during.status).toBe('OK')
    socket.destroy()
    await waitFor('the cut-off upload to be removed', async () => (await storedPartsOfUnfinishedUploads()) === 0)
    const listed = await fixture().call('rest', 'listMemories', { spaceId }, fixture().alice.apiKey)
    expect(listed.body.memories).toEqual([])
  })

  it('keeps nothing of a gRPC upload the client cancels halfway', async () => {
    const spaceId = await newSpace()
    const { MemoryServiceClient } = await import('../../src/generated/memsvc/v1/memories.js')
    const grpcModule = await import('@grpc/grpc-js')
    const client = new MemoryServiceClient(fixture().server.grpcAddress, grpcModule.credentials.createInsecure())
    const metadata = new grpcModule.Metadata()
    metadata.set('authorization', `Bearer ${fixture().alice.apiKey}`)
    const outcome = new Promise<string>((resolve) => {
      const call = client.uploadMemory(metadata, (error) => resolve(error ? String(error.code) : 'OK'))
      call.write({ part: { $case: 'header', value: { spaceId, contentType: 'application/pdf' } } })
      call.write({ part: { $case: 'data', value: Buffer.from(makeTextPdf([['cancelled']])) } })
      call.write({ part: { $case: 'data', value: Buffer.alloc(MIB, 0x20) } })
      setTimeout(() => call.cancel(), 300)
    })
    expect(await outcome).toBe(String(grpcModule.status.CANCELLED))
    client.close()
    await waitFor('the cancelled upload to be removed', async () => (await storedPartsOfUnfinishedUploads()) === 0)
    const listed = await fixture().call('rest', 'listMemories', { spaceId }, fixture().alice.apiKey)
    expect(listed.body.memories).toEqual([])
  })

  it.each(WAYS)('refuses OCR in a language the server has no model for, naming ocrLanguages (%s)', async (way) => {
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      way,
      { spaceId: await newSpace(), contentType: 'image/png', ocrLanguages: ['eng', 'fra'] },
      renderTextImage('bonjour', { format: 'png', width: 200, height: 60 }),
    )
    expect(answer.status).toBe('INVALID_ARGUMENT')
    expect(answer.fields).toContain('ocrLanguages')
    expect(answer.message).toContain('fra is not installed on this server (it reads eng)')
  })

  it('refuses an upload naming an option a document cannot have, naming the field', async () => {
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      'rest-raw',
      { spaceId: await newSpace(), contentType: 'application/pdf', pageImageDpi: 5000 },
      makeTextPdf([['x']]),
    )
    expect(answer.status).toBe('INVALID_ARGUMENT')
    expect(answer.fields).toContain('pageImageDpi')
  })
})
