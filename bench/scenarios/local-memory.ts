// `npm run bench -- --local`: memory with nothing else running (issue 33), each figure as
// memsvc against a floor measured in the same run.
//
//   1. LOCAL embedder throughput: memsvc's in-process embedder (src/providers/local: its
//      inference thread, tokenizer and pooling) against onnxruntime-node alone (an
//      InferenceSession and the model's tokenizer in this thread) on the same model, the same
//      batches and one onnxruntime thread each;
//   2. GET /v1/users/me p99 while dist/memsvc ingests through a LOCAL embedder, against the
//      same calls with the server idle (a cost that must not more than double);
//   3. KEYWORD retrieval over a keyword-only space of --memory-chunks chunks (100k), against
//      the same ranking SQL (src/db/sql/retrieval.ts keywordChunks) sent with postgres.js;
//   4. reported: the server's RSS with the model loaded, dist/memsvc's size and the bundled
//      models' sizes.
//
// The model is the first one under dist/models (the build's default), or --local-model DIR.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Tokenizer } from '@huggingface/tokenizers'
import * as ort from 'onnxruntime-node'
import postgres from 'postgres'
import { keywordChunks } from '../../src/db/sql/retrieval.js'
import { vectorSearchPlan } from '../../src/domain/retrieval.js'
import { LocalModels } from '../../src/providers/local/local-models.js'
import { type LocalModelFiles, readModelDirectory } from '../../src/providers/local/model-directory.js'
import { writeTinyEmbeddingModel } from '../../test/support/tiny-embedding-model.js'
import { rssMiB } from '../lib/machine.js'
import { memoryCorpus } from '../lib/memory-corpus.js'
import { type RunningServer, startMemsvc } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import { sleep } from '../lib/processes.js'
import type { ReportRow } from '../lib/report.js'
import { call, closedLoop, type LoadRun, productIngest, ratioRow } from './memory.js'
import { restRetriever } from './memory-retriever.js'
import { serverArgs } from './startup.js'
import type { BenchMode, ModeContext, ModeReport } from './types.js'

/** The issue's targets. */
const EMBEDDER_TARGET = 0.85
const ME_P99_GROWTH_LIMIT = 2
const KEYWORD_TARGET = 0.8
/** Texts per embedding call: the ingest's batch (src/providers/embed.ts DEFAULT_EMBEDDING_POLICY). */
const EMBED_BATCH = 32
/** Distinct batches each side cycles through, so that neither answers from a cache. */
const EMBED_BATCHES = 16
const QUICK_EMBED_BATCHES = 2
/** Memories the LOCAL ingest is given while /users/me is measured: more than it finishes in the measured time. */
const LOCAL_INGEST_MEMORIES = 5_000
const QUICK_LOCAL_INGEST_MEMORIES = 100
const REQUESTED_SIZE = 10
const KEYWORD_QUERIES = 200
const QUICK_KEYWORD_QUERIES = 20
/** /users/me clients in flight: few, so that the p99 is the server's and not this process's queue. */
const ME_CLIENTS = 2
const BYTES_PER_MIB = 1024 * 1024
const TINY_MODEL_DIMENSIONS = 384
/** Feed-forward blocks that give the generated model about all-MiniLM-L6-v2's compute per token. */
const TINY_MODEL_LAYERS = 6

interface BenchModel {
  files: LocalModelFiles
  /** Where it came from, for the report. */
  origin: string
}

/** The model to measure: --local-model, else dist/models' first, else one written for the run. */
function benchModel(options: BenchOptions, executable: string, workDir: string): BenchModel {
  if (options.localModel) return { files: readModelDirectory(options.localModel), origin: options.localModel }
  const bundled = path.join(path.dirname(executable), 'models')
  const first = fs.existsSync(bundled)
    ? fs
        .readdirSync(bundled)
        .sort()
        .find((name) => fs.statSync(path.join(bundled, name)).isDirectory())
    : undefined
  if (first) return { files: readModelDirectory(path.join(bundled, first)), origin: `dist/models/${first} (bundled)` }
  const dir = path.join(workDir, 'models', 'generated-minilm-shaped')
  writeTinyEmbeddingModel({ dir, dimensions: TINY_MODEL_DIMENSIONS, feedForwardLayers: TINY_MODEL_LAYERS })
  return {
    files: readModelDirectory(dir),
    origin: `a generated ${TINY_MODEL_DIMENSIONS}-dimension model with random weights (no model under dist/models)`,
  }
}

/** The corpus's chunks, EMBED_BATCH to a batch: prose of about 300 characters each. */
function embeddingBatches(count: number): string[][] {
  const corpus = memoryCorpus()
  return Array.from({ length: count }, (_, batch) =>
    Array.from({ length: EMBED_BATCH }, (_, item) => corpus.chunk(batch * EMBED_BATCH + item)),
  )
}

/**
 * onnxruntime-node alone: the model's tokenizer, the batch padded to its longest text, one
 * run of the session. A graph that gives token states is mean-pooled by the caller's
 * pooling in memsvc; here the output is read and dropped, which costs the floor nothing.
 */
async function rawSession(files: LocalModelFiles) {
  const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
  const tokenizer = new Tokenizer(
    read(files.tokenizerFile),
    files.tokenizerConfigFile ? read(files.tokenizerConfigFile) : {},
  )
  const session = await ort.InferenceSession.create(files.modelFile, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  })
  return {
    async embed(texts: string[]): Promise<void> {
      const ids = texts.map((text) => tokenizer.encode(text).ids.slice(0, files.maxTokens))
      const length = Math.max(...ids.map((row) => row.length))
      const shape = [texts.length, length]
      const inputIds = new BigInt64Array(texts.length * length)
      const mask = new BigInt64Array(texts.length * length)
      for (const [row, tokens] of ids.entries())
        for (const [column, id] of tokens.entries()) {
          inputIds[row * length + column] = BigInt(id)
          mask[row * length + column] = 1n
        }
      const feeds: Record<string, ort.Tensor> = { input_ids: new ort.Tensor('int64', inputIds, shape) }
      if (session.inputNames.includes('attention_mask')) feeds.attention_mask = new ort.Tensor('int64', mask, shape)
      if (session.inputNames.includes('token_type_ids'))
        feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(inputIds.length), shape)
      const results = await session.run(feeds)
      for (const tensor of Object.values(results)) tensor.dispose()
    },
    close: () => session.release(),
  }
}

/** Sentences per second of `embed` over the batches, for `seconds`. */
async function sentencesPerSecond(seconds: number, batches: string[][], embed: (texts: string[]) => Promise<unknown>) {
  let sentences = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  for (let index = 0; performance.now() < deadline; index++) {
    const batch = batches[index % batches.length]!
    await embed(batch)
    sentences += batch.length
  }
  return sentences / ((performance.now() - started) / 1000)
}

async function embedderRow(context: ModeContext, model: BenchModel): Promise<ReportRow> {
  const { options } = context
  const batches = embeddingBatches(options.quick ? QUICK_EMBED_BATCHES : EMBED_BATCHES)
  const models = new LocalModels({
    modelDirectories: [],
    threads: 1,
    maxQueuedBatches: 4,
    memoryBoundBytes: os.totalmem(),
  })
  const floor = await rawSession(model.files)
  const product = (texts: string[]) => models.embed(model.files, texts, 'bulk')
  try {
    // Warm both: the first calls load the model and let onnxruntime pick its kernels.
    for (const batch of batches.slice(0, 2)) await Promise.all([floor.embed(batch), product(batch)])
    const productRates: number[] = []
    const floorRates: number[] = []
    for (let round = 0; round < options.rounds; round++) {
      floorRates.push(await sentencesPerSecond(options.seconds, batches, floor.embed))
      productRates.push(await sentencesPerSecond(options.seconds, batches, product))
      context.log(
        `  embedder round ${round + 1}: memsvc ${productRates.at(-1)!.toFixed(1)}/s, ` +
          `onnxruntime-node alone ${floorRates.at(-1)!.toFixed(1)}/s`,
      )
    }
    const value = Math.max(...productRates)
    const floorValue = Math.max(...floorRates)
    return {
      id: 'local-embedder-throughput',
      measure: `LOCAL embedder, sentences/s (batches of ${EMBED_BATCH}, 1 thread)`,
      value,
      unit: '/s',
      floor: 'onnxruntime-node InferenceSession alone, same model and batches',
      floorValue,
      ratio: value / floorValue,
      target: EMBEDDER_TARGET,
      pass: value / floorValue >= EMBEDDER_TARGET,
      notes: [
        `model: ${model.origin}`,
        `rounds (memsvc / floor): ${productRates.map((rate, index) => `${rate.toFixed(1)}/${floorRates[index]!.toFixed(1)}`).join(', ')}`,
      ],
    }
  } finally {
    await Promise.all([models.close(), floor.close()])
  }
}

async function benchUser(restUrl: string): Promise<{ userId: string; key: string }> {
  const { rootApiKey } = await call<{ rootApiKey: string }>(restUrl, 'POST', '/v1/system/init', '')
  const { userId } = await call<{ userId: string }>(restUrl, 'POST', '/v1/users', rootApiKey, {
    username: 'bench-local',
    role: 'USER',
  })
  const { rawApiKey } = await call<{ rawApiKey: string }>(restUrl, 'POST', '/v1/apikeys', rootApiKey, {
    ownerId: userId,
  })
  return { userId, key: rawApiKey }
}

/** GET /v1/users/me from ME_CLIENTS clients for `seconds`. */
async function meLatency(
  server: RunningServer,
  database: postgres.Sql,
  key: string,
  seconds: number,
): Promise<LoadRun> {
  return closedLoop(
    database,
    seconds,
    1,
    async () => {
      const response = await fetch(`${server.restUrl}/v1/users/me`, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`users/me: ${response.status}`)
    },
    server.pid,
    ME_CLIENTS,
  )
}

/** The running server's part of the benchmark: its database, its user and the report rows go to. */
interface ServerRun {
  context: ModeContext
  server: RunningServer
  sql: postgres.Sql
  user: { key: string }
  report: ModeReport
}

async function meDuringIngestRow({ context, server, sql, user, report }: ServerRun, model: BenchModel): Promise<void> {
  const { options } = context
  const idle = await meLatency(server, sql, user.key, options.seconds)
  const rssIdle = rssMiB(server.pid)
  const { embedderId } = await call<{ embedderId: string }>(server.restUrl, 'POST', '/v1/embedders', user.key, {
    displayName: 'bench local',
    providerType: 'LOCAL',
    modelIdentifier: model.files.name,
  })
  const { spaceId } = await call<{ spaceId: string }>(server.restUrl, 'POST', '/v1/spaces', user.key, {
    name: 'bench local',
    spaceEmbedders: [{ embedderId }],
  })
  const memories = options.quick ? QUICK_LOCAL_INGEST_MEMORIES : LOCAL_INGEST_MEMORIES
  const ingest = productIngest({ server, userKey: user.key }, sql, memoryCorpus(), spaceId, memories)
  ingest.catch(() => {})
  // Let the ingest reach its steady state: the model loaded, every job worker busy.
  await sleep(options.quick ? 500 : options.warmupSeconds * 1000)
  const during = await meLatency(server, sql, user.key, options.seconds)
  const rssLoaded = rssMiB(server.pid)
  const { rate: ingestRate, failed } = await ingest
  const growth = (during.p99Ms ?? Number.NaN) / (idle.p99Ms ?? Number.NaN)
  report.rows.push({
    id: 'local-me-p99-during-ingest',
    measure: 'GET /v1/users/me p99 while a LOCAL ingest runs ÷ idle',
    value: during.p99Ms ?? Number.NaN,
    unit: 'ms',
    floor: 'the same calls with the server idle',
    floorValue: idle.p99Ms,
    ratio: growth,
    target: ME_P99_GROWTH_LIMIT,
    targetIsMaximum: true,
    pass: growth <= ME_P99_GROWTH_LIMIT && during.errors === 0,
    p50Ms: during.p50Ms,
    p99Ms: during.p99Ms,
    floorP50Ms: idle.p50Ms,
    floorP99Ms: idle.p99Ms,
    notes: [
      `ingest of ${memories} one-chunk memories through the LOCAL embedder: ${ingestRate.toFixed(1)} chunks/s, ${failed} failed`,
      `${during.rate.toFixed(0)} calls/s during the ingest, ${idle.rate.toFixed(0)} idle`,
    ],
  })
  report.rows.push({
    id: 'local-rss',
    measure: 'memsvc RSS with the LOCAL embedder loaded and ingesting',
    value: rssLoaded ?? Number.NaN,
    unit: 'MiB',
    notes: [
      `before this ingest: ${rssIdle?.toFixed(0)} MiB (init has already loaded the bundled default model once to probe it)`,
    ],
  })
}

async function keywordRow({ context, server, sql, user, report }: ServerRun): Promise<void> {
  const { options } = context
  // Created before any LOCAL embedder exists, so that it stays keyword-only.
  const { spaceId } = await call<{ spaceId: string }>(server.restUrl, 'POST', '/v1/spaces', user.key, {
    name: 'bench keywords',
  })
  const corpus = memoryCorpus()
  context.log(`  keyword-only space: ingesting ${options.memoryChunks} chunks`)
  const ingest = await productIngest({ server, userKey: user.key }, sql, corpus, spaceId, options.memoryChunks)
  await sql`vacuum analyze chunks`
  const [space] = await sql<
    Array<{ language: string }>
  >`select text_search_language as language from spaces where id = ${spaceId}`
  const queries = corpus.queries(options.quick ? QUICK_KEYWORD_QUERIES : KEYWORD_QUERIES, options.memoryChunks)
  const retriever = restRetriever(server.restUrl, user.key, spaceId, server.pid)
  const limit = vectorSearchPlan(REQUESTED_SIZE).limit
  const products: LoadRun[] = []
  const floors: LoadRun[] = []
  try {
    for (let round = 0; round < options.rounds; round++) {
      floors.push(
        await closedLoop(sql, options.seconds, queries.length, async (index) => {
          await keywordChunks(sql as never, { spaceId, language: space!.language, message: queries[index]!, limit })
        }),
      )
      products.push(
        await closedLoop(
          sql,
          options.seconds,
          queries.length,
          async (index) => {
            await retriever.retrieve(queries[index]!, 'KEYWORD', REQUESTED_SIZE)
          },
          server.pid,
        ),
      )
    }
  } finally {
    await retriever.close()
  }
  const best = (runs: LoadRun[]) => runs.reduce((a, b) => (b.rate > a.rate ? b : a))
  report.rows.push(
    ratioRow(
      'local-keyword-retrieve',
      `KEYWORD retrieval, keyword-only space of ${options.memoryChunks} chunks`,
      'keywordChunks SQL through postgres.js',
      best(products),
      best(floors),
      KEYWORD_TARGET,
      [`keyword-only ingest: ${ingest.rate.toFixed(0)} chunks/s, ${ingest.failed} failed`],
    ),
  )
}

function sizeRows(executable: string, model: BenchModel, report: ModeReport): void {
  const bytesOf = (target: string): number =>
    fs.statSync(target).isDirectory()
      ? fs.readdirSync(target).reduce((total, name) => total + bytesOf(path.join(target, name)), 0)
      : fs.statSync(target).size
  const modelsDir = path.join(path.dirname(executable), 'models')
  const bundled = fs.existsSync(modelsDir) ? bytesOf(modelsDir) : 0
  const binary = fs.statSync(executable).size
  report.rows.push({
    id: 'local-binary-size',
    measure: 'dist/memsvc size, and with the bundled models beside it',
    value: binary / BYTES_PER_MIB,
    unit: 'MiB',
    notes: [
      `with dist/models: ${((binary + bundled) / BYTES_PER_MIB).toFixed(1)} MiB; ` +
        `the model measured (${model.origin}) is ${(bytesOf(model.files.dir) / BYTES_PER_MIB).toFixed(1)} MiB`,
    ],
  })
}

export const localMode: BenchMode = {
  prefix: 'local-',
  describe: (options) =>
    `${options.quick ? 'quick (smoke test; numbers are not measurements), ' : ''}local embedding and keyword-only memory, ` +
    `${options.seconds} s per run × ${options.rounds} rounds, keyword-only space of ${options.memoryChunks} chunks`,
  usesWrk: false,
  pinning: 'memsvc on its core (taskset) when possible; the embedder floors in this process, unpinned',
  async run(context, report) {
    const model = benchModel(context.options, context.executable, context.workDir)
    context.log(`model: ${model.origin}`)
    report.rows.push(await embedderRow(context, model))
    sizeRows(context.executable, model, report)

    const sql = postgres(context.database.url, { max: context.options.poolMax, onnotice: () => {} })
    const server = await startMemsvc({
      executable: context.executable,
      sandbox: context.sandbox,
      args: serverArgs([
        ...['--db-url', context.database.jdbcUrl, '--db-user', context.database.user],
        ...['--db-max-pool', String(context.options.poolMax)],
        ...['--models-dir', path.dirname(model.files.dir), '--local-embedder-threads', '1'],
      ]),
    })
    try {
      const run = { context, server, sql, user: await benchUser(server.restUrl), report }
      await keywordRow(run)
      await meDuringIngestRow(run, model)
    } finally {
      await server.stop()
      await sql.end({ timeout: 5 })
    }
    report.extra.push(
      'A score of semantic quality cannot be measured here: no real MiniLM-class weights are reachable, ' +
        'so the bundled default model (USE-lite, converted to ONNX at build time) or a generated one is what runs.',
    )
  },
}
