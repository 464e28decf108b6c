// Hostile and broken documents against the built executable in its own process (issue 34), so
// that its RSS and its /livez latency are its own: an encrypted and a corrupt PDF, a PDF of
// 20,000 pages, a DOCX that inflates to 1 GiB, a DOCX declaring XML entities, a 30,000 × 30,000
// image, an image whose pixels are garbage, and an upload cut off halfway. Each ends in a 4xx at
// upload or a FAILED memory with its reason, nothing is half-written, /livez answers within 1 s
// throughout and another user's requests are answered, and the server's RSS stays within
// RSS_GROWTH_BOUND_KB of where it started.
import net from 'node:net'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../support/databases.js'
import {
  deflatedZeros,
  makeDocx,
  makeEncryptedPdf,
  makeManyPagePdf,
  makeTextPdf,
  pngHeader,
} from '../support/document-fixtures.js'
import {
  createSandbox,
  formatRss,
  killAllProcesses,
  type Sandbox,
  type ServerProcess,
  servePlaintextOnPostgres,
} from '../support/executable.js'
import { callJson } from '../support/http-client.js'
import { probeLivezFromChild } from '../support/livez-probe.js'
import { waitFor } from '../support/wait.js'

const KIB = 1024
const MIB = 1024 * 1024
/** The bound for /livez while the documents are refused and extracted. */
const LIVEZ_BOUND_MS = 1_000
/**
 * What the server's RSS may grow by over the whole run. The documents here are small (the
 * largest is the 3 MB 20,000-page PDF): what grows is the extraction thread (a V8 isolate,
 * pdfjs and its heap while it reads 20,000 page objects) and the OCR thread's wasm, which
 * together measured about 300 MB here; a bomb that got through would take gigabytes.
 */
const RSS_GROWTH_BOUND_KB = 600 * KIB
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const BILLION_LAUGHS =
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>' +
  '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>' +
  '<w:t>&lol2;</w:t></w:r></w:p></w:body></w:document>'

/** A PNG whose header claims 9,000 × 9,000 pixels (under the limit) and whose pixel data is noise. */
function garbagePng(): Uint8Array {
  return Buffer.concat([pngHeader(9_000, 9_000), Buffer.from('0000100049444154', 'hex'), Buffer.alloc(4096, 0x5a)])
}

const FAILING: Array<{ name: string; contentType: string; bytes: () => Uint8Array; reason: RegExp }> = [
  { name: 'an encrypted PDF', contentType: 'application/pdf', bytes: () => makeEncryptedPdf(), reason: /encrypted/i },
  {
    name: 'a corrupt PDF',
    contentType: 'application/pdf',
    bytes: () => Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\n%%EOF'),
    reason: /PDF/,
  },
  {
    name: 'a PDF of 20,000 pages',
    contentType: 'application/pdf',
    bytes: () => makeManyPagePdf(20_000),
    reason: /20000 pages/,
  },
  {
    name: 'a DOCX that inflates to 1 GiB',
    contentType: DOCX,
    bytes: () =>
      makeDocx({
        blocks: [{ paragraph: 'tiny' }],
        extraEntries: [{ name: 'word/document.xml', data: new Uint8Array(0), rawDeflated: deflatedZeros(1024) }],
      }),
    reason: /zip bomb|expands|limit/i,
  },
  {
    name: 'a DOCX declaring XML entities',
    contentType: DOCX,
    bytes: () => makeDocx({ blocks: [], documentXml: BILLION_LAUGHS }),
    reason: /DTD|entit/i,
  },
  { name: 'an image of noise', contentType: 'image/png', bytes: garbagePng, reason: /OCR cannot read the image/ },
]

describe('hostile and broken documents, against the executable', { timeout: 300_000 }, () => {
  let sandbox: Sandbox
  let database: TestDatabase
  let server: ServerProcess
  let aliceKey: string
  let bobKey: string
  let spaceId: string
  const post = (path: string, body: unknown, key: string) => callJson('POST', `${server.restBase}${path}`, key, body)

  beforeAll(async () => {
    sandbox = createSandbox()
    database = await createTestDatabase()
    server = await servePlaintextOnPostgres(sandbox, database.jdbcUrl)
    const rootKey = (await post('/v1/system/init', {}, '')).json.rootApiKey
    const keyOf = async (username: string) => {
      const user = await post('/v1/users', { username }, rootKey)
      return (await post('/v1/apikeys', { ownerId: user.json.userId }, rootKey)).json.rawApiKey as string
    }
    aliceKey = await keyOf('alice')
    bobKey = await keyOf('bob')
    spaceId = (await post('/v1/spaces', { name: 'hostile' }, aliceKey)).json.spaceId
  })
  afterAll(async () => {
    await server?.stop()
    killAllProcesses()
    await database?.drop()
    sandbox?.remove()
  })

  const upload = async (bytes: Uint8Array, contentType: string) => {
    const response = await fetch(`${server.restBase}/v1/memories?spaceId=${spaceId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${aliceKey}`, 'content-type': contentType },
      body: Buffer.from(bytes),
    })
    return { status: response.status, json: (await response.json()) as any }
  }

  const settled = (memoryId: string) =>
    waitFor(
      `memory ${memoryId} to finish`,
      async () => {
        const memory = await callJson('GET', `${server.restBase}/v1/memories/${memoryId}`, aliceKey)
        const status = memory.json?.processingStatus
        return status === 'COMPLETED' || status === 'FAILED' ? memory.json : undefined
      },
      { timeoutMs: 120_000 },
    )

  it('ends each in a 4xx or a FAILED memory with its reason, answering others within 1 s, RSS bounded', async () => {
    const livez = probeLivezFromChild(server.restBase)
    const startKb = server.rssKb()
    let peakKb = startKb
    const sampler = setInterval(() => {
      peakKb = Math.max(peakKb, server.rssKb())
    }, 20)
    let othersAnswered = 0
    let othersRunning = true
    const others = (async () => {
      while (othersRunning) {
        const me = await callJson('GET', `${server.restBase}/v1/users/me`, bobKey)
        expect(me.status).toBe(200)
        othersAnswered++
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    const outcomes: string[] = []
    try {
      const huge = await upload(pngHeader(30_000, 30_000), 'image/png')
      expect(huge.status).toBe(413)
      outcomes.push(`a 30,000 × 30,000 image: ${huge.status} ${huge.json.error.message}`)

      for (const bad of FAILING) {
        const answer = await upload(bad.bytes(), bad.contentType)
        expect(answer.status, `${bad.name}: ${JSON.stringify(answer.json)}`).toBe(201)
        const memory = await settled(answer.json.memoryId)
        expect(memory.processingStatus, bad.name).toBe('FAILED')
        expect(memory.processingError, bad.name).toMatch(bad.reason)
        expect(memory.chunkCount, bad.name).toBe(0)
        outcomes.push(`${bad.name}: FAILED, ${memory.processingError}`)
      }

      // Cut off halfway: 2 MiB of a declared 4 MiB, then the connection goes.
      const socket = net.connect(Number(new URL(server.restBase).port), '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write(
        `POST /v1/memories?spaceId=${spaceId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${aliceKey}\r\n` +
          `Content-Type: application/pdf\r\nContent-Length: ${4 * MIB}\r\n\r\n`,
      )
      socket.write(
        Buffer.concat([Buffer.from(makeTextPdf([['cut']])), Buffer.alloc(3 * MIB, 0x20)]).subarray(0, 3 * MIB),
      )
      await new Promise((resolve) => setTimeout(resolve, 500))
      socket.destroy()
      const sql = postgres(database.url, { max: 1, onnotice: () => {} })
      try {
        await waitFor('the cut-off upload to leave nothing', async () => {
          const rows = await sql<Array<{ count: number }>>`
            select count(*)::int as count from memory_content_parts p
            where not exists (select 1 from memories m where m.content_id = p.content_id)`
          return rows[0]!.count === 0
        })
      } finally {
        await sql.end()
      }
      outcomes.push('an upload cut off halfway: nothing stored')
    } finally {
      othersRunning = false
      await others
      clearInterval(sampler)
    }
    const { slowestMs, failed } = await livez.stop()
    const listed = await callJson('GET', `${server.restBase}/v1/spaces/${spaceId}/memories`, aliceKey)
    expect(listed.json.memories.every((memory: any) => memory.processingStatus === 'FAILED')).toBe(true)
    console.info(
      [
        ...outcomes,
        `RSS ${formatRss(startKb)} before, peak ${formatRss(peakKb)} (bound: +${formatRss(RSS_GROWTH_BOUND_KB)})`,
        `/livez slowest ${Math.round(slowestMs)} ms, ${failed} failed; another user answered ${othersAnswered} times`,
      ].join('\n'),
    )
    expect(failed).toBe(0)
    expect(slowestMs).toBeLessThan(LIVEZ_BOUND_MS)
    expect(peakKb - startKb).toBeLessThan(RSS_GROWTH_BOUND_KB)
    expect(othersAnswered).toBeGreaterThan(0)
  })
})
