// `npm run bench -- --memory`: the memory core's performance anchors (bench/README.md,
// "The memory benchmark"), each as memsvc divided by a floor measured in the same run where
// there is one. One space of one-chunk memories, 384 dimensions, a local embedding
// server in this process that answers at once (test/support/fake-embedder.ts).
//
//   1. create-memory latency p50 with nothing stored;
//   2. ingestion floor: postgres.js writes the first 10 % of the corpus (memory rows,
//      chunks, vectors) into a second embedder's space, whose HNSW index starts empty too,
//      one memory per transaction; then again into a third, as many memories per
//      transaction as memsvc's ingest runs together (reported without a target);
//   3. memsvc ingests the whole corpus through REST batch create, time per tenth;
//   4. create-memory latency p50 with the corpus stored;
//   5. VECTOR retrieval against the same nearest-neighbour SQL through postgres.js,
//      alternating; HYBRID beside it;
//   6. recall@10 of VECTOR retrieval against exact search (sequential scan).
import fs from 'node:fs'
import path from 'node:path'
import postgres from 'postgres'
import { pipelinedTransaction } from '../../src/db/database.js'
import { SEARCH_TEXT_CHARS } from '../../src/db/sql/retrieval.js'
import { indexedVectorType } from '../../src/db/vector-storage.js'
import { INGEST_BATCH_LIMIT } from '../../src/jobs/handlers/memory-ingest.js'
import { type FakeEmbedder, hashedBagOfWords, startFakeEmbedder } from '../../test/support/fake-embedder.js'
import type { BenchDatabase } from '../lib/database.js'
import { cpuSeconds } from '../lib/machine.js'
import { type MemoryCorpus, memoryCorpus } from '../lib/memory-corpus.js'
import type { RunningServer } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import { backendCpuBetween, backendCpuSeconds } from '../lib/postgres-cpu.js'
import { sleep } from '../lib/processes.js'
import { inspectorUrl, profileWindow } from '../lib/profile-window.js'
import type { ReportRow } from '../lib/report.js'
import { latencySummary, percentile } from '../lib/stats.js'
import type { Retriever } from './memory-retriever.js'

export const DIMENSIONS = 384
/** Memories per REST batch create (the API takes up to 500). */
const INGEST_BATCH = 50
/** Memories created but not yet COMPLETED that the driver allows: enough to keep every job worker busy, not a growing backlog. */
const INGEST_WINDOW = 400
/**
 * How often the driver asks PostgreSQL which memories are done. Each poll looks up every
 * memory in the window: at 20 ms those lookups took PostgreSQL CPU that memsvc's own
 * ingest then lacked (the floor polls nothing).
 */
const INGEST_POLL_MS = 250
/** Waiting for one memory's ingest between latency probes. */
const SETTLE_POLL_MS = 5
/** memsvc's job concurrency (src/jobs/job-processor.ts DEFAULT_JOB_OPTIONS): the floor writes as many memories at once. */
export const FLOOR_WRITERS = 4
/** Chunks the floor writes again once memsvc's index holds the whole corpus: its own rate at that size. */
const FLOOR_AT_END_CHUNKS = 2_000
const QUICK_FLOOR_AT_END_CHUNKS = 200
/** Tenths of the corpus: flatness compares the last one with the first. */
const SLICES = 10
const CREATE_SAMPLES = 200
const QUICK_CREATE_SAMPLES = 20
/** Retrieval clients in flight, on both sides. */
const RETRIEVAL_CONCURRENCY = 4
const QUERIES = 100
const QUICK_QUERIES = 20
const RECALL_K = 10
/** Distances equal to the k-th exact one within this count as hits (pgvector computes in float4). */
const DISTANCE_TOLERANCE = 1e-6
const INGEST_TARGET = 0.5
const FLATNESS_TARGET = 0.8
const CREATE_LATENCY_TARGET = 0.8
const RETRIEVAL_TARGET = 0.8
const RECALL_TARGET = 0.95
/** Without a reply for this long the ingest is stuck: fail the run rather than wait forever. */
const INGEST_STALL_MS = 120_000

export interface MemoryBenchContext {
  options: BenchOptions
  server: RunningServer
  database: BenchDatabase
  /** A USER-role key that owns the embedders and spaces. */
  userKey: string
  userId: string
  /** Retrieval through memsvc (REST, or the domain function while the REST route is missing). */
  retriever: (space: { spaceId: string }) => Promise<Retriever>
  /** With --cpu-prof: where the profile of memsvc's first VECTOR run goes (through its inspector). */
  profileDir?: string
}

export interface MemoryBenchDetails {
  chunks: number
  sliceRates: number[]
  createLatencyMs: { empty: number[]; full: number[] }
  retrieval: Record<string, unknown>
  recall: { vector: number; floorSql: number; queries: number }
  notes: string[]
}

export async function call<T>(
  restUrl: string,
  method: string,
  urlPath: string,
  key: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${restUrl}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${text.slice(0, 500)}`)
  return JSON.parse(text) as T
}

async function createEmbedderAndSpace(
  context: MemoryBenchContext,
  embedder: FakeEmbedder,
  name: string,
): Promise<{ embedderId: string; spaceId: string }> {
  const { restUrl } = context.server
  const { embedderId } = await call<{ embedderId: string }>(restUrl, 'POST', '/v1/embedders', context.userKey, {
    displayName: `bench ${name}`,
    providerType: 'TEI',
    endpointUrl: embedder.url,
    modelIdentifier: `hashed-bow-${name}`,
    dimensionality: DIMENSIONS,
  })
  const { spaceId } = await call<{ spaceId: string }>(restUrl, 'POST', '/v1/spaces', context.userKey, {
    name: `bench ${name}`,
    spaceEmbedders: [{ embedderId, defaultRetrievalWeight: 1 }],
  })
  return { embedderId, spaceId }
}

/**
 * Single creates one after another; milliseconds each, sorted. Each memory's ingest is
 * let finish (untimed) before the next create, so what is timed is the create itself, not
 * the create competing with the previous memory's embedding and indexing for the cores.
 */
async function createLatencies(
  context: MemoryBenchContext,
  sql: postgres.Sql,
  spaceId: string,
  texts: string[],
): Promise<number[]> {
  const latencies: number[] = []
  for (const text of texts) {
    const started = performance.now()
    const { memoryId } = await call<{ memoryId: string }>(
      context.server.restUrl,
      'POST',
      '/v1/memories',
      context.userKey,
      { spaceId, originalContent: text },
    )
    latencies.push(performance.now() - started)
    const settledBy = performance.now() + INGEST_STALL_MS
    while (
      (await sql`select 1 from memories where id = ${memoryId} and status in ('COMPLETED', 'FAILED')`).length === 0
    ) {
      if (performance.now() > settledBy)
        throw new Error(`memory ${memoryId} did not finish ingesting within ${INGEST_STALL_MS / 1000} s`)
      await sleep(SETTLE_POLL_MS)
    }
  }
  return latencies.sort((a, b) => a - b)
}

/**
 * The floor: what storing the corpus costs PostgreSQL itself. Per memory, one transaction
 * writing the memory row (COMPLETED), its chunk and its vector, FLOOR_WRITERS at once;
 * the vectors computed beforehand, outside the timing.
 */
export async function floorIngest(
  sql: postgres.Sql,
  corpus: MemoryCorpus,
  target: { spaceId: string; embedderId: string; userId: string },
  count: number,
  firstChunk = 0,
): Promise<number> {
  const rows = Array.from({ length: count }, (_, index) => {
    const text = corpus.chunk(firstChunk + index)
    return { text, vector: `[${hashedBagOfWords(text, DIMENSIONS).join(',')}]` }
  })
  let next = 0
  const started = performance.now()
  const writer = async () => {
    for (let index = next++; index < count; index = next++) {
      const { text, vector } = rows[index]!
      const memoryId = crypto.randomUUID()
      const chunkId = crypto.randomUUID()
      // The three inserts pipelined, in order (sent as awaited), as memsvc sends its own.
      await sql.begin((tx) => [
        tx`
          insert into memories (id, space_id, content, content_type, content_sha256, metadata, chunking, status, chunk_count, created_at, updated_at, created_by, updated_by)
          values (${memoryId}, ${target.spaceId}, ${text}, 'text/plain', sha256(convert_to(${text}, 'UTF8')), '{}', '{"strategy":"NONE"}', 'COMPLETED', 1, now(), now(), ${target.userId}, ${target.userId})`,
        tx`
          insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
          select id, ${memoryId}, ${target.spaceId}, chunk_index, text, start_offset, end_offset
          from unnest(${[chunkId]}::uuid[], ${[0]}::int[], ${[text]}::text[], ${[0]}::int[], ${[text.length]}::int[]) as input (id, chunk_index, text, start_offset, end_offset)`,
        tx`
          insert into chunk_vectors (chunk_id, embedder_id, space_id, memory_id, embedding)
          select chunk_id, embedder_id, ${target.spaceId}, ${memoryId}, embedding::vector
          from unnest(${[chunkId]}::uuid[], ${[target.embedderId]}::uuid[], ${[vector]}::text[]) as input (chunk_id, embedder_id, embedding)`,
      ])
    }
  }
  await Promise.all(Array.from({ length: FLOOR_WRITERS }, writer))
  return count / ((performance.now() - started) / 1000)
}

/**
 * The floor written the way memsvc's ingest now writes: INGEST_BATCH_LIMIT memories per
 * transaction (their memory rows, chunks and vectors, one statement each),
 * FLOOR_WRITERS transactions at once. Reported beside the per-memory floor, without a
 * target: what PostgreSQL alone does with memsvc's batching.
 */
export async function batchedFloorIngest(
  sql: postgres.Sql,
  corpus: MemoryCorpus,
  target: { spaceId: string; embedderId: string; userId: string },
  count: number,
): Promise<number> {
  const rows = Array.from({ length: count }, (_, index) => {
    const text = corpus.chunk(index)
    return {
      memoryId: crypto.randomUUID(),
      chunkId: crypto.randomUUID(),
      text,
      vector: `[${hashedBagOfWords(text, DIMENSIONS).join(',')}]`,
    }
  })
  let next = 0
  const started = performance.now()
  const writer = async () => {
    for (let first = next; first < count; first = next) {
      next = first + INGEST_BATCH_LIMIT
      const batch = rows.slice(first, next)
      const memoryIds = batch.map((row) => row.memoryId)
      const chunkIds = batch.map((row) => row.chunkId)
      const texts = batch.map((row) => row.text)
      await sql.begin((tx) => [
        tx`
          insert into memories (id, space_id, content, content_type, content_sha256, metadata, chunking, status, chunk_count, created_at, updated_at, created_by, updated_by)
          select id, ${target.spaceId}, text, 'text/plain', sha256(convert_to(text, 'UTF8')), '{}', '{"strategy":"NONE"}', 'COMPLETED', 1, now(), now(), ${target.userId}, ${target.userId}
          from unnest(${memoryIds}::uuid[], ${texts}::text[]) as input (id, text)`,
        tx`
          insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
          select id, memory_id, ${target.spaceId}, 0, text, 0, length(text)
          from unnest(${chunkIds}::uuid[], ${memoryIds}::uuid[], ${texts}::text[]) as input (id, memory_id, text)`,
        tx`
          insert into chunk_vectors (chunk_id, embedder_id, space_id, memory_id, embedding)
          select chunk_id, ${target.embedderId}, ${target.spaceId}, memory_id, embedding::vector
          from unnest(${chunkIds}::uuid[], ${memoryIds}::uuid[], ${batch.map((row) => row.vector)}::text[]) as input (chunk_id, memory_id, embedding)`,
      ])
    }
  }
  await Promise.all(Array.from({ length: FLOOR_WRITERS }, writer))
  return count / ((performance.now() - started) / 1000)
}

/**
 * memsvc ingests chunks [0, count) through REST batch create, keeping INGEST_WINDOW
 * memories in flight, and reports the chunks per second of each tenth (by completion time).
 */
export async function productIngest(
  context: Pick<MemoryBenchContext, 'server' | 'userKey'>,
  sql: postgres.Sql,
  corpus: MemoryCorpus,
  spaceId: string,
  count: number,
): Promise<{ sliceRates: number[]; rate: number; failed: number }> {
  const sliceSize = Math.ceil(count / SLICES)
  const boundaries: number[] = []
  const pending = new Set<string>()
  let created = 0
  let completed = 0
  let failed = 0
  let lastProgress = performance.now()
  const started = performance.now()
  const inFlight = new Set<Promise<void>>()
  let lastPoll = 0
  const poll = async () => {
    if (pending.size === 0 || performance.now() - lastPoll < INGEST_POLL_MS) return
    lastPoll = performance.now()
    const done = await sql<
      Array<{ id: string; status: string }>
    >`select id, status from memories where id = any(${[...pending]}::uuid[]) and status in ('COMPLETED', 'FAILED')`
    for (const row of done) {
      pending.delete(row.id)
      completed++
      if (row.status === 'FAILED') failed++
      while (boundaries.length < SLICES && completed >= Math.min(count, (boundaries.length + 1) * sliceSize))
        boundaries.push(performance.now())
    }
    if (done.length > 0) lastProgress = performance.now()
    else if (performance.now() - lastProgress > INGEST_STALL_MS)
      throw new Error(`ingest made no progress for ${INGEST_STALL_MS / 1000} s (${completed} of ${count} done)`)
  }
  while (completed < count) {
    while (created < count && pending.size + INGEST_BATCH <= INGEST_WINDOW && inFlight.size < 2) {
      const first = created
      const size = Math.min(INGEST_BATCH, count - first)
      created += size
      const requests = Array.from({ length: size }, (_, offset) => ({
        spaceId,
        originalContent: corpus.chunk(first + offset),
      }))
      const sent = call<{ results: Array<{ memory?: { memoryId: string }; error?: unknown }> }>(
        context.server.restUrl,
        'POST',
        '/v1/memories:batchCreate',
        context.userKey,
        { requests },
      ).then((answer) => {
        for (const result of answer.results) {
          if (!result.memory) throw new Error(`batch create item failed: ${JSON.stringify(result.error)}`)
          pending.add(result.memory.memoryId)
        }
      })
      const tracked = sent.finally(() => inFlight.delete(tracked))
      inFlight.add(tracked)
    }
    await Promise.race([sleep(Math.max(1, lastPoll + INGEST_POLL_MS - performance.now())), ...inFlight])
    await poll()
  }
  await Promise.all(inFlight)
  const sliceRates = boundaries.map((at, index) => {
    const from = index === 0 ? started : boundaries[index - 1]!
    const chunks = Math.min(count, (index + 1) * sliceSize) - index * sliceSize
    return chunks / ((at - from) / 1000)
  })
  return { sliceRates, rate: count / ((performance.now() - started) / 1000), failed }
}

export interface LoadRun {
  rate: number
  p50Ms?: number
  p99Ms?: number
  errors: number
  /**
   * CPU µs per answered request, of memsvc's process (absent on the floor's side, which runs
   * in this process), of the PostgreSQL backends serving the benchmark's database, and of
   * this process (the load clients, and on the floor's side the floor itself). PostgreSQL
   * is unpinned and shares the cores with both, so whatever one side spends here the
   * search cannot.
   */
  cpuUs: { server?: number; database: number; harness: number }
}

const US_PER_SECOND = 1_000_000

/** `clients` send queries round-robin for `seconds`; `serverPid` is memsvc's when it is the side measured. */
export async function closedLoop(
  database: postgres.Sql,
  seconds: number,
  queries: number,
  send: (index: number) => Promise<void>,
  serverPid?: number,
  clients = RETRIEVAL_CONCURRENCY,
): Promise<LoadRun> {
  const latenciesUs: number[] = []
  let errors = 0
  let next = 0
  const deadline = performance.now() + seconds * 1000
  const client = async () => {
    while (performance.now() < deadline) {
      const index = next++ % queries
      const started = performance.now()
      try {
        await send(index)
        latenciesUs.push((performance.now() - started) * 1000)
      } catch {
        errors++
      }
    }
  }
  const serverBefore = serverPid === undefined ? undefined : cpuSeconds(serverPid)
  const databaseBefore = await backendCpuSeconds(database)
  const harnessBefore = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, client))
  const elapsed = (performance.now() - started) / 1000
  const harness = process.cpuUsage(harnessBefore)
  const serverAfter = serverPid === undefined ? undefined : cpuSeconds(serverPid)
  const databaseUsed = backendCpuBetween(databaseBefore, await backendCpuSeconds(database)).seconds
  const perRequest = (seconds: number) => (seconds * US_PER_SECOND) / Math.max(1, latenciesUs.length)
  return {
    rate: latenciesUs.length / elapsed,
    ...latencySummary(latenciesUs),
    errors,
    cpuUs: {
      server:
        serverBefore === undefined || serverAfter === undefined ? undefined : perRequest(serverAfter - serverBefore),
      database: perRequest(databaseUsed),
      harness: (harness.user + harness.system) / Math.max(1, latenciesUs.length),
    },
  }
}

/** What each side's requests cost in CPU, for the row's notes. */
function cpuNote(side: string, run: LoadRun): string {
  const parts = [
    ...(run.cpuUs.server === undefined ? [] : [`memsvc ${Math.round(run.cpuUs.server)}`]),
    `PostgreSQL ${Math.round(run.cpuUs.database)}`,
    `the harness process ${Math.round(run.cpuUs.harness)}`,
  ]
  return `${side}: CPU µs per request: ${parts.join(', ')}`
}

/**
 * The statement of src/db/sql/retrieval.ts nearestChunks (unfiltered), text for text, sent
 * the same way: the settings beside the search in one transaction written in one round
 * trip (memsvc's own pipelinedTransaction, src/db/database.ts), the embedder id
 * written in, the found chunks' text and offsets joined in the outer select (memsvc's
 * answer needs them, so its search reads them); the empty fragment stands where memsvc
 * puts a metadata filter's join. Only the query embedding differs: here it is computed
 * beforehand. Change both together, so the ratio compares the same SQL.
 */
function floorNearest(sql: postgres.Sql, target: { spaceId: string; embedderId: string }, settings: string) {
  const indexed = sql.unsafe(indexedVectorType(DIMENSIONS))
  const stored = sql.unsafe(`vector(${DIMENSIONS})`)
  const embedder = sql.unsafe(`'${target.embedderId}'`)
  return async (embedding: string, limit: number) => {
    const [, rows] = await pipelinedTransaction<[unknown, Array<{ chunk_id: string; score: number; text: string }>]>(
      sql as never,
      (tx) => [
        tx.unsafe(settings),
        tx<Array<{ chunk_id: string; score: number; text: string }>>`
        with nearest as materialized (
          select v.chunk_id, v.memory_id, v.embedding::${stored} <=> ${embedding}::${stored} as score
          from chunk_vectors v
          ${tx``}
          where v.embedder_id = ${embedder} and v.space_id = ${target.spaceId}
          order by v.embedding::${indexed} <=> ${embedding}::${indexed}
          limit ${limit}
        )
        select n.chunk_id, n.memory_id, n.score::float8 as score, left(c.text, ${SEARCH_TEXT_CHARS}) as text,
          octet_length(c.text) as text_bytes, c.start_offset, c.end_offset
        from nearest n join chunks c on c.id = n.chunk_id
        order by n.score, n.chunk_id`,
      ],
    )
    return rows
  }
}

/**
 * What the ingest wrote beside PostgreSQL's buffer cache: once the vectors and their HNSW
 * graph outgrow it, each insert reads pages back from the operating system, which is where
 * the last tenths of the ingest slow down.
 */
async function storageSizes(sql: postgres.Sql): Promise<string> {
  const [sizes] = await sql<Array<{ vectors: string; hnsw: string; chunks: string; sharedBuffers: string }>>`
    select
      pg_size_pretty(pg_table_size('chunk_vectors')) as vectors,
      pg_size_pretty(coalesce((
        select sum(pg_relation_size(i.indexrelid)) from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = 'chunk_vectors'::regclass and c.relname like 'chunk_vectors_hnsw_%'), 0)::bigint) as hnsw,
      pg_size_pretty(pg_total_relation_size('chunks')) as chunks,
      current_setting('shared_buffers') as "sharedBuffers"`
  return `storage after the ingest: chunk_vectors ${sizes!.vectors}, its HNSW index ${sizes!.hnsw}, chunks with their indexes ${sizes!.chunks}; PostgreSQL's shared_buffers ${sizes!.sharedBuffers}`
}

export function ratioRow(
  id: string,
  measure: string,
  floor: string,
  product: LoadRun,
  floorRun: LoadRun,
  target: number,
  notes: string[] = [],
): ReportRow {
  const ratio = product.rate / floorRun.rate
  return {
    id,
    measure,
    value: product.rate,
    unit: '/s',
    floor,
    floorValue: floorRun.rate,
    ratio,
    target,
    pass: ratio >= target && product.errors === 0,
    p50Ms: product.p50Ms,
    p99Ms: product.p99Ms,
    floorP50Ms: floorRun.p50Ms,
    floorP99Ms: floorRun.p99Ms,
    cpuUs: product.cpuUs.server,
    notes: [
      ...notes,
      cpuNote('memsvc', product),
      cpuNote('floor', floorRun),
      ...(product.errors > 0 ? [`${product.errors} failed requests`] : []),
    ],
  }
}

/** The exact k-th smallest distance (sequential scan, no index): what a returned chunk must not exceed. */
async function exactKth(
  sql: postgres.Sql,
  target: { spaceId: string; embedderId: string },
  embedding: string,
): Promise<number | undefined> {
  const type = sql.unsafe(`vector(${DIMENSIONS})`)
  const exact = await sql.begin(async (tx) => {
    await tx.unsafe('set local enable_indexscan = off')
    await tx.unsafe('set local enable_bitmapscan = off')
    return tx<Array<{ score: number }>>`
      select (v.embedding::${type} <=> ${embedding}::${type})::float8 as score from chunk_vectors v
      where v.embedder_id = ${target.embedderId} and v.space_id = ${target.spaceId}
      order by 1 limit ${RECALL_K}`
  })
  return exact.length < RECALL_K ? undefined : exact[exact.length - 1]!.score
}

/** Tie-aware recall@k: a returned chunk is a hit when it is no farther than the exact k-th. */
async function recallOf(
  sql: postgres.Sql,
  target: { spaceId: string; embedderId: string },
  embedding: string,
  kth: number | undefined,
  returned: string[],
): Promise<number> {
  if (kth === undefined) return 1
  const type = sql.unsafe(`vector(${DIMENSIONS})`)
  const distances =
    returned.length === 0
      ? []
      : await sql<Array<{ score: number }>>`
    select (v.embedding::${type} <=> ${embedding}::${type})::float8 as score from chunk_vectors v
    where v.embedder_id = ${target.embedderId} and v.chunk_id = any(${returned}::uuid[])`
  return Math.min(RECALL_K, distances.filter((row) => row.score <= kth + DISTANCE_TOLERANCE).length) / RECALL_K
}

export async function memoryBench(
  context: MemoryBenchContext,
  count: number,
  log: (line: string) => void,
): Promise<{ rows: ReportRow[]; details: MemoryBenchDetails }> {
  const { options, database } = context
  const rows: ReportRow[] = []
  const notes: string[] = []
  const corpus = memoryCorpus()
  const embedder = await startFakeEmbedder({ dimensions: DIMENSIONS })
  const sql = postgres(database.url, { max: options.poolMax, onnotice: () => {} })
  try {
    const product = await createEmbedderAndSpace(context, embedder, 'memsvc')
    const floorTarget = { ...(await createEmbedderAndSpace(context, embedder, 'floor')), userId: context.userId }
    const batchedFloorTarget = {
      ...(await createEmbedderAndSpace(context, embedder, 'floor-batched')),
      userId: context.userId,
    }
    const createSamples = options.quick ? QUICK_CREATE_SAMPLES : CREATE_SAMPLES
    // Texts beyond the corpus, so the latency probes never repeat a stored chunk.
    const extra = (offset: number) =>
      Array.from({ length: createSamples }, (_, index) => corpus.chunk(count + offset + index))

    // Both probes start on a settled database, so the ratio compares the creates themselves.
    await database.settle()
    log(`memory: create latency with nothing stored (${createSamples} creates)…`)
    const emptyLatencies = await createLatencies(context, sql, product.spaceId, extra(0))
    const floorCount = Math.max(1, Math.ceil(count / SLICES))
    log(`memory: ingestion floor, ${floorCount} chunks through postgres.js…`)
    const floorRate = await floorIngest(sql, corpus, floorTarget, floorCount)
    log(`memory: ingestion floor in batches of ${INGEST_BATCH_LIMIT} memories, ${floorCount} chunks…`)
    const batchedFloorRate = await batchedFloorIngest(sql, corpus, batchedFloorTarget, floorCount)
    log(`memory: memsvc ingests ${count} chunks through REST batch create…`)
    const ingest = await productIngest(context, sql, corpus, product.spaceId, count)
    if (ingest.failed > 0) notes.push(`${ingest.failed} memories ended FAILED`)
    const [stored] = await sql<
      Array<{ count: number }>
    >`select count(*)::int as count from chunk_vectors where space_id = ${product.spaceId}`
    const storedChunks = stored!.count
    if (storedChunks !== count + createSamples)
      notes.push(`expected ${count + createSamples} stored chunks, found ${storedChunks}`)
    log(`memory: vacuum analyze and checkpoint after the load…`)
    await database.settle()
    log(`memory: create latency with ${storedChunks} chunks stored…`)
    const fullLatencies = await createLatencies(context, sql, product.spaceId, extra(createSamples))
    const firstRate = ingest.sliceRates[0] ?? Number.NaN
    const lastRate = ingest.sliceRates[ingest.sliceRates.length - 1] ?? Number.NaN

    rows.push({
      id: 'memory-ingest',
      measure: `Ingestion, chunks/s end to end (REST batch create of ${INGEST_BATCH}, job, embedder, storage), first ${floorCount} chunks`,
      value: firstRate,
      unit: '/s',
      floor: `postgres.js writing the same memory, chunk and vector rows, ${FLOOR_WRITERS} transactions at once`,
      floorValue: floorRate,
      ratio: firstRate / floorRate,
      target: INGEST_TARGET,
      pass: firstRate / floorRate >= INGEST_TARGET && ingest.failed === 0,
      notes: [`whole corpus: ${Math.round(ingest.rate)} chunks/s on average`],
    })
    rows.push({
      id: 'memory-ingest-floor-batched',
      measure: `The floor written ${INGEST_BATCH_LIMIT} memories per transaction (as memsvc's ingest runs them), first ${floorCount} chunks, vs one memory per transaction`,
      value: batchedFloorRate,
      unit: '/s',
      floor: 'the floor, one memory per transaction',
      floorValue: floorRate,
      ratio: batchedFloorRate / floorRate,
      notes: [`memsvc's first 10 % divided by this floor: ${(firstRate / batchedFloorRate).toFixed(2)}`],
    })
    rows.push({
      id: 'memory-ingest-flatness',
      measure: `Ingestion of ${count} chunks: last 10 % vs first 10 %`,
      value: lastRate,
      unit: '/s',
      floor: 'memsvc, its own first 10 %',
      floorValue: firstRate,
      ratio: lastRate / firstRate,
      target: FLATNESS_TARGET,
      pass: lastRate / firstRate >= FLATNESS_TARGET,
      notes: [`chunks/s per tenth: ${ingest.sliceRates.map((rate) => Math.round(rate)).join(', ')}`],
    })
    const emptyP50 = percentile(emptyLatencies, 0.5)!
    const fullP50 = percentile(fullLatencies, 0.5)!
    rows.push({
      id: 'memory-create-latency',
      measure: `POST /v1/memories p50 with ${storedChunks - createSamples} chunks stored vs none (ratio: none / stored)`,
      value: fullP50,
      unit: 'ms',
      floor: 'memsvc, the same creates into an empty space',
      floorValue: emptyP50,
      ratio: emptyP50 / fullP50,
      target: CREATE_LATENCY_TARGET,
      pass: emptyP50 / fullP50 >= CREATE_LATENCY_TARGET,
      p50Ms: fullP50,
      p99Ms: percentile(fullLatencies, 0.99),
      floorP50Ms: emptyP50,
      floorP99Ms: percentile(emptyLatencies, 0.99),
    })

    // Where flatness goes: the floor writes the same kind of rows into memsvc's space, whose
    // index now holds the corpus, so what PostgreSQL alone loses as the index grows is seen.
    const floorAtEndCount = Math.min(floorCount, options.quick ? QUICK_FLOOR_AT_END_CHUNKS : FLOOR_AT_END_CHUNKS)
    log(`memory: ingestion floor again, ${floorAtEndCount} chunks into the full index…`)
    const floorAtEndRate = await floorIngest(
      sql,
      corpus,
      { ...product, userId: context.userId },
      floorAtEndCount,
      count + 2 * createSamples,
    )
    rows.push({
      id: 'memory-ingest-floor-flatness',
      measure: `The floor's own rate into the index holding ${storedChunks} chunks (${floorAtEndCount} chunks) vs into the empty one (first ${floorCount})`,
      value: floorAtEndRate,
      unit: '/s',
      floor: 'the floor, its own first 10 %',
      floorValue: floorRate,
      ratio: floorAtEndRate / floorRate,
      notes: [
        `memsvc's flatness divided by the floor's: ${(lastRate / firstRate / (floorAtEndRate / floorRate)).toFixed(2)}`,
      ],
    })

    notes.push(await storageSizes(sql))
    log('memory: vacuum analyze before retrieval…')
    await database.vacuumAnalyze()
    const [searched] = await sql<
      Array<{ count: number }>
    >`select count(*)::int as count from chunk_vectors where space_id = ${product.spaceId}`
    const searchedChunks = searched!.count
    const queryCount = options.quick ? QUICK_QUERIES : QUERIES
    const messages = corpus.queries(queryCount, count)
    const embeddings = messages.map((message) => `[${hashedBagOfWords(message, DIMENSIONS).join(',')}]`)
    const retriever = await context.retriever(product)
    notes.push(`retrieval went through ${retriever.via}`)
    const settings = retriever.sqlSettings(RECALL_K)
    const nearest = floorNearest(sql, product, settings)
    const candidates = retriever.candidates(RECALL_K)
    const seconds = options.seconds
    const runs: { product: LoadRun[]; floor: LoadRun[]; hybrid: LoadRun[] } = { product: [], floor: [], hybrid: [] }
    for (let round = 0; round < options.rounds; round++) {
      log(`memory: retrieval round ${round + 1} of ${options.rounds}…`)
      const sides = [
        async () =>
          runs.floor.push(
            await closedLoop(
              sql,
              seconds,
              queryCount,
              async (index) => void (await nearest(embeddings[index]!, candidates)),
            ),
          ),
        async () => {
          // The whole-run profile is mostly ingest: the first VECTOR run gets a window of its own.
          const inspector = context.profileDir && round === 0 ? inspectorUrl(context.server.log()) : undefined
          const profiled = inspector
            ? profileWindow(inspector, seconds, path.join(context.profileDir!, 'memory-vector.cpuprofile'))
            : undefined
          runs.product.push(
            await closedLoop(
              sql,
              seconds,
              queryCount,
              async (index) => void (await retriever.retrieve(messages[index]!, 'VECTOR', RECALL_K)),
              retriever.serverPid,
            ),
          )
          await profiled
        },
      ]
      if (round % 2 === 1) sides.reverse()
      for (const side of sides) await side()
    }
    runs.hybrid.push(
      await closedLoop(
        sql,
        seconds,
        queryCount,
        async (index) => void (await retriever.retrieve(messages[index]!, 'HYBRID', RECALL_K)),
        retriever.serverPid,
      ),
    )
    const best = (list: LoadRun[]) => list.reduce((a, b) => (b.rate > a.rate ? b : a))
    rows.push(
      ratioRow(
        'memory-retrieve-vector',
        `Retrieval, VECTOR mode, top ${RECALL_K} of ${searchedChunks} chunks, no post-processing (${RETRIEVAL_CONCURRENCY} clients)`,
        `postgres.js sending the same nearest-neighbour SQL (${settings}), query embedding precomputed`,
        best(runs.product),
        best(runs.floor),
        RETRIEVAL_TARGET,
      ),
    )
    const hybrid = best(runs.hybrid)
    rows.push({
      id: 'memory-retrieve-hybrid',
      measure: `Retrieval, HYBRID mode, top ${RECALL_K} (${RETRIEVAL_CONCURRENCY} clients)`,
      value: hybrid.rate,
      unit: '/s',
      p50Ms: hybrid.p50Ms,
      p99Ms: hybrid.p99Ms,
      cpuUs: hybrid.cpuUs.server,
      notes: [cpuNote('memsvc', hybrid), ...(hybrid.errors > 0 ? [`${hybrid.errors} failed requests`] : [])],
    })

    log(`memory: recall@${RECALL_K} over ${queryCount} queries…`)
    let productRecall = 0
    let floorRecall = 0
    for (const [index, message] of messages.entries()) {
      const kth = await exactKth(sql, product, embeddings[index]!)
      const returned = await retriever.retrieve(message, 'VECTOR', RECALL_K)
      productRecall += await recallOf(sql, product, embeddings[index]!, kth, returned)
      const direct = await nearest(embeddings[index]!, candidates)
      floorRecall += await recallOf(
        sql,
        product,
        embeddings[index]!,
        kth,
        direct.slice(0, RECALL_K).map((row) => row.chunk_id),
      )
    }
    productRecall /= queryCount
    floorRecall /= queryCount
    rows.push({
      id: 'memory-recall',
      measure: `Recall@${RECALL_K}, VECTOR mode at the default settings, vs exact search (sequential scan) over ${searchedChunks} chunks`,
      value: productRecall,
      unit: 'ratio',
      floor: 'exact search',
      floorValue: 1,
      ratio: productRecall,
      target: RECALL_TARGET,
      pass: productRecall >= RECALL_TARGET,
      notes: [
        `the floor's SQL alone (HNSW, same settings): ${floorRecall.toFixed(3)}; ties at the ${RECALL_K}th distance count as hits`,
      ],
    })
    await retriever.close()
    for (const row of rows) if (row.notes?.length === 0) delete row.notes
    return {
      rows,
      details: {
        chunks: count,
        sliceRates: ingest.sliceRates,
        createLatencyMs: { empty: emptyLatencies, full: fullLatencies },
        retrieval: runs as unknown as Record<string, unknown>,
        recall: { vector: productRecall, floorSql: floorRecall, queries: queryCount },
        notes,
      },
    }
  } finally {
    await sql.end({ timeout: 5 })
    await embedder.close()
  }
}

/** The encryption key file memsvc and an in-process server share (credentials sealed by one open in the other). */
export function writeEncryptionKeyFile(dir: string): string {
  const file = path.join(dir, 'encryption.key')
  fs.writeFileSync(
    file,
    `${crypto.getRandomValues(new Uint8Array(32)).reduce((text, byte) => text + byte.toString(16).padStart(2, '0'), '')}\n`,
    { mode: 0o600 },
  )
  return file
}
