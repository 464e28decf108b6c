// Command line of `npm run bench`.
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'

/** Each measured run, after its warm-up. */
const FULL_SECONDS = 10
const FULL_WARMUP_SECONDS = 3
/** Floor and product alternate this many times; the best run of each counts (noise only slows). */
const FULL_ROUNDS = 3
/** The issue asks for three minutes sampled every ten seconds. */
const FULL_SOAK_SECONDS = 180
/** --long: ten minutes, so that a slow trend in the rate or the CPU per request cannot hide in three. */
const LONG_SOAK_SECONDS = 600
const SOAK_SAMPLE_SECONDS = 10
/** --quick: about one second per scenario, for smoke tests. */
const QUICK_SECONDS = 1
const QUICK_WARMUP_SECONDS = 0
const QUICK_SOAK_SECONDS = 3
/**
 * PostgreSQL connections per pool, for memsvc (--db-max-pool) and the floors alike: the
 * usual sizing rule for a database pool, twice the cores plus one (5 on these two-core
 * machines), rather than a number tuned to the results. Not memsvc's default of 50, which
 * this PostgreSQL's 100 connections, shared with the test suites, could not hold beside a
 * floor's. A sweep on this machine (rest-list, pools of 4, 6, 8, 12 and 20) put the
 * auth-lookup floor at 16-23k req/s throughout, within its run-to-run noise, while every
 * connection beyond the cores' worth cost memsvc throughput (22k req/s at 4, 14k at 20):
 * more backends to wake and switch between on two cores, and fewer queries pipelined per
 * socket write.
 */
const FULL_POOL_MAX = 2 * os.availableParallelism() + 1
/** --quick is a smoke test that may run beside other suites: it takes few connections. */
const QUICK_POOL_MAX = 4
/** --memory: the corpus the issues name (100k chunks of 384 dimensions); --quick: enough to run every step. */
const FULL_MEMORY_CHUNKS = 100_000
const QUICK_MEMORY_CHUNKS = 300
/** Ten tenths of at least one chunk each. */
const MIN_MEMORY_CHUNKS = 10
/** --scale: api_keys rows at each measured size (the same database grows); --quick: the first two. */
const FULL_SCALE_SIZES = [1_000, 10_000, 100_000, 1_000_000]
const QUICK_SCALE_SIZES = [1_000, 10_000]
/** --processes: memsvc processes behind nginx at each step; --quick: the first two. */
const FULL_PROCESS_COUNTS = [1, 2, 4]
const QUICK_PROCESS_COUNTS = [1, 2]
/** --documents: scanned pages OCR reads on each side (about a second each here); --quick: enough to run every step. */
const FULL_OCR_PAGES = 16
const QUICK_OCR_PAGES = 2
/** --documents: OCR workers on each side, memsvc's --ocr-concurrency and the floor's (memsvc's default). */
const DEFAULT_OCR_CONCURRENCY = 1
/** --documents: the large PDF whose ingest's peak RSS is measured (the 200 MB); --quick: a small one. */
const FULL_LARGE_PDF_MIB = 200
const QUICK_LARGE_PDF_MIB = 4
/** --lifecycle: chunks with vectors in the exported space (the 100k); --quick: a smoke test's worth. */
const FULL_LIFECYCLE_CHUNKS = 100_000
const QUICK_LIFECYCLE_CHUNKS = 10_000
/** A soak shorter than this many samples says nothing about a trend. */
const MIN_SOAK_SAMPLES = 3

export const SCENARIO_IDS = ['rest-list', 'rest-me', 'grpc-list', 'rest-create', 'soak', 'startup'] as const
export type ScenarioId = (typeof SCENARIO_IDS)[number]

export interface BenchOptions {
  quick: boolean
  seconds: number
  warmupSeconds: number
  rounds: number
  soakSeconds: number
  soakSampleSeconds: number
  unpatchedSoak: boolean
  /** Connections per PostgreSQL pool, memsvc and floors alike. */
  poolMax: number
  /** Run memsvc's bundle under node --cpu-prof (a SEA cannot take it) and keep the profile under outDir/profiles. */
  cpuProf: boolean
  build: boolean
  outDir: string
  /** Only these scenarios (ids), for profiling one of them. */
  only?: ScenarioId[]
  /** Run the memory benchmark (bench/scenarios/memory.ts) instead of the API-key scenarios. */
  memory: boolean
  /** Chunks the memory benchmark ingests before it measures retrieval (--chunks, or its older name --memory-chunks). */
  memoryChunks: number
  /** Chunks of each tenth memsvc ingests through REST (the rest by bulk SQL); absent: the benchmark's rule. */
  ingestSample?: number
  /** Run the scale benchmark (bench/scenarios/scale.ts): the API-key routes at growing table sizes. */
  scale: boolean
  /** api_keys rows at each size the scale benchmark measures, ascending. */
  scaleSizes: number[]
  /** Run the processes benchmark (bench/scenarios/processes.ts): several memsvc processes behind nginx. */
  processes: boolean
  /** memsvc processes at each step of the processes benchmark, ascending, starting at 1. */
  processCounts: number[]
  /** Run the local benchmark (bench/scenarios/local-memory.ts): LOCAL embedder and keyword-only memory. */
  local: boolean
  /** The model directory it measures; absent: the first under dist/models. */
  localModel?: string
  /** Run the documents benchmark (bench/scenarios/documents.ts): PDF extraction, OCR and a large PDF's RSS. */
  documents: boolean
  /** Scanned pages it has OCR read. */
  ocrPages: number
  /** OCR workers: memsvc's --ocr-concurrency and the tesseract.js floor's worker count. */
  ocrConcurrency: number
  /** Size of the large PDF, in MiB. */
  largePdfMiB: number
  /** Run the lifecycle benchmark (bench/scenarios/lifecycle.ts): space export and import. */
  lifecycle: boolean
  /** Chunks (one per memory, with vectors) in the space it exports and imports. */
  lifecycleChunks: number
}

const USAGE = `npm run bench -- [options]
  --quick               every scenario for about 1 s (smoke test)
  --seconds N           measured seconds per run (default ${FULL_SECONDS})
  --warmup-seconds N    warm-up before each run (default ${FULL_WARMUP_SECONDS})
  --rounds N            floor/product alternations; best run counts (default ${FULL_ROUNDS})
  --soak-seconds N      soak length (default ${FULL_SOAK_SECONDS}, sampled every ${SOAK_SAMPLE_SECONDS} s)
  --long                soak for ${LONG_SOAK_SECONDS / 60} minutes (--soak-seconds ${LONG_SOAK_SECONDS})
  --unpatched-soak      also soak the auth-lookup floor with and without the postgres queue patch
  --cpu-prof            profile memsvc (its bundle under node --cpu-prof) into <out>/profiles
  --pool-max N          PostgreSQL connections per pool, memsvc and floors alike (default ${FULL_POOL_MAX})
  --memory              the memory benchmark instead (ingestion, flatness, create latency, retrieval, recall)
  --chunks N            chunks it stores (default ${FULL_MEMORY_CHUNKS}; --quick: ${QUICK_MEMORY_CHUNKS}); --memory-chunks N
                        is the same; other sizes than the default write results/memory-<size>-latest.md
  --ingest-sample N     chunks of each tenth memsvc ingests through REST, bulk SQL writing the rest
                        (default: all of it up to 200000 chunks, 6000 above)
  --scale               the scale benchmark instead (list, me, create at growing api_keys sizes)
  --scale-sizes a,b     api_keys rows at each size (default ${FULL_SCALE_SIZES.join(',')}; --quick: ${QUICK_SCALE_SIZES.join(',')})
  --processes           the processes benchmark instead (1, 2, 4 memsvc processes behind nginx)
  --process-counts a,b  processes at each step, starting at 1 (default ${FULL_PROCESS_COUNTS.join(',')}; --quick: ${QUICK_PROCESS_COUNTS.join(',')})
  --local               the local benchmark instead (LOCAL embedder, /users/me during its ingest,
                        keyword-only retrieval over --memory-chunks chunks, RSS and sizes)
  --local-model DIR     the model it measures (default: the first under dist/models)
  --documents           the documents benchmark instead (text PDF extraction and OCR against pdfjs-dist
                        and tesseract.js alone, peak RSS while a ${FULL_LARGE_PDF_MIB} MiB PDF is ingested)
  --ocr-pages N         scanned pages OCR reads (default ${FULL_OCR_PAGES}; --quick: ${QUICK_OCR_PAGES})
  --ocr-concurrency N   OCR workers, memsvc's and the floor's (default ${DEFAULT_OCR_CONCURRENCY})
  --large-pdf-mb N      the large PDF's size in MiB (default ${FULL_LARGE_PDF_MIB}; --quick: ${QUICK_LARGE_PDF_MIB})
  --lifecycle           the lifecycle benchmark instead (space export against COPY TO STDOUT, import with
                        matching fingerprints against the ingestion floor)
  --lifecycle-chunks N  chunks in the exported space (default ${FULL_LIFECYCLE_CHUNKS}; --quick: ${QUICK_LIFECYCLE_CHUNKS})
  --only a,b            run only these scenarios (${SCENARIO_IDS.join(', ')})
  --no-build            use dist/memsvc as it is (fail if missing)
  --out DIR             where results go (default bench/results)`

export function parseOptions(argv: string[], repoRoot: string): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      'warmup-seconds': { type: 'string' },
      rounds: { type: 'string' },
      'soak-seconds': { type: 'string' },
      long: { type: 'boolean', default: false },
      'unpatched-soak': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      only: { type: 'string' },
      memory: { type: 'boolean', default: false },
      'memory-chunks': { type: 'string' },
      chunks: { type: 'string' },
      'ingest-sample': { type: 'string' },
      scale: { type: 'boolean', default: false },
      'scale-sizes': { type: 'string' },
      processes: { type: 'boolean', default: false },
      'process-counts': { type: 'string' },
      'pool-max': { type: 'string' },
      local: { type: 'boolean', default: false },
      'local-model': { type: 'string' },
      documents: { type: 'boolean', default: false },
      'ocr-pages': { type: 'string' },
      'ocr-concurrency': { type: 'string' },
      'large-pdf-mb': { type: 'string' },
      lifecycle: { type: 'boolean', default: false },
      'lifecycle-chunks': { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const whole = (name: string, text: string | undefined, fallback: number, minimum: number) => {
    if (text === undefined) return fallback
    const value = Number(text)
    if (!Number.isInteger(value) || value < minimum)
      throw new Error(`--${name}: expected a whole number >= ${minimum}, got "${text}"`)
    return value
  }
  const quick = values.quick!
  if (values.long && values['soak-seconds'] !== undefined)
    throw new Error('--long is --soak-seconds 600: give one or the other')
  const soakSeconds = whole(
    'soak-seconds',
    values['soak-seconds'],
    values.long ? LONG_SOAK_SECONDS : quick ? QUICK_SOAK_SECONDS : FULL_SOAK_SECONDS,
    MIN_SOAK_SAMPLES,
  )
  const processCounts = ascendingList(
    'process-counts',
    values['process-counts'],
    quick ? QUICK_PROCESS_COUNTS : FULL_PROCESS_COUNTS,
    1,
  )
  if (processCounts[0] !== 1) throw new Error('--process-counts: the first step is the 1-process baseline')
  return {
    quick,
    seconds: whole('seconds', values.seconds, quick ? QUICK_SECONDS : FULL_SECONDS, 1),
    warmupSeconds: whole(
      'warmup-seconds',
      values['warmup-seconds'],
      quick ? QUICK_WARMUP_SECONDS : FULL_WARMUP_SECONDS,
      0,
    ),
    rounds: whole('rounds', values.rounds, quick ? 1 : FULL_ROUNDS, 1),
    soakSeconds,
    // Every 10 s as asked; a shortened soak still gets MIN_SOAK_SAMPLES samples.
    soakSampleSeconds: Math.min(SOAK_SAMPLE_SECONDS, Math.floor(soakSeconds / MIN_SOAK_SAMPLES)),
    unpatchedSoak: values['unpatched-soak']!,
    poolMax: whole('pool-max', values['pool-max'], quick ? QUICK_POOL_MAX : FULL_POOL_MAX, 1),
    cpuProf: values['cpu-prof']!,
    build: !values['no-build'],
    outDir: path.resolve(values.out ?? path.join(repoRoot, 'bench', 'results')),
    only: values.only === undefined ? undefined : scenarioList(values.only),
    memory: values.memory!,
    memoryChunks: memoryChunks(values.chunks, values['memory-chunks'], quick),
    ingestSample:
      values['ingest-sample'] === undefined ? undefined : whole('ingest-sample', values['ingest-sample'], 0, 1),
    scale: values.scale!,
    scaleSizes: ascendingList('scale-sizes', values['scale-sizes'], quick ? QUICK_SCALE_SIZES : FULL_SCALE_SIZES, 100),
    processes: values.processes!,
    processCounts,
    local: values.local!,
    localModel: values['local-model'] === undefined ? undefined : path.resolve(values['local-model']),
    documents: values.documents!,
    ocrPages: whole('ocr-pages', values['ocr-pages'], quick ? QUICK_OCR_PAGES : FULL_OCR_PAGES, 1),
    ocrConcurrency: whole('ocr-concurrency', values['ocr-concurrency'], DEFAULT_OCR_CONCURRENCY, 1),
    largePdfMiB: whole('large-pdf-mb', values['large-pdf-mb'], quick ? QUICK_LARGE_PDF_MIB : FULL_LARGE_PDF_MIB, 1),
    lifecycle: values.lifecycle!,
    lifecycleChunks: whole(
      'lifecycle-chunks',
      values['lifecycle-chunks'],
      quick ? QUICK_LIFECYCLE_CHUNKS : FULL_LIFECYCLE_CHUNKS,
      10,
    ),
  }
}

/** --chunks, the spelling, or --memory-chunks, the older one: the same number if both are given. */
function memoryChunks(chunks: string | undefined, older: string | undefined, quick: boolean): number {
  if (chunks !== undefined && older !== undefined && Number(chunks) !== Number(older))
    throw new Error(`--chunks ${chunks} and --memory-chunks ${older}: give one (they are the same option)`)
  const [name, text] = chunks !== undefined ? ['chunks', chunks] : ['memory-chunks', older]
  if (text === undefined) return quick ? QUICK_MEMORY_CHUNKS : FULL_MEMORY_CHUNKS
  const value = Number(text)
  if (!Number.isInteger(value) || value < MIN_MEMORY_CHUNKS)
    throw new Error(`--${name}: expected a whole number >= ${MIN_MEMORY_CHUNKS}, got "${text}"`)
  return value
}

/** A comma-separated list of whole numbers, strictly ascending, the first at least `minimum`. */
function ascendingList(name: string, text: string | undefined, fallback: number[], minimum: number): number[] {
  if (text === undefined) return fallback
  const values = text.split(',').map((item) => Number(item.trim()))
  const ascending = values.every((value, index) => index === 0 || value > values[index - 1]!)
  if (!values.every(Number.isInteger) || values[0]! < minimum || !ascending)
    throw new Error(`--${name}: expected ascending whole numbers from ${minimum}, got "${text}"`)
  return values
}

function scenarioList(text: string): ScenarioId[] {
  const ids = text.split(',').map((id) => id.trim())
  const unknown = ids.filter((id) => !(SCENARIO_IDS as readonly string[]).includes(id))
  if (unknown.length > 0)
    throw new Error(`--only: unknown scenario ${unknown.join(', ')}; choose from ${SCENARIO_IDS.join(', ')}`)
  return ids as ScenarioId[]
}

/**
 * Where a memory run's report goes: results/memory-latest.md for the default corpus (and
 * --quick, the smoke test), results/memory-<size>-latest.md for any other size (1m, 20k…),
 * so that a million-chunk run does not replace the 100k figures.
 */
export function memoryReportPrefix(options: Pick<BenchOptions, 'quick' | 'memoryChunks'>): string {
  const chunks = options.memoryChunks
  if (options.quick || chunks === FULL_MEMORY_CHUNKS) return 'memory-'
  const size =
    chunks % 1_000_000 === 0 ? `${chunks / 1_000_000}m` : chunks % 1_000 === 0 ? `${chunks / 1_000}k` : String(chunks)
  return `memory-${size}-`
}
