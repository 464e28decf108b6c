import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { installDir } from '../runtime/environment.js'
import { defaultDataDir } from '../runtime/paths.js'
import { type DatabaseTarget, DatabaseUrlError, parseDatabaseUrl } from './database-url.js'

/** A bad setting. main() prints `error: --flag: message` and exits with EXIT_CONFIG_ERROR. */
export class ConfigError extends Error {
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(`--${flag}: ${message}`)
  }
}

export const EXIT_CONFIG_ERROR = 2

/** Deliberately public: scrapes work out of the box, and a warning is logged while it is in use. */
export const DEFAULT_METRICS_SECRET = 'memsvc-default-metrics-secret'
const DEFAULT_SELF_SIGNED_HOSTNAMES = 'localhost,127.0.0.1,::1'
const BYTES_PER_MB = 1024 * 1024
/** gRPC lengths are int32, so 2047 MB is the largest message grpc-js can express. */
const MAX_MESSAGE_SIZE_MB = 2047
const MAX_TCP_PORT = 65535
const DEFAULT_SHUTDOWN_TIMEOUT_SEC = 30
/** Seconds of staleness a reader of another key's writes may see before the replica is set aside. */
const DEFAULT_READ_MAX_LAG_MS = 5_000
/** A replica streaming normally replays a write within milliseconds; a second means it is behind. */
const DEFAULT_READ_YOUR_WRITES_WAIT_MS = 1_000
/** A check at least this often; a lag bound below two intervals is checked twice within it. */
const MAX_REPLICA_CHECK_INTERVAL_MS = 1_000

/** 'list': a flag given once per value, or its environment variable with the values separated by commas. */
type OptionKind = 'port' | 'count' | 'positive' | 'string' | 'boolean' | 'list'

export interface OptionSpec {
  flag: string
  env?: string
  kind: OptionKind
  defaultValue?: string | number | boolean
  /** Shown in --help instead of the default value. */
  defaultText?: string
  describe: string
  group: string
}

const SERVER = 'Server:'
const DATABASE = 'Database:'
const SECURITY = 'TLS and metrics:'
const LOCAL_EMBEDDING = 'Local embedding models:'
const DOCUMENTS = 'Documents (PDF, Office, HTML, images and OCR):'
/** The largest document upload when the operator sets none, in MB. */
export const DEFAULT_MAX_UPLOAD_MB = 100
/** Each extraction thread's JavaScript heap, in MB: pdfjs holds a page's objects, not the whole document. */
export const DEFAULT_DOCUMENT_MEMORY_MB = 1024
/** Languages for OCR besides the bundled English: <data-dir>/ocr-languages/<code>.traineddata(.gz). */
export const DATA_DIR_OCR_LANGUAGES = 'ocr-languages'

/**
 * Inference threads by default: half the cores, at least one, so that a long ingest leaves
 * the other half to the event loop that answers API calls and to the database.
 */
export const defaultLocalEmbedderThreads = () => Math.max(1, Math.floor(os.availableParallelism() / 2))
/** Batches that may wait for an inference thread, per priority, before more are refused (and retried). */
const DEFAULT_LOCAL_EMBEDDER_QUEUE = 64
/** The models' weights may take this share of the host's memory by default, over all inference threads. */
const DEFAULT_LOCAL_MODEL_MEMORY_SHARE = 0.25
export const defaultLocalModelMemoryMb = () =>
  Math.max(1, Math.floor((os.totalmem() * DEFAULT_LOCAL_MODEL_MEMORY_SHARE) / BYTES_PER_MB))
/** The data directory's own models, added with `memsvc model add`; searched before the bundled ones. */
export const DATA_DIR_MODELS = 'models'

/** Every server setting: flag, environment variable and default. The spec's table, plus design additions. */
export const SERVER_OPTIONS: OptionSpec[] = [
  {
    flag: 'rest-port',
    env: 'SERVICE_REST_PORT',
    kind: 'port',
    defaultValue: 8080,
    describe: 'REST listening port',
    group: SERVER,
  },
  {
    flag: 'grpc-port',
    env: 'SERVICE_GRPC_PORT',
    kind: 'port',
    defaultValue: 9090,
    describe: 'gRPC listening port',
    group: SERVER,
  },
  {
    flag: 'bind-address',
    env: 'SERVICE_BIND_ADDRESS',
    kind: 'string',
    defaultValue: '0.0.0.0',
    describe: 'Address both listeners bind to',
    group: SERVER,
  },
  {
    flag: 'grpc-max-message-size-mb',
    env: 'GRPC_MAX_MESSAGE_SIZE_MB',
    kind: 'positive',
    defaultValue: 1024,
    describe:
      'Largest gRPC message (RESOURCE_EXHAUSTED above it); also caps every REST body limit (413 above it); ' +
      'each operation has its own lower limit',
    group: SERVER,
  },
  {
    flag: 'data-dir',
    env: 'SERVICE_DATA_DIR',
    kind: 'string',
    defaultText: '$STATE_DIRECTORY (systemd), else ~/.local/share/memsvc',
    describe: 'Embedded database, self-signed certificate and encryption key',
    group: SERVER,
  },
  {
    flag: 'license-dir',
    env: 'SERVICE_LICENSE_DIR',
    kind: 'string',
    defaultText: 'licenses/ next to the executable',
    describe: 'Directory holding the licence files',
    group: SERVER,
  },
  {
    flag: 'shutdown-timeout-sec',
    env: 'SERVICE_SHUTDOWN_TIMEOUT_SEC',
    kind: 'positive',
    defaultValue: DEFAULT_SHUTDOWN_TIMEOUT_SEC,
    describe: 'On SIGTERM/SIGINT, how long in-flight requests may take to finish',
    group: SERVER,
  },
  {
    flag: 'log-level',
    env: 'SERVICE_LOG_LEVEL',
    kind: 'string',
    defaultValue: 'info',
    describe: 'debug, info, warn or error',
    group: SERVER,
  },
  {
    flag: 'db-url',
    env: 'DB_URL',
    kind: 'string',
    defaultText: 'embedded single-node database',
    describe: 'jdbc:postgresql://host:port/db (or postgres://…) of the primary database',
    group: DATABASE,
  },
  {
    flag: 'db-read-url',
    env: 'SERVICE_DB_READ_URLS',
    kind: 'list',
    defaultText: 'none: every read goes to the primary',
    describe:
      'A streaming replica of the primary to read from (retrieval, lists, gets); repeat the flag for each, ' +
      'or separate them with commas in the variable. Writes, jobs and migrations use the primary',
    group: DATABASE,
  },
  {
    flag: 'db-read-max-lag-ms',
    env: 'SERVICE_DB_READ_MAX_LAG_MS',
    kind: 'positive',
    defaultValue: DEFAULT_READ_MAX_LAG_MS,
    describe:
      'A replica further behind the primary than this (or not answering) leaves the rotation until it has caught up',
    group: DATABASE,
  },
  {
    flag: 'db-read-your-writes-wait-ms',
    env: 'SERVICE_DB_READ_YOUR_WRITES_WAIT_MS',
    kind: 'count',
    defaultValue: DEFAULT_READ_YOUR_WRITES_WAIT_MS,
    describe:
      "After an API key's write, how long its reads wait for a replica to replay it before they read from the primary",
    group: DATABASE,
  },
  {
    flag: 'debug-db-listen',
    env: 'SERVICE_DEBUG_DB_LISTEN',
    kind: 'string',
    defaultText: 'off',
    describe:
      'Debug installs only: serve the embedded database over the PostgreSQL protocol on [ADDR:]PORT (ADDR default 127.0.0.1), for psql',
    group: DATABASE,
  },
  {
    flag: 'db-user',
    env: 'DB_USER',
    kind: 'string',
    describe: 'Database user (overrides one in the URL)',
    group: DATABASE,
  },
  {
    flag: 'db-password',
    env: 'DB_PASSWORD',
    kind: 'string',
    describe: 'Database password (overrides one in the URL)',
    group: DATABASE,
  },
  {
    flag: 'db-min-idle',
    env: 'DB_MIN_IDLE',
    kind: 'count',
    defaultValue: 2,
    describe: 'Minimum idle connections, primary pool',
    group: DATABASE,
  },
  {
    flag: 'db-max-pool',
    env: 'DB_MAX_POOL_SIZE',
    kind: 'positive',
    defaultValue: 50,
    describe: 'Maximum connections, primary pool',
    group: DATABASE,
  },
  {
    flag: 'background-db-min-idle',
    env: 'BACKGROUND_DB_MIN_IDLE',
    kind: 'count',
    defaultValue: 0,
    describe: 'Minimum idle connections, background job pool',
    group: DATABASE,
  },
  {
    flag: 'background-db-max-pool',
    env: 'BACKGROUND_DB_MAX_POOL_SIZE',
    kind: 'positive',
    defaultValue: 20,
    describe: 'Maximum connections, background job pool',
    group: DATABASE,
  },
  {
    flag: 'tls-disabled',
    kind: 'boolean',
    defaultValue: false,
    describe: 'Serve plaintext (TLS is on by default)',
    group: SECURITY,
  },
  {
    flag: 'tls-cert-file',
    env: 'SERVICE_TLS_CERT_FILE',
    kind: 'string',
    describe: 'PEM certificate or chain; needs --tls-key-file',
    group: SECURITY,
  },
  {
    flag: 'tls-key-file',
    env: 'SERVICE_TLS_KEY_FILE',
    kind: 'string',
    describe: 'PEM private key; needs --tls-cert-file',
    group: SECURITY,
  },
  {
    flag: 'tls-trust-cert-file',
    env: 'SERVICE_TLS_TRUST_CERT_FILE',
    kind: 'string',
    describe: 'Reserved for client-certificate auth; accepted but unused',
    group: SECURITY,
  },
  {
    flag: 'metrics-scrape-secret',
    env: 'SERVICE_METRICS_SECRET',
    kind: 'string',
    defaultText: 'built-in default (logs a warning)',
    describe: 'Secret GET /metrics requires in X-Service-Metrics-Key; also -Dservice.metrics.secret=VALUE',
    group: SECURITY,
  },
  {
    flag: 'metrics-auth-disabled',
    kind: 'boolean',
    defaultValue: false,
    describe: 'Serve /metrics without the secret',
    group: SECURITY,
  },
  {
    flag: 'encryption-key-file',
    env: 'SERVICE_ENCRYPTION_KEY_FILE',
    kind: 'string',
    defaultText: '<data-dir>/encryption.key, created if absent',
    describe:
      'Key (32 bytes: raw, 64 hex digits or base64) encrypting stored provider secrets; ' +
      'every server sharing the database must use the same one',
    group: SECURITY,
  },
  {
    flag: 'models-dir',
    env: 'SERVICE_MODELS_DIR',
    kind: 'string',
    defaultText: 'models/ next to the executable',
    describe: 'Bundled local embedding models (one directory each); <data-dir>/models is searched first',
    group: LOCAL_EMBEDDING,
  },
  {
    flag: 'local-embedder-threads',
    env: 'SERVICE_LOCAL_EMBEDDER_THREADS',
    kind: 'positive',
    defaultText: 'half the CPU cores, at least 1',
    describe: 'Threads that run LOCAL embedders (each uses one core while it embeds)',
    group: LOCAL_EMBEDDING,
  },
  {
    flag: 'local-embedder-queue',
    env: 'SERVICE_LOCAL_EMBEDDER_QUEUE',
    kind: 'positive',
    defaultValue: DEFAULT_LOCAL_EMBEDDER_QUEUE,
    describe: 'Embedding batches that may wait for a thread (ingestion and queries each); more are retried later',
    group: LOCAL_EMBEDDING,
  },
  {
    flag: 'local-model-memory-mb',
    env: 'SERVICE_LOCAL_MODEL_MEMORY_MB',
    kind: 'positive',
    defaultText: 'a quarter of the host memory',
    describe: "Most the models' weights may take, all threads together; a larger model is refused before it loads",
    group: LOCAL_EMBEDDING,
  },
  {
    flag: 'max-upload-mb',
    env: 'SERVICE_MAX_UPLOAD_MB',
    kind: 'positive',
    defaultValue: DEFAULT_MAX_UPLOAD_MB,
    describe: 'Largest document a memory may be made from (413 above it); uploads are streamed to the database',
    group: DOCUMENTS,
  },
  {
    flag: 'document-threads',
    env: 'SERVICE_DOCUMENT_THREADS',
    kind: 'positive',
    defaultValue: 1,
    describe: 'Threads that extract text from documents and render their pages',
    group: DOCUMENTS,
  },
  {
    flag: 'ocr-concurrency',
    env: 'SERVICE_OCR_CONCURRENCY',
    kind: 'positive',
    defaultValue: 1,
    describe: 'Pages or images recognised by OCR at once, in all (each takes one core while it runs)',
    group: DOCUMENTS,
  },
  {
    flag: 'document-memory-mb',
    env: 'SERVICE_DOCUMENT_MEMORY_MB',
    kind: 'positive',
    defaultValue: DEFAULT_DOCUMENT_MEMORY_MB,
    describe: "Each extraction thread's heap; a document that needs more ends FAILED",
    group: DOCUMENTS,
  },
]

export const SELF_SIGNED_HOSTNAMES_ENV = 'SERVICE_TLS_SELF_SIGNED_HOSTNAMES'
export const METRICS_SECRET_PROPERTY = 'service.metrics.secret'

export interface PoolSettings {
  minIdle: number
  max: number
}

export type TlsSettings =
  | { mode: 'disabled' }
  | { mode: 'files'; certFile: string; keyFile: string; trustCertFile?: string }
  | { mode: 'self-signed'; hostnames: string[]; trustCertFile?: string }

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface ServerConfig {
  restPort: number
  grpcPort: number
  bindAddress: string
  maxMessageBytes: number
  dataDir: string
  licenseDir: string
  shutdownTimeoutMs: number
  logLevel: LogLevel
  /** Absent: embedded single-node database under dataDir. */
  database?: DatabaseTarget
  /** Streaming replicas of `database` that reads may use; empty without --db-read-url. */
  readReplicas: DatabaseTarget[]
  readRouting: { maxLagMs: number; readYourWritesWaitMs: number; checkIntervalMs: number }
  primaryPool: PoolSettings
  backgroundPool: PoolSettings
  tls: TlsSettings
  metrics: { secret: string; usingDefaultSecret: boolean; authDisabled: boolean }
  /** Absent: `<dataDir>/encryption.key`, created on first start. */
  encryptionKeyFile?: string
  /** Debug installs: where the embedded database also listens for psql. Absent: nowhere. */
  debugDbListen?: ListenAddress
  localEmbedding: LocalEmbeddingSettings
  documents: DocumentSettings
}

/** Where LOCAL embedders' models are found and how they run (src/providers/local/local-models.ts). */
export interface DocumentSettings {
  maxUploadBytes: number
  threads: number
  ocrConcurrency: number
  memoryLimitMb: number
  /** Extra OCR languages (DATA_DIR_OCR_LANGUAGES under the data directory). */
  ocrLanguagesDir: string
}

export interface LocalEmbeddingSettings {
  /** Searched in order: <data-dir>/models, then the bundled models directory. */
  modelDirectories: string[]
  threads: number
  maxQueuedBatches: number
  memoryBoundBytes: number
}

export interface ListenAddress {
  host: string
  port: number
}

/** The debug database port answers only on loopback unless the operator names an address. */
const DEBUG_DB_DEFAULT_HOST = '127.0.0.1'

/** "[ADDR:]PORT", with an IPv6 address in brackets ("[::1]:5432"). */
export function parseListenAddress(flag: string, text: string): ListenAddress {
  const match = /^(?:(\[[0-9a-f:.]+\]|[^:\s]+):)?(\d+)$/i.exec(text.trim())
  const port = match ? Number(match[2]) : Number.NaN
  if (!match || port > MAX_TCP_PORT)
    throw new ConfigError(flag, `expected [ADDR:]PORT with PORT 0-${MAX_TCP_PORT}, got "${text}"`)
  return { host: match[1]?.replace(/^\[|\]$/g, '') ?? DEBUG_DB_DEFAULT_HOST, port }
}

export type RawOptions = Record<string, unknown>

/** Splits `-Dkey=value` system properties (a JVM habit the spec keeps) from the other arguments. */
export function extractSystemProperties(args: string[]): { args: string[]; properties: Record<string, string> } {
  const properties: Record<string, string> = {}
  const rest: string[] = []
  for (const arg of args) {
    const match = /^-D([\w.-]+)=(.*)$/s.exec(arg)
    if (match) properties[match[1]!] = match[2]!
    else rest.push(arg)
  }
  return { args: rest, properties }
}

function pick(
  spec: OptionSpec,
  flags: RawOptions,
  env: NodeJS.ProcessEnv,
): { value: unknown; source: string } | undefined {
  const fromFlag = flags[spec.flag]
  if (fromFlag !== undefined) return { value: fromFlag, source: `--${spec.flag}` }
  if (spec.env) {
    const fromEnv = env[spec.env]
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: spec.env }
  }
  if (spec.defaultValue !== undefined) return { value: spec.defaultValue, source: 'default' }
  return undefined
}

function asInteger(spec: OptionSpec, raw: unknown, min: number, max: number): number {
  const text = String(raw).trim()
  const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(spec.flag, `expected a whole number from ${min} to ${max}, got "${text}"`)
  }
  return value
}

function asBoolean(spec: OptionSpec, raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw
  const text = String(raw).toLowerCase()
  if (['true', '1', 'yes'].includes(text)) return true
  if (['false', '0', 'no'].includes(text)) return false
  throw new ConfigError(spec.flag, `expected true or false, got "${String(raw)}"`)
}

function readableFile(flag: string, file: string): string {
  const resolved = path.resolve(file)
  try {
    fs.accessSync(resolved, fs.constants.R_OK)
    if (!fs.statSync(resolved).isFile()) throw new Error('not a regular file')
  } catch (error) {
    throw new ConfigError(
      flag,
      `cannot read ${resolved}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
  return resolved
}

/** A comma starts a new value only where a URL starts: a multi-host URL keeps its own commas. */
const LIST_SEPARATOR = /,(?=\s*(?:jdbc:postgresql|postgres(?:ql)?):\/\/)/

function listValues(raw: unknown): string[] {
  const given = Array.isArray(raw) ? raw.map(String) : String(raw).split(LIST_SEPARATOR)
  return given.map((value) => value.trim()).filter((value) => value !== '')
}

const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error']

/**
 * Resolves every setting with flag > environment > default and validates it.
 * Throws ConfigError naming the flag for the first bad value.
 */
export function resolveServerConfig(
  flags: RawOptions,
  env: NodeJS.ProcessEnv = process.env,
  systemProperties: Record<string, string> = {},
): ServerConfig {
  const values = new Map<string, unknown>()
  for (const spec of SERVER_OPTIONS) {
    const picked = pick(spec, flags, env)
    if (picked === undefined) continue
    switch (spec.kind) {
      case 'port':
        values.set(spec.flag, asInteger(spec, picked.value, 0, MAX_TCP_PORT))
        break
      case 'count':
        values.set(spec.flag, asInteger(spec, picked.value, 0, Number.MAX_SAFE_INTEGER))
        break
      case 'positive':
        values.set(spec.flag, asInteger(spec, picked.value, 1, Number.MAX_SAFE_INTEGER))
        break
      case 'boolean':
        values.set(spec.flag, asBoolean(spec, picked.value))
        break
      case 'string':
        values.set(spec.flag, String(picked.value))
        break
      case 'list':
        values.set(spec.flag, listValues(picked.value))
        break
    }
  }
  const get = <T>(flag: string) => values.get(flag) as T

  const maxMessageMb = get<number>('grpc-max-message-size-mb')
  if (maxMessageMb > MAX_MESSAGE_SIZE_MB) {
    throw new ConfigError(
      'grpc-max-message-size-mb',
      `expected a whole number from 1 to ${MAX_MESSAGE_SIZE_MB}, got "${maxMessageMb}"`,
    )
  }

  const logLevel = get<string>('log-level') as LogLevel
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError('log-level', `expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)

  const primaryPool = { minIdle: get<number>('db-min-idle'), max: get<number>('db-max-pool') }
  if (primaryPool.minIdle > primaryPool.max) {
    throw new ConfigError('db-min-idle', `${primaryPool.minIdle} is more than --db-max-pool ${primaryPool.max}`)
  }
  const backgroundPool = { minIdle: get<number>('background-db-min-idle'), max: get<number>('background-db-max-pool') }
  if (backgroundPool.minIdle > backgroundPool.max) {
    throw new ConfigError(
      'background-db-min-idle',
      `${backgroundPool.minIdle} is more than --background-db-max-pool ${backgroundPool.max}`,
    )
  }

  let database: DatabaseTarget | undefined
  const dbUrl = get<string | undefined>('db-url')
  if (dbUrl !== undefined) {
    try {
      database = parseDatabaseUrl(dbUrl)
    } catch (error) {
      if (error instanceof DatabaseUrlError) throw new ConfigError('db-url', error.message)
      throw error
    }
    const user = get<string | undefined>('db-user')
    const password = get<string | undefined>('db-password')
    if (user !== undefined) database.user = user
    if (password !== undefined) database.password = password
    if (!database.user) throw new ConfigError('db-user', 'required with --db-url (or give user= in the URL)')
  }

  const readReplicas = (get<string[] | undefined>('db-read-url') ?? []).map((url, index) => {
    if (!database)
      throw new ConfigError(
        'db-read-url',
        'needs --db-url: the embedded database serves one process and has no replicas ' +
          '(move to PostgreSQL with memsvc space export and space import)',
      )
    try {
      const replica = parseDatabaseUrl(url)
      // A replica is a copy of the primary: the same roles, so the primary's credentials unless the URL names others.
      if (!replica.user) Object.assign(replica, { user: database.user, password: database.password })
      return replica
    } catch (error) {
      if (error instanceof DatabaseUrlError) throw new ConfigError('db-read-url', `URL ${index + 1}: ${error.message}`)
      throw error
    }
  })
  const maxLagMs = get<number>('db-read-max-lag-ms')
  const readRouting = {
    maxLagMs,
    readYourWritesWaitMs: get<number>('db-read-your-writes-wait-ms'),
    checkIntervalMs: Math.min(MAX_REPLICA_CHECK_INTERVAL_MS, Math.max(1, Math.floor(maxLagMs / 2))),
  }

  const debugDbListenText = get<string | undefined>('debug-db-listen')
  const debugDbListen =
    debugDbListenText === undefined ? undefined : parseListenAddress('debug-db-listen', debugDbListenText)
  if (debugDbListen && database)
    throw new ConfigError(
      'debug-db-listen',
      'only for the embedded database; with --db-url connect to that PostgreSQL directly',
    )

  const tlsDisabled = get<boolean>('tls-disabled')
  const certFile = get<string | undefined>('tls-cert-file')
  const keyFile = get<string | undefined>('tls-key-file')
  const trustFile = get<string | undefined>('tls-trust-cert-file')
  let tls: TlsSettings
  if (certFile !== undefined && keyFile === undefined)
    throw new ConfigError('tls-cert-file', 'needs --tls-key-file as well')
  if (keyFile !== undefined && certFile === undefined)
    throw new ConfigError('tls-key-file', 'needs --tls-cert-file as well')
  const trustCertFile = trustFile === undefined ? undefined : readableFile('tls-trust-cert-file', trustFile)
  if (tlsDisabled) {
    tls = { mode: 'disabled' }
  } else if (certFile !== undefined && keyFile !== undefined) {
    tls = {
      mode: 'files',
      certFile: readableFile('tls-cert-file', certFile),
      keyFile: readableFile('tls-key-file', keyFile),
      trustCertFile,
    }
  } else {
    const hostnames = (env[SELF_SIGNED_HOSTNAMES_ENV] || DEFAULT_SELF_SIGNED_HOSTNAMES)
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean)
    if (hostnames.length === 0) throw new ConfigError('tls-cert-file', `${SELF_SIGNED_HOSTNAMES_ENV} names no hostname`)
    tls = { mode: 'self-signed', hostnames, trustCertFile }
  }

  const secretFromFlagOrEnv = pick(SERVER_OPTIONS.find((spec) => spec.flag === 'metrics-scrape-secret')!, flags, env)
  const secret = secretFromFlagOrEnv?.value ?? systemProperties[METRICS_SECRET_PROPERTY]
  if (secret !== undefined && String(secret).length === 0)
    throw new ConfigError('metrics-scrape-secret', 'must not be empty')

  const dataDir = path.resolve(get<string | undefined>('data-dir') ?? defaultDataDir(env))
  const encryptionKeyPath = get<string | undefined>('encryption-key-file')
  const encryptionKeyFile =
    encryptionKeyPath === undefined ? undefined : readableFile('encryption-key-file', encryptionKeyPath)
  const licenseDir = path.resolve(get<string | undefined>('license-dir') ?? path.join(installDir, 'licenses'))
  const modelsDir = path.resolve(get<string | undefined>('models-dir') ?? path.join(installDir, 'models'))
  const localEmbedding: LocalEmbeddingSettings = {
    modelDirectories: [path.join(dataDir, DATA_DIR_MODELS), modelsDir],
    threads: get<number | undefined>('local-embedder-threads') ?? defaultLocalEmbedderThreads(),
    maxQueuedBatches: get<number>('local-embedder-queue'),
    memoryBoundBytes: (get<number | undefined>('local-model-memory-mb') ?? defaultLocalModelMemoryMb()) * BYTES_PER_MB,
  }

  return {
    restPort: get<number>('rest-port'),
    grpcPort: get<number>('grpc-port'),
    bindAddress: get<string>('bind-address'),
    maxMessageBytes: maxMessageMb * BYTES_PER_MB,
    dataDir,
    licenseDir,
    shutdownTimeoutMs: get<number>('shutdown-timeout-sec') * 1000,
    logLevel,
    database,
    readReplicas,
    readRouting,
    primaryPool,
    backgroundPool,
    tls,
    metrics: {
      secret: secret === undefined ? DEFAULT_METRICS_SECRET : String(secret),
      usingDefaultSecret: secret === undefined,
      authDisabled: get<boolean>('metrics-auth-disabled'),
    },
    encryptionKeyFile,
    debugDbListen,
    localEmbedding,
    documents: {
      maxUploadBytes: get<number>('max-upload-mb') * BYTES_PER_MB,
      threads: get<number>('document-threads'),
      ocrConcurrency: get<number>('ocr-concurrency'),
      memoryLimitMb: get<number>('document-memory-mb'),
      ocrLanguagesDir: path.join(dataDir, DATA_DIR_OCR_LANGUAGES),
    },
  }
}
