// One user's stalled provider must not starve everyone else (issue 30, defect 4). Alice's
// embedder accepts requests and never answers; Bob's answers at once. In-process servers on
// both engines, with the production worker count and the query-time timeouts as shipped;
// only ingestion's request timeout and stall cool-down are shortened, so that "ends FAILED
// within INGEST_MAX_ATTEMPTS × (timeout + cool-down)" is seconds here instead of minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as memories from '../../src/domain/memories.js'
import { createReranker } from '../../src/domain/rerankers.js'
import * as spaces from '../../src/domain/spaces.js'
import { INGEST_MAX_ATTEMPTS } from '../../src/jobs/handlers/memory-ingest.js'
import { DEFAULT_JOB_OPTIONS, maxRunsPerLane } from '../../src/jobs/job-processor.js'
import { QUERY_PROVIDER_TIMEOUT_MS } from '../../src/providers/http.js'
import type { StartOptions } from '../../src/server/server.js'
import { ENGINES } from '../support/databases.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { recordFigures } from '../support/fault-figures.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'

/** Ingestion's timeout here: Bob's memories must be done before any of Alice's requests reaches it. */
const STALL_TIMEOUT_MS = 5_000
const STALL_COOLDOWN_MS = 1_000
/** The stated bound for a memory whose embedder never answers, with this test's timings. */
const FAILED_WITHIN_MS = INGEST_MAX_ATTEMPTS * (STALL_TIMEOUT_MS + STALL_COOLDOWN_MS)
/** Room for claims, polls and a loaded machine on top of a stated bound. */
const SLACK_MS = 10_000
/** Seven runs of 16: more than the four workers. */
const ALICE_MEMORIES = 100
const BOB_MEMORIES = 5

const FAIRNESS_JOBS: StartOptions = {
  jobs: { pollIntervalMs: 50, retryBaseMs: 20, maxRetryDelayMs: 200 },
  embeddingPolicy: {
    requestTimeoutMs: STALL_TIMEOUT_MS,
    batchDeadlineMs: 2 * STALL_TIMEOUT_MS,
    stallCooldownMs: STALL_COOLDOWN_MS,
    retryBaseMs: 10,
    maxRetryDelayMs: 200,
  },
}

const statusesOf = async (fixture: MemoryFixture, ids: string[]) =>
  Promise.all(ids.map((id) => memories.getMemory(fixture.server.server.context, fixture.as(fixture.root), id)))

describe.each(ENGINES)("a stalled provider does not starve other users' work (%s)", (engine) => {
  let fixture: MemoryFixture
  let stalled: FakeEmbedder
  let chat: FakeRerankerLlm
  let aliceEmbedder: string
  let aliceSpace: string
  let bobSpace: string
  const context = () => fixture.server.server.context

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAIRNESS_JOBS)
    stalled = await startFakeEmbedder()
    chat = await startFakeRerankerLlm()
    aliceEmbedder = await fixture.registerEmbedder(fixture.alice, {
      displayName: 'alice stalling embedder',
      endpointUrl: stalled.url,
    })
    const bobEmbedder = await fixture.registerEmbedder(fixture.bob)
    // The registrations' probes are answered before Alice's embedder stops answering.
    await waitFor(
      'both probes to be answered',
      () => stalled.requests.length > 0 && fixture.embedder.requests.length > 0,
    )
    aliceSpace = (
      await spaces.createSpace(context(), fixture.as(fixture.alice), {
        name: 'alice',
        spaceEmbedders: [{ embedderId: aliceEmbedder }],
      })
    ).spaceId
    bobSpace = (
      await spaces.createSpace(context(), fixture.as(fixture.bob), {
        name: 'bob',
        spaceEmbedders: [{ embedderId: bobEmbedder }],
      })
    ).spaceId
    stalled.hold()
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
    await stalled?.close()
    await chat?.close()
  })

  it("Bob's memories complete while Alice's embedder stalls; Alice's end FAILED, naming the embedder and the timeout, within the bound", async () => {
    const started = Date.now()
    const alice = await memories.batchCreateMemories(context(), fixture.as(fixture.alice), {
      requests: Array.from({ length: ALICE_MEMORIES }, (_, n) => ({
        spaceId: aliceSpace,
        originalContent: `Alice's fact number ${n}`,
      })),
    })
    const aliceIds = alice.results.map((result) => ('memory' in result ? result.memory.memoryId : ''))
    await waitFor("Alice's ingest to reach her embedder", () => stalled.requests.length > 1)
    const bobStarted = Date.now()
    const bob = await memories.batchCreateMemories(context(), fixture.as(fixture.bob), {
      requests: Array.from({ length: BOB_MEMORIES }, (_, n) => ({ spaceId: bobSpace, originalContent: `Bob's ${n}` })),
    })
    const bobIds = bob.results.map((result) => ('memory' in result ? result.memory.memoryId : ''))

    const bobDone = await waitFor(
      "Bob's memories to complete",
      async () => {
        const done = await statusesOf(fixture, bobIds)
        return done.every((memory) => memory.processingStatus === 'COMPLETED') ? done : undefined
      },
      { timeoutMs: FAILED_WITHIN_MS + SLACK_MS },
    )
    const bobMs = Date.now() - bobStarted
    expect(bobDone.map((memory) => memory.chunkCount)).toEqual(bobIds.map(() => 1))
    // Not one of Bob's memories waited for a request of Alice's to time out.
    expect(bobMs).toBeLessThan(STALL_TIMEOUT_MS)

    const aliceDone = await waitFor(
      "Alice's memories to end",
      async () => {
        const done = await statusesOf(fixture, aliceIds)
        return done.every((memory) => memory.processingStatus === 'FAILED') ? done : undefined
      },
      { timeoutMs: FAILED_WITHIN_MS + SLACK_MS, intervalMs: 500 },
    )
    const aliceMs = Date.now() - started
    expect(aliceMs).toBeLessThan(FAILED_WITHIN_MS + SLACK_MS)
    for (const memory of aliceDone) {
      expect(memory.processingError).toContain(`embedder "alice stalling embedder" (${aliceEmbedder})`)
      expect(memory.processingError).toContain(`no answer within ${STALL_TIMEOUT_MS} ms`)
    }
    // Stalled, the embedder was left alone between trials rather than sent every run's request.
    const aliceRequests = stalled.requests.length - 1
    expect(aliceRequests).toBeLessThanOrEqual(maxRequestsWhileStalled())
    process.stdout.write(
      `[${engine}] Alice's embedder stalled: Bob's ${BOB_MEMORIES} COMPLETED after ${bobMs} ms; Alice's ` +
        `${ALICE_MEMORIES} FAILED after ${aliceMs} ms (bound ${FAILED_WITHIN_MS} ms), ${aliceRequests} requests to her embedder\n`,
    )
    recordFigures({
      scenario: `one user's embedder stalls, another's ingests (${engine})`,
      tried: ALICE_MEMORIES + BOB_MEMORIES,
      failed: 0,
      lost: 0,
      ms: aliceMs,
      notes: `Bob COMPLETED in ${bobMs} ms; Alice FAILED in ${aliceMs} ms (bound ${FAILED_WITHIN_MS} ms)`,
    })
  }, 120_000)

  it("retrieval in Alice's space gives up within the query timeout, naming her embedder, on REST and gRPC", async () => {
    const input = { message: `never asked before ${engine}`, mode: 'VECTOR', spaceKeys: [{ spaceId: aliceSpace }] }
    const timed = async (transport: 'rest' | 'grpc') => {
      const started = Date.now()
      const result = await fixture.call(transport, 'retrieveMemories', input, fixture.alice.apiKey)
      return { ...result, ms: Date.now() - started }
    }
    const answers = await Promise.all([timed('rest'), timed('grpc')])
    for (const answer of answers) {
      expect(answer.status).toBe('UNAVAILABLE')
      expect(answer.message).toContain(`embedder "alice stalling embedder" (${aliceEmbedder})`)
      expect(answer.message).toContain(`no answer within ${QUERY_PROVIDER_TIMEOUT_MS} ms`)
      expect(answer.ms).toBeLessThan(QUERY_PROVIDER_TIMEOUT_MS + 5_000)
    }
    expect(answers[0]!.rawStatus).toBe(503)
    process.stdout.write(
      `[${engine}] retrieval with a stalled embedder: REST ${answers[0]!.ms} ms, gRPC ${answers[1]!.ms} ms: ${answers[0]!.message}\n`,
    )
  }, 60_000)

  it('retrieval with a stalled reranker gives up within the query timeout, naming the reranker, on REST and gRPC', async () => {
    const reranker = await createReranker(context(), fixture.as(fixture.bob), {
      displayName: 'bob stalling reranker',
      providerType: 'TEI',
      endpointUrl: chat.url,
      modelIdentifier: 'rerank',
    })
    // The registration's probe is answered first: the stalls are for the retrievals.
    await waitFor("the reranker's probe to be answered", () => chat.requests.length > 0)
    chat.plan({ kind: 'stall' }, { kind: 'stall' })
    const input = {
      message: "Bob's memories",
      mode: 'HYBRID',
      spaceKeys: [{ spaceId: bobSpace }],
      postProcessor: { rerankerId: reranker.rerankerId },
    }
    const timed = async (transport: 'rest' | 'grpc') => {
      const started = Date.now()
      const result = await fixture.call(transport, 'retrieveMemories', input, fixture.bob.apiKey)
      return { ...result, ms: Date.now() - started }
    }
    const answers = await Promise.all([timed('rest'), timed('grpc')])
    for (const answer of answers) {
      expect(answer.status).toBe('UNAVAILABLE')
      expect(answer.message).toContain(`reranker "bob stalling reranker" (${reranker.rerankerId})`)
      expect(answer.message).toContain(`no answer within ${QUERY_PROVIDER_TIMEOUT_MS} ms`)
      expect(answer.ms).toBeLessThan(QUERY_PROVIDER_TIMEOUT_MS + 5_000)
    }
    process.stdout.write(
      `[${engine}] retrieval with a stalled reranker: REST ${answers[0]!.ms} ms, gRPC ${answers[1]!.ms} ms: ${answers[0]!.message}\n`,
    )
  }, 60_000)
})

/**
 * At most this many requests reach a stalled embedder while its memories fail: the first
 * runs (a lane's share of the workers) and then one trial after each cool-down.
 */
function maxRequestsWhileStalled(): number {
  const trials = Math.ceil(FAILED_WITHIN_MS / (STALL_TIMEOUT_MS + STALL_COOLDOWN_MS))
  return maxRunsPerLane(DEFAULT_JOB_OPTIONS.concurrency) + trials
}
