// One tenant's attacks do not take the server from another (issue 30). Against the built executable in
// its own process on PostgreSQL, three attacks run at once for SOAK_MS:
//   - Alice's embedding provider stalls (it never answers): her memories ingest and her retrievals run;
//   - Mallory opens retrievals of large memory content (chunking `none`, ~380 KB each) and never reads them;
//   - Mallory runs concurrent retrievals of that content as fast as they are answered.
// Bob, on a healthy provider, measures what he gets before and during: reads of his space, retrievals, and
// memories ingested from create to COMPLETED. /livez is polled throughout, and the server's RSS sampled.
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../support/databases.js'
import {
  createSandbox,
  killAllProcesses,
  type Sandbox,
  type ServerProcess,
  servePlaintextOnPostgres,
} from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { callJson } from '../support/http-client.js'
import { probeLivezFromChild } from '../support/livez-probe.js'

const KIB = 1024
const SOAK_MS = 30_000
const LARGE_MEMORIES = 40
const LARGE_MEMORY_BYTES = 380 * KIB
const SLOW_READERS = 20
const CONTENT_RETRIEVERS = 4
/** The bound for /livez under attack. */
const LIVEZ_BOUND_MS = 1_000
/** Bob's p99 for a read of his own space, under attack. */
const BOB_READ_P99_BOUND_MS = 1_000
/** Bob's p99 for a retrieval in his own space, under attack. */
const BOB_RETRIEVAL_P99_BOUND_MS = 2_000
/** Bob's memories reach COMPLETED within this while Alice's provider stalls (it took ~2.5 min before). */
const BOB_INGEST_BOUND_MS = 20_000
/** Alice's retrieval gives up on her stalled provider within this, naming it (30 s before). */
const ALICE_RETRIEVAL_BOUND_MS = 12_000
/** The server's RSS during the soak (20 readers that never read once held 1.1 GB). */
const RSS_BOUND_KB = 1_024 * KIB

const percentile = (values: number[], share: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('one tenant cannot take the server from another', () => {
  let sandbox: Sandbox
  let database: TestDatabase
  let stalled: FakeEmbedder
  let healthy: FakeEmbedder
  let releaseStalled: () => void
  let server: ServerProcess
  const keys: Record<'root' | 'alice' | 'bob' | 'mallory', string> = { root: '', alice: '', bob: '', mallory: '' }
  const spaces: Record<'alice' | 'bob' | 'mallory', string> = { alice: '', bob: '', mallory: '' }

  const call = (method: string, path: string, key: string, body?: unknown) =>
    callJson(method, `${server.restBase}${path}`, key, body)
  const timed = async <T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> => {
    const started = performance.now()
    const result = await work()
    return { ms: performance.now() - started, result }
  }
  const retrieval = (spaceId: string, extra: Record<string, unknown> = {}) => ({
    message: 'alpha beta',
    spaceKeys: [{ spaceId }],
    ...extra,
  })

  async function newUser(name: string): Promise<string> {
    const user = await call('POST', '/v1/users', keys.root, { username: name })
    return (await call('POST', '/v1/apikeys', keys.root, { ownerId: user.json.userId })).json.rawApiKey
  }
  async function newSpace(key: string, embedder: FakeEmbedder, chunking?: unknown): Promise<string> {
    const created = await call('POST', '/v1/embedders', key, {
      displayName: `embedder ${Math.random()}`,
      providerType: 'TEI',
      endpointUrl: embedder.url,
      modelIdentifier: 'm',
      dimensionality: embedder.dimensions,
    })
    const space = await call('POST', '/v1/spaces', key, {
      name: `space ${Math.random()}`,
      spaceEmbedders: [{ embedderId: created.json.embedderId }],
      ...(chunking ? { defaultChunkingConfig: chunking } : {}),
    })
    return space.json.spaceId
  }
  async function completed(key: string, memoryIds: string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (const memoryId of memoryIds) {
      for (;;) {
        const memory = (await call('GET', `/v1/memories/${memoryId}`, key)).json
        if (memory.processingStatus === 'COMPLETED') break
        if (memory.processingStatus === 'FAILED') throw new Error(`memory failed: ${memory.processingError}`)
        if (Date.now() > deadline) throw new Error(`memory ${memoryId} still ${memory.processingStatus}`)
        await sleep(100)
      }
    }
  }
  /** Bob's measures: reads of his space, retrievals in it, and one memory from create to COMPLETED. */
  async function measureBob(rounds: number) {
    const reads: number[] = []
    const retrievals: number[] = []
    const ingests: number[] = []
    for (let round = 0; round < rounds; round++) {
      reads.push((await timed(() => call('GET', `/v1/spaces/${spaces.bob}`, keys.bob))).ms)
      const retrieved = await timed(() => call('POST', '/v1/memories:retrieve', keys.bob, retrieval(spaces.bob)))
      expect(retrieved.result.status).toBe(200)
      retrievals.push(retrieved.ms)
      const ingest = await timed(async () => {
        const memory = await call('POST', '/v1/memories', keys.bob, {
          spaceId: spaces.bob,
          originalContent: `alpha beta note ${round} ${Math.random()}`,
        })
        await completed(keys.bob, [memory.json.memoryId], BOB_INGEST_BOUND_MS)
      })
      ingests.push(ingest.ms)
    }
    return { reads, retrievals, ingests }
  }

  beforeAll(async () => {
    sandbox = createSandbox()
    database = await createTestDatabase()
    stalled = await startFakeEmbedder()
    healthy = await startFakeEmbedder()
    server = await servePlaintextOnPostgres(sandbox, database.jdbcUrl)
    keys.root = (await call('POST', '/v1/system/init', '')).json.rootApiKey
    keys.alice = await newUser('alice')
    keys.bob = await newUser('bob')
    keys.mallory = await newUser('mallory')
    spaces.alice = await newSpace(keys.alice, stalled)
    spaces.bob = await newSpace(keys.bob, healthy)
    spaces.mallory = await newSpace(keys.mallory, healthy, { none: {} })
    const large = await call('POST', '/v1/memories:batchCreate', keys.mallory, {
      requests: Array.from({ length: LARGE_MEMORIES }, (_, index) => ({
        spaceId: spaces.mallory,
        originalContent: `alpha beta ${index} ${'lorem ipsum dolor '.repeat(LARGE_MEMORY_BYTES / 18)}`,
      })),
    })
    expect(large.status).toBe(200)
    const ids = large.json.results.map((result: any) => result.memory.memoryId)
    await completed(keys.mallory, ids, 120_000)
  }, 240_000)

  afterAll(async () => {
    releaseStalled?.()
    await server?.stop()
    killAllProcesses()
    await stalled?.close()
    await healthy?.close()
    await database?.drop()
    sandbox?.remove()
  })

  it(`Bob's reads, retrievals and ingestion stay within bounds while Alice's provider stalls and Mallory's large answers pile up (${SOAK_MS / 1000} s)`, async () => {
    const baseline = await measureBob(10)
    const baselineKb = server.rssKb()

    // The attacks.
    const livez = probeLivezFromChild(server.restBase)
    releaseStalled = stalled.hold()
    let attacking = true
    const sockets: net.Socket[] = []
    const aliceRetrievals: { ms: number; status: number; text: string }[] = []
    const contentAnswers = new Map<number, number>()
    let slowestLivezMs = 0
    let peakKb = baselineKb
    const attacks = [
      (async () => {
        const memories = await call('POST', '/v1/memories:batchCreate', keys.alice, {
          requests: Array.from({ length: 20 }, (_, index) => ({
            spaceId: spaces.alice,
            originalContent: `stuck ${index}`,
          })),
        })
        expect(memories.status).toBe(200)
        while (attacking) {
          const { ms, result } = await timed(() =>
            call('POST', '/v1/memories:retrieve', keys.alice, retrieval(spaces.alice)),
          )
          aliceRetrievals.push({ ms, status: result.status, text: result.text })
        }
      })(),
      (async () => {
        const body = JSON.stringify(retrieval(spaces.mallory, { requestedSize: 100, fetchMemoryContent: true }))
        const port = new URL(server.restBase).port
        for (let index = 0; index < SLOW_READERS; index++) {
          const socket = net.connect(Number(port), '127.0.0.1', () => {
            socket.write(
              `POST /v1/memories:retrieve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.mallory}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            )
            socket.pause()
          })
          socket.on('error', () => {})
          sockets.push(socket)
        }
      })(),
      ...Array.from({ length: CONTENT_RETRIEVERS }, async () => {
        while (attacking) {
          const answer = await call(
            'POST',
            '/v1/memories:retrieve',
            keys.mallory,
            retrieval(spaces.mallory, { requestedSize: 100, fetchMemoryContent: true }),
          ).catch(() => undefined)
          if (!answer) continue
          contentAnswers.set(answer.status, (contentAnswers.get(answer.status) ?? 0) + 1)
          if (answer.status !== 200) {
            expect([429, 503]).toContain(answer.status)
            expect(answer.headers.get('retry-after')).toMatch(/^\d+$/)
            await sleep(Number(answer.headers.get('retry-after')) * 1000)
          }
        }
      }),
      (async () => {
        while (attacking) {
          peakKb = Math.max(peakKb, server.rssKb())
          await sleep(50)
        }
      })(),
    ]
    await sleep(2_000)
    const underAttack = await measureBob(10)
    const remaining = SOAK_MS - 2_000
    const more = await (async () => {
      const started = Date.now()
      const extra = { reads: [] as number[], retrievals: [] as number[], ingests: [] as number[] }
      while (Date.now() - started < remaining) {
        const round = await measureBob(1)
        extra.reads.push(...round.reads)
        extra.retrievals.push(...round.retrievals)
        extra.ingests.push(...round.ingests)
      }
      return extra
    })()
    attacking = false
    for (const socket of sockets) socket.destroy()
    await Promise.all(attacks)
    const livezFigures = await livez.stop()
    slowestLivezMs = livezFigures.slowestMs

    const during = {
      reads: [...underAttack.reads, ...more.reads],
      retrievals: [...underAttack.retrievals, ...more.retrievals],
      ingests: [...underAttack.ingests, ...more.ingests],
    }
    const row = (what: string, before: number[], after: number[]) =>
      `| ${what} | ${percentile(before, 0.5).toFixed(0)} / ${percentile(before, 0.99).toFixed(0)} | ${percentile(after, 0.5).toFixed(0)} / ${percentile(after, 0.99).toFixed(0)} | ${after.length} |`
    console.log(
      [
        `Tenant isolation soak, ${SOAK_MS / 1000} s: Bob's p50 / p99 in ms, alone and under attack`,
        '| Bob | alone | under attack | samples |',
        '|---|---|---|---|',
        row('GET his space', baseline.reads, during.reads),
        row('retrieval', baseline.retrievals, during.retrievals),
        row('memory create → COMPLETED', baseline.ingests, during.ingests),
        `slowest /livez ${slowestLivezMs.toFixed(0)} ms; server RSS ${(baselineKb / KIB).toFixed(0)} → peak ${(peakKb / KIB).toFixed(0)} MiB`,
        `Alice's retrievals: ${aliceRetrievals.length}, slowest ${Math.max(...aliceRetrievals.map((a) => a.ms)).toFixed(0)} ms; Mallory's content retrievals by status: ${JSON.stringify(Object.fromEntries(contentAnswers))}`,
      ].join('\n'),
    )

    expect(slowestLivezMs).toBeLessThan(LIVEZ_BOUND_MS)
    expect(percentile(during.reads, 0.99)).toBeLessThan(BOB_READ_P99_BOUND_MS)
    expect(percentile(during.retrievals, 0.99)).toBeLessThan(BOB_RETRIEVAL_P99_BOUND_MS)
    expect(Math.max(...during.ingests)).toBeLessThan(BOB_INGEST_BOUND_MS)
    expect(peakKb).toBeLessThan(RSS_BOUND_KB)
    expect(contentAnswers.get(200) ?? 0).toBeGreaterThan(0)
    // Alice learns that her provider stalls, promptly and by name.
    expect(aliceRetrievals.length).toBeGreaterThan(0)
    for (const answer of aliceRetrievals) {
      expect(answer.ms).toBeLessThan(ALICE_RETRIEVAL_BOUND_MS)
    }
  }, 180_000)
})
