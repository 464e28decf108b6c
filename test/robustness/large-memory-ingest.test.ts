// Ingesting a memory at the content limit (issue 30): 4 MiB without whitespace, which default
// chunking cuts between every character, and 4 MiB of emoji, every character a surrogate pair.
// Before, the first held the event loop for 2.3 s while it was chunked (and the server's RSS went
// to 1.1 GB), and on the embedded database for 8 s more while its vectors were written. The server
// runs in this process, so its event loop is this test's: the longest the loop went unanswered is
// read off a delay monitor, and /livez and another user's GetSpace are asked throughout.
//
// Not yet bounded: the embedded database serves one transaction at a time, and the ingest writes
// a memory's chunks and vectors in one, which keeps the database for as long as it indexes them
// (9–16 s for the 9,363 vectors here), so there another user's GetSpace waits that long. It is
// measured and printed on both engines, and held to the bound on PostgreSQL only. It must still
// answer OK: the health check once took that wait for an outage and turned readiness off, and
// every request got 503 until the transaction ended.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from '../../src/chunking/chunking-config.js'
import { MAX_CONTENT_BYTES } from '../../src/validation/memory.js'
import { newSpace } from '../api/memory-cases.js'
import { ENGINES } from '../support/databases.js'
import { probeLivez } from '../support/livez-probe.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'

/** The bound for /livez; the same for another user's call and for the event loop itself. */
const ANSWER_BOUND_MS = 1_000
const UTF8_BYTES_PER_EMOJI = 4
/** Between two of the other user's calls. */
const ASK_INTERVAL_MS = 50
/** Ingesting the largest memory on the embedded database takes some 12 s here. */
const INGEST_TIMEOUT_MS = 90_000
const NANOSECONDS_PER_MS = 1e6
/** Default chunking starts a chunk every chunkSize - chunkOverlap code units, and an emoji is two. */
const expectedChunks = (content: string) =>
  Math.ceil((content.length - DEFAULT_CHUNK_OVERLAP) / (DEFAULT_CHUNK_SIZE - DEFAULT_CHUNK_OVERLAP))

const LARGEST = [
  { name: 'without whitespace', content: 'c'.repeat(MAX_CONTENT_BYTES) },
  { name: 'of emoji', content: '😀'.repeat(MAX_CONTENT_BYTES / UTF8_BYTES_PER_EMOJI) },
]

/** Calls `ask` one after another until stopped; resolves with the slowest answer's time. */
function askUntilStopped(ask: () => Promise<unknown>) {
  let running = true
  let slowestMs = 0
  const loop = (async () => {
    while (running) {
      const asked = performance.now()
      await ask()
      slowestMs = Math.max(slowestMs, performance.now() - asked)
      await new Promise((resolve) => setTimeout(resolve, ASK_INTERVAL_MS))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return slowestMs
    },
  }
}

describe.each(ENGINES)('a memory at the content limit (%s)', (engine) => {
  let fixture: MemoryFixture
  let aliceSpaceId: string
  let bobSpaceId: string
  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    aliceSpaceId = (await newSpace(fixture, 'alice')).spaceId
    bobSpaceId = (await newSpace(fixture, 'bob')).spaceId
  })
  afterAll(async () => {
    await fixture?.stop()
  })

  it.each(LARGEST)(
    'ingests $name while the event loop and /livez answer within 1 s, and on PostgreSQL another user too',
    async ({ name, content }) => {
      const delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      const livez = probeLivez(fixture.server.restUrl)
      const otherUser = askUntilStopped(async () => {
        const answer = await fixture.call('rest', 'getSpace', { spaceId: bobSpaceId }, fixture.bob.apiKey)
        expect(answer.status).toBe('OK')
      })
      const created = await fixture.call(
        'rest',
        'createMemory',
        { spaceId: aliceSpaceId, originalContent: content },
        fixture.alice.apiKey,
      )
      expect(created.status, created.message).toBe('OK')
      const memory = await waitFor(
        `memory ${created.body.memoryId} to finish ingest`,
        async () => {
          const current = await fixture.call(
            'rest',
            'getMemory',
            { memoryId: created.body.memoryId },
            fixture.alice.apiKey,
          )
          const status = current.body?.processingStatus
          return status === 'COMPLETED' || status === 'FAILED' ? current.body : undefined
        },
        { timeoutMs: INGEST_TIMEOUT_MS },
      )
      const otherSlowestMs = await otherUser.stop()
      const { slowestMs: livezSlowestMs, failed } = await livez.stop()
      delay.disable()
      const longestBlockMs = delay.max / NANOSECONDS_PER_MS
      console.log(
        `[${engine}] 4 MiB ${name}: ${memory.chunkCount} chunks; event loop held at most ${longestBlockMs.toFixed(0)} ms, ` +
          `slowest /livez ${livezSlowestMs.toFixed(0)} ms, slowest GetSpace of another user ${otherSlowestMs.toFixed(0)} ms`,
      )
      expect(memory).toMatchObject({
        processingStatus: 'COMPLETED',
        chunkCount: expectedChunks(content),
      })
      expect(failed).toBe(0)
      expect(longestBlockMs).toBeLessThan(ANSWER_BOUND_MS)
      expect(livezSlowestMs).toBeLessThan(ANSWER_BOUND_MS)
      if (engine === 'postgresql') expect(otherSlowestMs).toBeLessThan(ANSWER_BOUND_MS)
    },
    INGEST_TIMEOUT_MS + 30_000,
  )
})
