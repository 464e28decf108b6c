import type { ServerConfig } from '../config/server-config.js'
import { type Database, openDatabase } from '../db/database.js'
import { migrate } from '../db/migrations.js'
import { currentSchemaVectorSupport } from '../db/schema-state.js'
import * as encryptionKeySql from '../db/sql/encryption-key.js'
import { TableUpkeep } from '../db/table-upkeep.js'
import { upkeepVectorIndexes } from '../db/vector-index-upkeep.js'
import { prepareVectorStorage, type VectorSupport } from '../db/vector-storage.js'
import { DEFAULT_EXTRACTION_LIMITS } from '../documents/extracted-document.js'
import { DEFAULT_EXTRACTION_TIMEOUT_MS, ExtractionPool } from '../documents/extraction-pool.js'
import { TesseractOcrEngine } from '../documents/ocr.js'
import { DomainContext, ServerContext, type ServerFacts } from '../domain/context.js'
import { readLicenseSummary } from '../domain/licenses.js'
import { ReadRouting } from '../domain/read-routing.js'
import { SpaceRowsCache } from '../domain/space-rows-cache.js'
import { isDatabaseDiskFull, isDatabaseUnreachable } from '../errors/app-error.js'
import { registerJobHandlers } from '../jobs/handlers/index.js'
import { JobProcessor, type JobProcessorOptions } from '../jobs/job-processor.js'
import { DrainController } from '../lifecycle/drain.js'
import { Lifecycle } from '../lifecycle/lifecycle.js'
import { keepingStartupAlive, type StartupKeepalive } from '../lifecycle/startup-keepalive.js'
import { StartupTimeline } from '../lifecycle/startup-timeline.js'
import type { Logger } from '../observability/logger.js'
import { createMetrics, type ServerMetrics } from '../observability/metrics.js'
import type { EmbeddingPolicy } from '../providers/embed.js'
import { LocalModels } from '../providers/local/local-models.js'
import { QueryEmbeddingCache } from '../providers/query-embedding-cache.js'
import { readAsset } from '../runtime/assets.js'
import { preparePrivateDataDir } from '../runtime/data-dir.js'
import { VERSION } from '../runtime/environment.js'
import { loadUws } from '../runtime/uws.js'
import {
  EncryptionKeyError,
  type LoadedKey,
  loadEncryptionKey,
  verifyEncryptionKey,
} from '../secrets/encryption-key.js'
import { resolveTlsMaterial, type TlsMaterial } from '../tls/certificates.js'
import { GrpcServer } from '../transport/grpc/grpc-server.js'
import { registerGrpcServices } from '../transport/grpc/services/index.js'
import { HttpServer } from '../transport/rest/http-server.js'
import { registerRestRoutes } from '../transport/rest/routes/index.js'

const FIRST_RETRY_DELAY_MS = 500
const MAX_RETRY_DELAY_MS = 15_000
/** Readiness follows the database within about this (plus the ping's own timeout). */
const DATABASE_CHECK_INTERVAL_MS = 500
const DATABASE_CHECK_TIMEOUT_MS = 3_000
/** After the drain only long-lived streams (health Watch) remain; they need no long grace. */
const GRPC_CLOSE_GRACE_MS = 1_000

export interface RunningServer {
  restPort: number
  grpcPort: number
  lifecycle: Lifecycle
  /** The use cases' context, once the server is READY (UNAVAILABLE before). */
  readonly context: DomainContext
  /** The background job processor, once the server is READY (tests register their own kinds on it). */
  readonly jobs: JobProcessor
  tls: TlsMaterial | undefined
  /** Resolves once the server first reaches READY. */
  ready: Promise<void>
  /** Stops intake, lets in-flight work finish (up to the shutdown timeout), closes everything. */
  shutdown(reason: string): Promise<void>
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(Object.assign(new Error('database check timed out'), { code: 'ETIMEDOUT' })),
      ms,
    )
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref())

export interface StartOptions {
  /** Job processor tuning; tests shorten the retry delays. */
  jobs?: Partial<JobProcessorOptions>
  /** How long a connectivity probe waits for the provider. */
  probeTimeoutMs?: number
  /** Batching, timeouts and retries of embedding calls; tests shorten the waits. */
  embeddingPolicy?: Partial<EmbeddingPolicy>
  /** Where the phases before READY are recorded; `memsvc serve` passes one timed from the process's start. */
  startup?: StartupTimeline
  /** Said to while start-up does long work that is progress (src/lifecycle/startup-keepalive.ts). */
  startupKeepalive?: StartupKeepalive
  /** How often startupKeepalive is said to (STARTUP_KEEPALIVE_MS); tests shorten it. */
  startupKeepaliveMs?: number
}

/** The REST listener with every route, wired to `server` (tests wire it to a context of their own). */
export function createRestServer(options: {
  config: ServerConfig
  server: ServerContext
  lifecycle: Lifecycle
  metrics: ServerMetrics
  log: Logger
  tls?: TlsMaterial
}): HttpServer {
  const { config, server, lifecycle, metrics, log, tls } = options
  const http = new HttpServer({
    uws: loadUws(),
    tls,
    maxBodyBytes: config.maxMessageBytes,
    // Checked from the headers before a body is read; UNAVAILABLE (503) while the server is starting.
    authenticate: (authorization) => server.domain.identify({ requestId: '', transport: 'rest', authorization }),
    lifecycle,
    metrics,
    log,
  })
  registerRestRoutes(http, server, metrics, config)
  return http
}

/** The parts a server gains as it starts; shutdown closes whichever exist by then. */
interface StartedParts {
  database?: Database
  jobs?: JobProcessor
  upkeep?: TableUpkeep
  databaseWatch?: NodeJS.Timeout
  /** Bringing the vector indexes up to date (src/db/vector-index-upkeep.ts); a stop cancels it. */
  indexUpkeep?: Promise<unknown>
  /** LOCAL embedders' models and inference threads (threads start on first use). */
  localModels?: LocalModels
  /** Document extraction threads and the OCR engine (both start on first use). */
  documents?: { pool: ExtractionPool; ocr: TesseractOcrEngine }
  stopIndexUpkeep: AbortController
  stopping: boolean
}

type Listeners = Awaited<ReturnType<typeof listen>>

/**
 * Starts both listeners at once (probes answer while STARTING, API calls get 503), then
 * reaches the database with backoff, applies migrations, builds the DomainContext and
 * becomes READY. A database lost later only flips readiness until it is back.
 */
export async function startServer(
  config: ServerConfig,
  log: Logger,
  options: StartOptions = {},
): Promise<RunningServer> {
  const startup = options.startup ?? new StartupTimeline()
  const licenses = startup.timeSync('files', () => {
    preparePrivateDataDir(config.dataDir, log)
    return readLicenseSummary(config.licenseDir)
  })
  const lifecycle = new Lifecycle()
  warnAboutOperatorSettings(config, licenses.present, log)
  const tls = await startup.time('tls', () => resolveTlsMaterial(config.tls, config.dataDir, log))
  // Logged at every start so that operators can compare it with what a client pinned.
  if (tls)
    log.info('TLS certificate', {
      certFile: tls.certFile,
      selfSigned: tls.selfSigned,
      sha256Fingerprint: tls.fingerprint,
    })
  const drainController = new DrainController(lifecycle, log)
  const facts: ServerFacts = {
    lifecycle,
    log,
    version: VERSION,
    licenses,
    tlsEnabled: tls !== undefined,
    drainController,
  }
  const server = new ServerContext(facts)
  const parts: StartedParts = { stopping: false, stopIndexUpkeep: new AbortController() }
  const metrics = startup.timeSync('metrics', () =>
    createMetrics(
      lifecycle,
      async () => (parts.database ? parts.database.poolStats() : []),
      () => parts.database?.replicas?.status() ?? [],
    ),
  )
  const listeners = await listen(config, server, metrics, tls, startup)

  const ready = becomeReady(config, server, metrics, parts, options, startup)
  ready.catch((error: unknown) => log.error('start-up failed', { error: error as Error }))
  let stopped: Promise<void> | undefined
  const shutdown = (reason: string) => (stopped ??= stopServer(config, server, listeners, parts, ready, reason))

  return {
    restPort: listeners.restPort,
    grpcPort: listeners.grpcPort,
    lifecycle,
    get context() {
      return server.domain
    },
    get jobs() {
      if (!parts.jobs) throw new Error('the job processor starts when the server becomes READY')
      return parts.jobs
    },
    tls,
    ready,
    shutdown,
  }
}

/** Loads the encryption key, reaches and prepares the database, opens the domain and starts the jobs. */
async function becomeReady(
  config: ServerConfig,
  server: ServerContext,
  metrics: ServerMetrics,
  parts: StartedParts,
  options: StartOptions,
  startup: StartupTimeline,
): Promise<void> {
  const { lifecycle, log, drainController } = server.facts
  // A bad key file fails start-up before the database is touched.
  const encryptionKey = startup.timeSync('encryption-key', () =>
    loadEncryptionKey(config.encryptionKeyFile, config.dataDir, log),
  )
  const database = await startup.time('database', () => openDatabase(config, log, startup))
  parts.database = database
  log.info('database', { target: database.description })
  const vectorSupport = await startup.time('schema', () =>
    prepareDatabase(database, encryptionKey, log, () => parts.stopping),
  )
  if (parts.stopping || !vectorSupport) return
  if (database.replicas) {
    await startup.time('read-replicas', () => database.replicas!.start())
    log.info('read replicas', { replicas: database.replicas.status() })
  }
  // The embedded database's one connection would be held by the build: there it comes before READY.
  if (vectorSupport.available && database.engine === 'embedded')
    await startup.time('vector-indexes', () =>
      keepingStartupAlive(
        options.startupKeepalive,
        'bringing vector indexes up to date (rebuilding those of an earlier version)',
        () => upkeepVectorIndexes(database.primary, log, parts.stopIndexUpkeep.signal),
        options.startupKeepaliveMs,
      ),
    )
  const jobsStartMs = performance.now()
  const jobs = new JobProcessor(database.background, log, metrics.registry, () => lifecycle.ready, options.jobs)
  parts.jobs = jobs
  const spaceRows = new SpaceRowsCache()
  spaceRows.start(database, log)
  const localModels = new LocalModels(config.localEmbedding)
  parts.localModels = localModels
  const ocr = new TesseractOcrEngine({
    concurrency: config.documents.ocrConcurrency,
    languagesDir: config.documents.ocrLanguagesDir,
    maxImagePixels: DEFAULT_EXTRACTION_LIMITS.maxImagePixels,
  })
  const extraction = new ExtractionPool({
    threads: config.documents.threads,
    memoryLimitMb: config.documents.memoryLimitMb,
    documentTimeoutMs: DEFAULT_EXTRACTION_TIMEOUT_MS,
    ocr,
  })
  parts.documents = { pool: extraction, ocr }
  registerJobHandlers(
    jobs,
    { secrets: encryptionKey.box, localModels, extractor: extraction, log },
    options,
    (spaceId) => spaceRows.forgetSpace(spaceId),
  )
  drainController.addIntake(jobs)
  // Replicas share a PostgreSQL queue, so there a claim is only taken back when its lease expires.
  if (database.engine === 'embedded') await jobs.releaseClaimsOfEarlierProcess()
  startup.add('jobs', jobsStartMs)
  const queryEmbeddings = new QueryEmbeddingCache({
    observe: (outcome) => metrics.queryEmbeddingCache.inc({ outcome }),
  })
  const readRouting = new ReadRouting(() => domain.sql, database.replicas, metrics.dbReads)
  readRouting.listenToPeers(database)
  const domain: DomainContext = new DomainContext(server.facts, {
    database,
    readRouting,
    secrets: encryptionKey.box,
    jobs,
    vectorSupport,
    queryEmbeddings,
    spaceRows,
    localModels,
    documentLimits: {
      maxUploadBytes: config.documents.maxUploadBytes,
      maxImagePixels: DEFAULT_EXTRACTION_LIMITS.maxImagePixels,
      ocrLanguages: () => ocr.availableLanguages(),
    },
  })
  server.open(domain)
  lifecycle.setDatabaseReachable(true)
  lifecycle.transition('READY')
  jobs.start()
  parts.upkeep = new TableUpkeep(database.background, log)
  parts.upkeep.start()
  if (vectorSupport.available && database.engine === 'postgresql')
    parts.indexUpkeep = upkeepVectorIndexes(database.background, log, parts.stopIndexUpkeep.signal).catch(
      (error: unknown) => log.warn('cannot bring the vector indexes up to date', { error: error as Error }),
    )
  log.info('ready', { state: lifecycle.state, startupMs: Math.round(startup.elapsedMs()), phasesMs: startup.summary() })
  watchDatabase(database, lifecycle, log, parts)
}

/** Pings the database every DATABASE_CHECK_INTERVAL_MS until shutdown, one ping at a time. */
function watchDatabase(database: Database, lifecycle: Lifecycle, log: Logger, parts: StartedParts): void {
  const check = () =>
    checkDatabase(database, lifecycle, log).finally(() => {
      if (!parts.stopping) parts.databaseWatch = setTimeout(check, DATABASE_CHECK_INTERVAL_MS).unref()
    })
  parts.databaseWatch = setTimeout(check, DATABASE_CHECK_INTERVAL_MS).unref()
}

/** Drains (probes keep answering, not ready, so load balancers see it), then closes listeners, domain and database. */
async function stopServer(
  config: ServerConfig,
  server: ServerContext,
  listeners: Listeners,
  parts: StartedParts,
  ready: Promise<void>,
  reason: string,
): Promise<void> {
  const { lifecycle, log, drainController } = server.facts
  parts.stopping = true
  log.info('shutting down', { reason, inFlight: lifecycle.inFlight })
  const outcome = await drainController.drain(reason, config.shutdownTimeoutMs)
  if (!outcome.quiesced)
    log.warn('shutdown timeout passed with requests still in flight', { inFlight: lifecycle.inFlight })
  listeners.http.close()
  await listeners.grpc.shutdown(GRPC_CLOSE_GRACE_MS)
  if (parts.databaseWatch) clearTimeout(parts.databaseWatch)
  await ready.catch(() => {})
  parts.stopIndexUpkeep.abort()
  await parts.indexUpkeep
  await parts.upkeep?.stop()
  // After the drain: no job or request embeds any more. Each thread releases its models and ends.
  await parts.localModels
    ?.close()
    .catch((error: unknown) => log.warn('stopping the local inference threads failed', { error: error as Error }))
  await parts.documents?.pool
    .close()
    .then(() => parts.documents?.ocr.close())
    .catch((error: unknown) => log.warn('stopping the document threads failed', { error: error as Error }))
  await server.domainIfOpen
    ?.close()
    .catch((error: unknown) => log.warn('stopping authentication failed', { error: error as Error }))
  await parts.database
    ?.close()
    .catch((error: unknown) => log.warn('closing the database failed', { error: error as Error }))
  log.info('stopped', { state: lifecycle.state })
}

function warnAboutOperatorSettings(config: ServerConfig, licencesPresent: boolean, log: Logger): void {
  if (!licencesPresent) log.warn('licence directory is missing or empty; set --license-dir', { dir: config.licenseDir })
  if (config.metrics.authDisabled) log.warn('GET /metrics is served without a secret (--metrics-auth-disabled)')
  else if (config.metrics.usingDefaultSecret) {
    log.warn('GET /metrics uses the built-in default secret; set --metrics-scrape-secret or SERVICE_METRICS_SECRET')
  }
}

/** Both listeners, with every route and service registered; they answer from here on, before the database is reached. */
async function listen(
  config: ServerConfig,
  server: ServerContext,
  metrics: ServerMetrics,
  tls: TlsMaterial | undefined,
  startup: StartupTimeline,
) {
  const { lifecycle, log } = server.facts
  const http = startup.timeSync('rest-routes', () => createRestServer({ config, server, lifecycle, metrics, log, tls }))
  const grpc = startup.timeSync('grpc-services', () => {
    const created = new GrpcServer({ tls, maxMessageBytes: config.maxMessageBytes, lifecycle, metrics, log })
    registerGrpcServices(created, server)
    created.addStandardServices(() => readAsset('descriptor.binpb'))
    return created
  })
  try {
    const restPort = await startup.time('rest-bind', () => http.listen(config.bindAddress, config.restPort))
    const grpcPort = await startup.time('grpc-bind', () => grpc.bind(config.bindAddress, config.grpcPort))
    const scheme = tls ? 'https' : 'http'
    log.info('listening', {
      rest: `${scheme}://${config.bindAddress}:${restPort}/v1`,
      grpc: `${config.bindAddress}:${grpcPort}`,
      tls: tls ? 'on' : 'off',
      version: VERSION,
    })
    return { http, grpc, restPort, grpcPort }
  } catch (error) {
    http.close()
    grpc.server.forceShutdown()
    throw error
  }
}

/**
 * Waits for the database with backoff, applies migrations, sets up vector storage where
 * pgvector exists, and checks that the database recorded this encryption key (another key
 * would make the stored secrets unreadable); a database that has all of that already costs
 * one query. Returns undefined when the server is stopped meanwhile.
 */
async function prepareDatabase(
  database: Database,
  encryptionKey: LoadedKey,
  log: Logger,
  stopping: () => boolean,
): Promise<VectorSupport | undefined> {
  let delay = FIRST_RETRY_DELAY_MS
  for (let attempt = 1; !stopping(); attempt++) {
    try {
      // One query answers both whether the database is reachable and whether it needs any work.
      const current = await withTimeout(
        currentSchemaVectorSupport(database.primary, encryptionKey.box.keyId),
        DATABASE_CHECK_TIMEOUT_MS,
      )
      if (current) return current
      const applied = await migrate(database.primary)
      if (applied.length > 0) log.info('applied migrations', { versions: applied.join(',') })
      const vectorSupport = await prepareVectorStorage(database.primary)
      if (!vectorSupport.available) log.warn('memories are unavailable', { reason: vectorSupport.reason })
      verifyEncryptionKey(encryptionKey, await encryptionKeySql.recordKeyId(database.primary, encryptionKey.box.keyId))
      return vectorSupport
    } catch (error) {
      if (error instanceof EncryptionKeyError) throw error
      // Unreachable (including our own check timing out, ETIMEDOUT) is expected while the database comes up.
      if (!isDatabaseUnreachable(error) && attempt > 1) {
        log.error('database start-up failed', { error: error as Error, attempt })
      } else {
        log.warn('database not reachable yet; retrying', { error: error as Error, attempt, retryInMs: delay })
      }
      await sleep(delay)
      delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS)
    }
  }
  return undefined
}

/**
 * Readiness follows the database, flipped both ways and logged only on change. One ping at
 * a time (the caller schedules the next when this one ends): a ping that waits out its
 * timeout must not pile up behind the next.
 */
async function checkDatabase(database: Database, lifecycle: Lifecycle, log: Logger): Promise<void> {
  try {
    await withTimeout(database.ping(), database.pingTimeoutMs)
    if (!lifecycle.databaseReachable) log.info('database reachable again')
    if (lifecycle.databaseDiskFull) log.info('database disk has space again')
    lifecycle.setDatabaseReachable(true)
    lifecycle.setDatabaseDiskFull(false)
  } catch (error) {
    if (isDatabaseDiskFull(error)) {
      if (!lifecycle.databaseDiskFull)
        log.warn('database disk full; readiness is off and writes get 503 until space is freed', {
          error: error as Error,
        })
      lifecycle.setDatabaseDiskFull(true)
    } else {
      if (lifecycle.databaseReachable)
        log.warn('database unreachable; readiness is off and requests get 503 until it is back', {
          error: error as Error,
        })
      lifecycle.setDatabaseReachable(false)
    }
  }
}
