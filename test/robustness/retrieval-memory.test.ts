// What a retrieval that asks for memory content holds while it streams (issue 30, defect 2):
// answers of many megabytes (40 memories of 256 KiB stored with chunking `none`, so each is
// sent twice, as content and as chunk text) to many callers at once, to callers that read
// slowly and to callers that never read. The server's memory is measured in-process after
// a full collection (test/support/live-heap.ts); the bounds are generous, several times what
// the server holds, and far below what it held when an answer was loaded whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SEARCH_TEXT_CHARS } from '../../src/domain/retrieval.js'
import { type AnswerOutcome, readAnswer, stallAnswer } from '../support/answer-readers.js'
import { TRANSPORTS } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { type LargeMemoryFixture, RETRIEVAL_MESSAGE, startLargeMemoryFixture } from '../support/large-memory-fixture.js'
import { liveBytes, MIB } from '../support/live-heap.js'
import { probeLivez } from '../support/livez-probe.js'
import { connectMcp } from '../support/mcp-client.js'
import { waitFor, within } from '../support/wait.js'

const MEMORY_COUNT = 40
const MEMORY_BYTES = 256 * 1024
const CONCURRENT_RETRIEVALS = 30
const NON_READING_CLIENTS = 20
/** Small enough that some of the concurrent retrievals do not fit; each reserves about 4 MiB. */
const SMALL_BUDGET_BYTES = 48 * MIB
/** What all the concurrent retrievals may hold at once (they held about 30 MiB each before answers streamed lazily). */
const CONCURRENT_BOUND_BYTES = 256 * MIB
/** What each client that never reads may hold (about 30 MiB each before). */
const PER_NON_READER_BOUND_BYTES = 8 * MIB
/** What one answer read slowly may hold (about 30 MiB before: its texts loaded whole, and every piece written kept). */
const SLOW_READER_BOUND_BYTES = 12 * MIB
const LIVEZ_BOUND_MS = 1_000
/** Between two measurements of the live heap while a load runs (each is a full collection, which holds the event loop). */
const MIN_SAMPLE_GAP_MS = 250
/** A measurement that moved less than this since the last one says the server has stopped taking memory. */
const SETTLED_BYTES = 2 * MIB
/** uWS's 10 s idle timeout, or gRPC's 10 s plus a second per 16 KiB waiting, and time to fill the buffers first. */
const DISCONNECT_WAIT_MS = 50_000
/** For a client that reads again to reach the end of what was sent before the server ended the answer. */
const CLIENT_SEES_END_MS = 10_000

const contentRequest = (fixture: LargeMemoryFixture, requestedSize = MEMORY_COUNT) => ({
  message: RETRIEVAL_MESSAGE,
  spaceKeys: [{ spaceId: fixture.spaceId }],
  requestedSize,
  fetchMemoryContent: true,
})

function expectWhole(outcome: AnswerOutcome, items = MEMORY_COUNT): void {
  expect(outcome).toMatchObject({ status: 'OK', definitions: items, items, ended: true, mismatches: [] })
}

/**
 * The live memory above what it was when the watch began, measured when an answer is half
 * read (so the answers are streaming), at most once per MIN_SAMPLE_GAP_MS.
 */
class HeapWatch {
  readonly #baseline = liveBytes()
  #sampledAt = 0
  peakBytes = 0
  samples = 0

  readonly sample = (): void => {
    if (performance.now() - this.#sampledAt < MIN_SAMPLE_GAP_MS) return
    this.peakBytes = Math.max(this.peakBytes, liveBytes() - this.#baseline)
    this.samples++
    this.#sampledAt = performance.now()
  }

  /** Now, whenever the last sample was. */
  heldNow(): number {
    return liveBytes() - this.#baseline
  }
}

describe.each(ENGINES)('retrieval memory bounds (%s)', (engine) => {
  let fixture: LargeMemoryFixture
  beforeAll(async () => {
    fixture = await startLargeMemoryFixture(engine, { count: MEMORY_COUNT, bytesEach: MEMORY_BYTES })
  }, 300_000)
  afterAll(async () => {
    await fixture?.stop()
  })
  const target = () => ({
    restUrl: fixture.server.restUrl,
    grpcAddress: fixture.server.grpcAddress,
    apiKey: fixture.alice.apiKey,
    texts: fixture.texts,
  })
  const lifecycle = () => fixture.server.server.lifecycle
  const budget = () => fixture.server.server.context.responseBudget
  const nothingInFlight = () =>
    waitFor('every answer to have ended', () => lifecycle().inFlight === 0 && budget().reservations === 0)

  it("over MCP, which sends the whole result at once, a long chunk is answered with its start and marked truncated; the memory's content stays with get_memory", async () => {
    const mcp = await connectMcp(fixture.server.restUrl, fixture.alice.apiKey)
    try {
      const found = await mcp.call('retrieve_memories', {
        message: RETRIEVAL_MESSAGE,
        spaceIds: [fixture.spaceId],
        requestedSize: MEMORY_COUNT,
      })
      expect(found.isError).toBe(false)
      expect(found.body.chunks).toHaveLength(MEMORY_COUNT)
      for (const chunk of found.body.chunks) {
        expect(chunk.chunkTextTruncated).toBe(true)
        expect(chunk.chunkText).toBe(fixture.texts.get(chunk.memoryId)!.slice(0, SEARCH_TEXT_CHARS))
      }
      const first = found.body.chunks[0]
      const memory = await mcp.call('get_memory', { memoryId: first.memoryId, includeContent: true })
      expect(memory.body.originalContent).toBe(fixture.texts.get(first.memoryId))
    } finally {
      await mcp.close()
    }
    await nothingInFlight()
  })

  describe.each(TRANSPORTS)('over %s', (transport) => {
    // One answer read first, so that the client's and the server's pools, caches and compiled code exist before a baseline is taken.
    beforeAll(async () => {
      expectWhole(await readAnswer(transport, target(), contentRequest(fixture)))
    })

    it("a slow reader receives the whole answer, each memory's content and chunk text as stored, while the server holds little of it", async () => {
      const watch = new HeapWatch()
      const outcome = await readAnswer(transport, target(), contentRequest(fixture), {
        pace: 'slow',
        onHalfway: watch.sample,
      })
      expectWhole(outcome)
      expect(watch.samples).toBe(1)
      expect(watch.peakBytes).toBeLessThan(SLOW_READER_BOUND_BYTES)
      await nothingInFlight()
    }, 60_000)

    it('a retrieval that does not fit beside the answers streaming is refused with UNAVAILABLE and Retry-After before its first byte, and is served once one ends', async () => {
      const defaultLimit = budget().limitBytes
      const stalled = [stallAnswer(transport, target(), contentRequest(fixture))]
      try {
        await waitFor('the first answer to hold its share', () => budget().reservations === 1)
        // Room for exactly two answers like it.
        budget().limitBytes = 2 * budget().reservedBytes
        stalled.push(stallAnswer(transport, target(), contentRequest(fixture)))
        await waitFor('the second answer to hold its share', () => budget().reservations === 2)
        const refused = await readAnswer(transport, target(), contentRequest(fixture))
        expect(refused).toMatchObject({ status: 'UNAVAILABLE', retryAfter: '1', definitions: 0, items: 0 })
        if (transport === 'grpc') expect(refused.pushbackMs).toBe('1000')
        stalled[0]!.cancel()
        await waitFor('the first answer to give its share back', () => budget().reservations === 1)
        expectWhole(await readAnswer(transport, target(), contentRequest(fixture)))
      } finally {
        for (const client of stalled) client.cancel()
        budget().limitBytes = defaultLimit
      }
      await nothingInFlight()
    })

    it('many content retrievals at once each arrive whole or are refused with Retry-After, while the heap stays bounded and /livez answers within 1 s', async () => {
      const defaultLimit = budget().limitBytes
      budget().limitBytes = SMALL_BUDGET_BYTES
      const livez = probeLivez(fixture.server.restUrl)
      try {
        const watch = new HeapWatch()
        const outcomes = await Promise.all(
          Array.from({ length: CONCURRENT_RETRIEVALS }, () =>
            readAnswer(transport, target(), contentRequest(fixture), { onHalfway: watch.sample }),
          ),
        )
        for (const outcome of outcomes) {
          if (outcome.status === 'OK') expectWhole(outcome)
          else expect(outcome).toMatchObject({ status: 'UNAVAILABLE', retryAfter: '1', items: 0 })
        }
        expect(outcomes.some((outcome) => outcome.status === 'OK')).toBe(true)
        expect(watch.samples).toBeGreaterThan(0)
        expect(watch.peakBytes).toBeLessThan(CONCURRENT_BOUND_BYTES)
        const probed = await livez.stop()
        expect(probed.failed).toBe(0)
        expect(probed.slowestMs).toBeLessThan(LIVEZ_BOUND_MS)
      } finally {
        await livez.stop()
        budget().limitBytes = defaultLimit
      }
      await nothingInFlight()
    }, 120_000)

    it(`${NON_READING_CLIENTS} clients that never read hold a bounded amount of memory, and other callers are served meanwhile`, async () => {
      const watch = new HeapWatch()
      const stalled = Array.from({ length: NON_READING_CLIENTS }, () =>
        stallAnswer(transport, target(), contentRequest(fixture)),
      )
      try {
        await waitFor('every answer to have started', () => lifecycle().inFlight >= NON_READING_CLIENTS)
        // The server writes until the clients' buffers are full; then what it holds stops growing.
        let held = watch.heldNow()
        await waitFor('the server to stop taking memory', async () => {
          await new Promise((resolve) => setTimeout(resolve, MIN_SAMPLE_GAP_MS * 2))
          const now = watch.heldNow()
          const settled = Math.abs(now - held) < SETTLED_BYTES
          held = now
          return settled
        })
        expect(held).toBeLessThan(NON_READING_CLIENTS * PER_NON_READER_BOUND_BYTES)
        const livez = probeLivez(fixture.server.restUrl)
        expectWhole(await readAnswer(transport, target(), contentRequest(fixture, 3)), 3)
        const probed = await livez.stop()
        expect(probed.failed).toBe(0)
        expect(probed.slowestMs).toBeLessThan(LIVEZ_BOUND_MS)
      } finally {
        for (const client of stalled) client.cancel()
      }
      await nothingInFlight()
    }, 90_000)

    it('a client that never reads is disconnected after the idle timeout, and its answer gives back what it held', async () => {
      const stalled = stallAnswer(transport, target(), contentRequest(fixture))
      try {
        await waitFor('the answer to have started', () => lifecycle().inFlight === 1)
        // The client is still there, reading nothing: the server ends the answer on its own.
        await waitFor('the server to end the answer', () => lifecycle().inFlight === 0 && budget().reservations === 0, {
          timeoutMs: DISCONNECT_WAIT_MS,
        })
        stalled.resume()
        const ending = await within('the client to see the end', stalled.closed, CLIENT_SEES_END_MS)
        // REST: uWS closes the connection; gRPC: the stream is reset, which clients report as RESOURCE_EXHAUSTED.
        expect(ending).toBe(transport === 'rest' ? 'closed' : 'RESOURCE_EXHAUSTED')
      } finally {
        stalled.cancel()
      }
      await nothingInFlight()
    }, 70_000)
  })
})
