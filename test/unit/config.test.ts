import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  ConfigError,
  DEFAULT_DOCUMENT_MEMORY_MB,
  DEFAULT_MAX_UPLOAD_MB,
  DEFAULT_METRICS_SECRET,
  defaultLocalEmbedderThreads,
  defaultLocalModelMemoryMb,
  extractSystemProperties,
  resolveServerConfig,
  SERVER_OPTIONS,
  type ServerConfig,
} from '../../src/config/server-config.js'
import { installDir } from '../../src/runtime/environment.js'
import { defaultDataDir } from '../../src/runtime/paths.js'

const MB = 1024 * 1024

// Created at collection time: the it.each tables below name these paths.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-config-'))
// Contents do not matter here: config only checks that the files are readable.
const certFile = path.join(tmp, 'a.crt')
const keyFile = path.join(tmp, 'a.key')
const otherCertFile = path.join(tmp, 'b.crt')
const otherKeyFile = path.join(tmp, 'b.key')
for (const file of [certFile, keyFile, otherCertFile, otherKeyFile]) fs.writeFileSync(file, 'pem')

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** Resolves with no ambient environment at all, so the machine's variables never leak in. */
const resolve = (
  flags: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
  properties: Record<string, string> = {},
) => resolveServerConfig(flags, env, properties)

/** Asserts that resolving fails with a ConfigError naming `flag`, in the one line main() prints. */
function expectConfigError(run: () => unknown, flag: string, messagePart?: string | RegExp): ConfigError {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  expect(caught, `expected a ConfigError for --${flag}`).toBeInstanceOf(ConfigError)
  const error = caught as ConfigError
  expect(error.flag).toBe(flag)
  expect(error.message.startsWith(`--${flag}: `)).toBe(true)
  expect(error.message).not.toContain('\n')
  if (messagePart !== undefined) expect(error.message).toMatch(messagePart)
  return error
}

interface PrecedenceCase {
  flag: string
  env: string
  kind: string
  flagValue: unknown
  envValue: string
  read: (config: ServerConfig) => unknown
  expectedFlag: unknown
  expectedEnv: unknown
  expectedDefault: unknown
  /** Extra flags the option needs to be meaningful. */
  base?: Record<string, unknown>
}

describe('configuration precedence: flag > environment > default', () => {
  const cases = (): PrecedenceCase[] => [
    {
      flag: 'rest-port',
      env: 'SERVICE_REST_PORT',
      kind: 'port',
      flagValue: '8181',
      envValue: '8282',
      read: (c) => c.restPort,
      expectedFlag: 8181,
      expectedEnv: 8282,
      expectedDefault: 8080,
    },
    {
      flag: 'grpc-port',
      env: 'SERVICE_GRPC_PORT',
      kind: 'port',
      flagValue: 9191,
      envValue: '9292',
      read: (c) => c.grpcPort,
      expectedFlag: 9191,
      expectedEnv: 9292,
      expectedDefault: 9090,
    },
    {
      flag: 'bind-address',
      env: 'SERVICE_BIND_ADDRESS',
      kind: 'string',
      flagValue: '127.0.0.1',
      envValue: '::1',
      read: (c) => c.bindAddress,
      expectedFlag: '127.0.0.1',
      expectedEnv: '::1',
      expectedDefault: '0.0.0.0',
    },
    {
      flag: 'grpc-max-message-size-mb',
      env: 'GRPC_MAX_MESSAGE_SIZE_MB',
      kind: 'positive',
      flagValue: '4',
      envValue: '8',
      read: (c) => c.maxMessageBytes,
      expectedFlag: 4 * MB,
      expectedEnv: 8 * MB,
      expectedDefault: 1024 * MB,
    },
    {
      flag: 'data-dir',
      env: 'SERVICE_DATA_DIR',
      kind: 'string',
      flagValue: path.join(tmp, 'flag-dir'),
      envValue: path.join(tmp, 'env-dir'),
      read: (c) => c.dataDir,
      expectedFlag: path.join(tmp, 'flag-dir'),
      expectedEnv: path.join(tmp, 'env-dir'),
      expectedDefault: path.resolve(defaultDataDir()),
    },
    {
      flag: 'license-dir',
      env: 'SERVICE_LICENSE_DIR',
      kind: 'string',
      flagValue: path.join(tmp, 'lic-flag'),
      envValue: path.join(tmp, 'lic-env'),
      read: (c) => c.licenseDir,
      expectedFlag: path.join(tmp, 'lic-flag'),
      expectedEnv: path.join(tmp, 'lic-env'),
      expectedDefault: path.join(installDir, 'licenses'),
    },
    {
      flag: 'models-dir',
      env: 'SERVICE_MODELS_DIR',
      kind: 'string',
      flagValue: path.join(tmp, 'models-flag'),
      envValue: path.join(tmp, 'models-env'),
      // The data directory's models/ comes first, the bundled ones second.
      read: (c) => c.localEmbedding.modelDirectories[1],
      expectedFlag: path.join(tmp, 'models-flag'),
      expectedEnv: path.join(tmp, 'models-env'),
      expectedDefault: path.join(installDir, 'models'),
    },
    {
      flag: 'local-embedder-threads',
      env: 'SERVICE_LOCAL_EMBEDDER_THREADS',
      kind: 'positive',
      flagValue: '3',
      envValue: '5',
      read: (c) => c.localEmbedding.threads,
      expectedFlag: 3,
      expectedEnv: 5,
      expectedDefault: defaultLocalEmbedderThreads(),
    },
    {
      flag: 'local-embedder-queue',
      env: 'SERVICE_LOCAL_EMBEDDER_QUEUE',
      kind: 'positive',
      flagValue: '8',
      envValue: '16',
      read: (c) => c.localEmbedding.maxQueuedBatches,
      expectedFlag: 8,
      expectedEnv: 16,
      expectedDefault: 64,
    },
    {
      flag: 'local-model-memory-mb',
      env: 'SERVICE_LOCAL_MODEL_MEMORY_MB',
      kind: 'positive',
      flagValue: '100',
      envValue: '200',
      read: (c) => c.localEmbedding.memoryBoundBytes / (1024 * 1024),
      expectedFlag: 100,
      expectedEnv: 200,
      expectedDefault: defaultLocalModelMemoryMb(),
    },
    {
      flag: 'max-upload-mb',
      env: 'SERVICE_MAX_UPLOAD_MB',
      kind: 'positive',
      flagValue: '10',
      envValue: '20',
      read: (c) => c.documents.maxUploadBytes / (1024 * 1024),
      expectedFlag: 10,
      expectedEnv: 20,
      expectedDefault: DEFAULT_MAX_UPLOAD_MB,
    },
    {
      flag: 'document-threads',
      env: 'SERVICE_DOCUMENT_THREADS',
      kind: 'positive',
      flagValue: '2',
      envValue: '3',
      read: (c) => c.documents.threads,
      expectedFlag: 2,
      expectedEnv: 3,
      expectedDefault: 1,
    },
    {
      flag: 'ocr-concurrency',
      env: 'SERVICE_OCR_CONCURRENCY',
      kind: 'positive',
      flagValue: '2',
      envValue: '4',
      read: (c) => c.documents.ocrConcurrency,
      expectedFlag: 2,
      expectedEnv: 4,
      expectedDefault: 1,
    },
    {
      flag: 'document-memory-mb',
      env: 'SERVICE_DOCUMENT_MEMORY_MB',
      kind: 'positive',
      flagValue: '256',
      envValue: '512',
      read: (c) => c.documents.memoryLimitMb,
      expectedFlag: 256,
      expectedEnv: 512,
      expectedDefault: DEFAULT_DOCUMENT_MEMORY_MB,
    },
    {
      flag: 'shutdown-timeout-sec',
      env: 'SERVICE_SHUTDOWN_TIMEOUT_SEC',
      kind: 'positive',
      flagValue: '7',
      envValue: '9',
      read: (c) => c.shutdownTimeoutMs,
      expectedFlag: 7000,
      expectedEnv: 9000,
      expectedDefault: 30_000,
    },
    {
      flag: 'log-level',
      env: 'SERVICE_LOG_LEVEL',
      kind: 'string',
      flagValue: 'debug',
      envValue: 'warn',
      read: (c) => c.logLevel,
      expectedFlag: 'debug',
      expectedEnv: 'warn',
      expectedDefault: 'info',
    },
    {
      flag: 'db-url',
      env: 'DB_URL',
      kind: 'string',
      flagValue: 'jdbc:postgresql://flaghost/flagdb?user=u',
      envValue: 'postgres://u@envhost/envdb',
      read: (c) => c.database && `${c.database.hosts[0]}/${c.database.database}`,
      expectedFlag: 'flaghost/flagdb',
      expectedEnv: 'envhost/envdb',
      expectedDefault: undefined,
    },
    {
      flag: 'db-user',
      env: 'DB_USER',
      kind: 'string',
      flagValue: 'flaguser',
      envValue: 'envuser',
      base: { 'db-url': 'jdbc:postgresql://h/db?user=urluser' },
      read: (c) => c.database?.user,
      expectedFlag: 'flaguser',
      expectedEnv: 'envuser',
      expectedDefault: 'urluser',
    },
    {
      flag: 'db-password',
      env: 'DB_PASSWORD',
      kind: 'string',
      flagValue: 'flagpw',
      envValue: 'envpw',
      base: { 'db-url': 'jdbc:postgresql://h/db?user=u&password=urlpw' },
      read: (c) => c.database?.password,
      expectedFlag: 'flagpw',
      expectedEnv: 'envpw',
      expectedDefault: 'urlpw',
    },
    {
      flag: 'db-min-idle',
      env: 'DB_MIN_IDLE',
      kind: 'count',
      flagValue: '0',
      envValue: '5',
      read: (c) => c.primaryPool.minIdle,
      expectedFlag: 0,
      expectedEnv: 5,
      expectedDefault: 2,
    },
    {
      flag: 'db-max-pool',
      env: 'DB_MAX_POOL_SIZE',
      kind: 'positive',
      flagValue: '10',
      envValue: '20',
      read: (c) => c.primaryPool.max,
      expectedFlag: 10,
      expectedEnv: 20,
      expectedDefault: 50,
    },
    {
      flag: 'background-db-min-idle',
      env: 'BACKGROUND_DB_MIN_IDLE',
      kind: 'count',
      flagValue: '3',
      envValue: '4',
      read: (c) => c.backgroundPool.minIdle,
      expectedFlag: 3,
      expectedEnv: 4,
      expectedDefault: 0,
    },
    {
      flag: 'background-db-max-pool',
      env: 'BACKGROUND_DB_MAX_POOL_SIZE',
      kind: 'positive',
      flagValue: '6',
      envValue: '7',
      read: (c) => c.backgroundPool.max,
      expectedFlag: 6,
      expectedEnv: 7,
      expectedDefault: 20,
    },
    {
      flag: 'tls-trust-cert-file',
      env: 'SERVICE_TLS_TRUST_CERT_FILE',
      kind: 'string',
      flagValue: certFile,
      envValue: otherCertFile,
      read: (c) => (c.tls.mode === 'disabled' ? 'disabled' : c.tls.trustCertFile),
      expectedFlag: certFile,
      expectedEnv: otherCertFile,
      expectedDefault: undefined,
    },
    {
      flag: 'metrics-scrape-secret',
      env: 'SERVICE_METRICS_SECRET',
      kind: 'string',
      flagValue: 'from-flag',
      envValue: 'from-env',
      read: (c) => c.metrics.secret,
      expectedFlag: 'from-flag',
      expectedEnv: 'from-env',
      expectedDefault: DEFAULT_METRICS_SECRET,
    },
    {
      flag: 'db-read-url',
      env: 'SERVICE_DB_READ_URLS',
      kind: 'list',
      flagValue: ['postgres://replica-a/db', 'jdbc:postgresql://replica-b:5433/db?user=reader'],
      // Commas separate URLs only where the next one starts: a multi-host URL keeps its own.
      envValue: 'postgres://env-a:5432,env-b:5432/db, postgres://env-c/db',
      base: { 'db-url': 'postgres://primary-user:secret@primary/db' },
      read: (c) => c.readReplicas.map((r) => `${r.user}@${r.hosts.join('+')}:${r.ports.join('+')}/${r.database}`),
      expectedFlag: ['primary-user@replica-a:5432/db', 'reader@replica-b:5433/db'],
      expectedEnv: ['primary-user@env-a+env-b:5432+5432/db', 'primary-user@env-c:5432/db'],
      expectedDefault: [],
    },
    {
      flag: 'db-read-max-lag-ms',
      env: 'SERVICE_DB_READ_MAX_LAG_MS',
      kind: 'positive',
      flagValue: '1500',
      envValue: '30000',
      read: (c) => [c.readRouting.maxLagMs, c.readRouting.checkIntervalMs],
      expectedFlag: [1500, 750],
      expectedEnv: [30000, 1000],
      expectedDefault: [5000, 1000],
    },
    {
      flag: 'db-read-your-writes-wait-ms',
      env: 'SERVICE_DB_READ_YOUR_WRITES_WAIT_MS',
      kind: 'count',
      flagValue: '0',
      envValue: '250',
      read: (c) => c.readRouting.readYourWritesWaitMs,
      expectedFlag: 0,
      expectedEnv: 250,
      expectedDefault: 1000,
    },
    {
      flag: 'debug-db-listen',
      env: 'SERVICE_DEBUG_DB_LISTEN',
      kind: 'string',
      flagValue: '5433',
      envValue: '0.0.0.0:5434',
      read: (c) => c.debugDbListen,
      expectedFlag: { host: '127.0.0.1', port: 5433 },
      expectedEnv: { host: '0.0.0.0', port: 5434 },
      expectedDefault: undefined,
    },
    {
      flag: 'encryption-key-file',
      env: 'SERVICE_ENCRYPTION_KEY_FILE',
      kind: 'string',
      flagValue: keyFile,
      envValue: otherKeyFile,
      read: (c) => c.encryptionKeyFile,
      expectedFlag: keyFile,
      expectedEnv: otherKeyFile,
      expectedDefault: undefined,
    },
  ]

  it('covers every option that has an environment variable', () => {
    const covered = new Set(cases().map((entry) => entry.flag))
    const withEnv = SERVER_OPTIONS.filter(
      (spec) => spec.env && !['tls-cert-file', 'tls-key-file'].includes(spec.flag),
    ).map((spec) => spec.flag)
    expect(withEnv.filter((flag) => !covered.has(flag))).toEqual([])
    // The table names the same variables as the spec.
    for (const entry of cases()) expect(SERVER_OPTIONS.find((spec) => spec.flag === entry.flag)?.env).toBe(entry.env)
  })

  it.each(cases().map((entry) => [entry.flag, entry] as const))('%s: flag beats environment', (_, entry) => {
    const config = resolve({ ...entry.base, [entry.flag]: entry.flagValue }, { [entry.env]: entry.envValue })
    expect(entry.read(config)).toEqual(entry.expectedFlag)
  })

  it.each(cases().map((entry) => [entry.flag, entry] as const))('%s: environment beats default', (_, entry) => {
    const config = resolve({ ...entry.base }, { [entry.env]: entry.envValue })
    expect(entry.read(config)).toEqual(entry.expectedEnv)
  })

  it.each(cases().map((entry) => [entry.flag, entry] as const))(
    '%s: default applies when neither is given',
    (_, entry) => {
      const config = resolve({ ...entry.base }, {})
      expect(entry.read(config)).toEqual(entry.expectedDefault)
    },
  )

  it('as a systemd service the data directory is $STATE_DIRECTORY (its first entry), unless --data-dir or SERVICE_DATA_DIR says otherwise', () => {
    const state = path.join(tmp, 'state')
    expect(resolve({}, { STATE_DIRECTORY: `${state}:${path.join(tmp, 'second')}` }).dataDir).toBe(state)
    expect(resolve({}, { STATE_DIRECTORY: state, SERVICE_DATA_DIR: path.join(tmp, 'env-dir') }).dataDir).toBe(
      path.join(tmp, 'env-dir'),
    )
    expect(resolve({ 'data-dir': path.join(tmp, 'flag-dir') }, { STATE_DIRECTORY: state }).dataDir).toBe(
      path.join(tmp, 'flag-dir'),
    )
    // systemd only ever sets absolute paths; anything else is not from systemd.
    expect(resolve({}, { STATE_DIRECTORY: 'relative' }).dataDir).toBe(path.resolve(defaultDataDir({})))
  })

  it('--debug-db-listen takes [ADDR:]PORT, IPv6 in brackets, loopback by default', () => {
    expect(resolve({ 'debug-db-listen': '[::1]:5433' }).debugDbListen).toEqual({ host: '::1', port: 5433 })
    expect(resolve({ 'debug-db-listen': 'localhost:0' }).debugDbListen).toEqual({ host: 'localhost', port: 0 })
  })

  it('treats an empty environment variable as unset', () => {
    const config = resolve({}, { SERVICE_REST_PORT: '', SERVICE_METRICS_SECRET: '' })
    expect(config.restPort).toBe(8080)
    expect(config.metrics.usingDefaultSecret).toBe(true)
  })

  it('boolean flags: the flag (boolean or text) beats the default', () => {
    expect(resolve({}).tls.mode).toBe('self-signed')
    expect(resolve({ 'tls-disabled': true }).tls.mode).toBe('disabled')
    expect(resolve({ 'tls-disabled': 'true' }).tls.mode).toBe('disabled')
    expect(resolve({ 'tls-disabled': false }).tls.mode).toBe('self-signed')
    expect(resolve({}).metrics.authDisabled).toBe(false)
    expect(resolve({ 'metrics-auth-disabled': true }).metrics.authDisabled).toBe(true)
    expect(resolve({ 'metrics-auth-disabled': '0' }).metrics.authDisabled).toBe(false)
  })

  it('TLS pair: flags beat the environment pair', () => {
    const env = { SERVICE_TLS_CERT_FILE: otherCertFile, SERVICE_TLS_KEY_FILE: otherKeyFile }
    expect(resolve({}, env).tls).toEqual({
      mode: 'files',
      certFile: otherCertFile,
      keyFile: otherKeyFile,
      trustCertFile: undefined,
    })
    expect(resolve({ 'tls-cert-file': certFile, 'tls-key-file': keyFile }, env).tls).toEqual({
      mode: 'files',
      certFile,
      keyFile,
      trustCertFile: undefined,
    })
    // --tls-disabled wins over a configured pair.
    expect(resolve({ 'tls-disabled': true }, env).tls).toEqual({ mode: 'disabled' })
  })

  it('self-signed hostnames come from SERVICE_TLS_SELF_SIGNED_HOSTNAMES, defaulting to localhost and loopbacks', () => {
    expect(resolve({}).tls).toEqual({
      mode: 'self-signed',
      hostnames: ['localhost', '127.0.0.1', '::1'],
      trustCertFile: undefined,
    })
    expect(resolve({}, { SERVICE_TLS_SELF_SIGNED_HOSTNAMES: ' memsvc.internal , 10.0.0.5 ' }).tls).toEqual({
      mode: 'self-signed',
      hostnames: ['memsvc.internal', '10.0.0.5'],
      trustCertFile: undefined,
    })
  })

  it('metrics secret: flag > environment > system property > built-in default', () => {
    const property = { 'service.metrics.secret': 'from-property' }
    expect(
      resolve({ 'metrics-scrape-secret': 'from-flag' }, { SERVICE_METRICS_SECRET: 'from-env' }, property).metrics,
    ).toEqual({
      secret: 'from-flag',
      usingDefaultSecret: false,
      authDisabled: false,
    })
    expect(resolve({}, { SERVICE_METRICS_SECRET: 'from-env' }, property).metrics.secret).toBe('from-env')
    expect(resolve({}, {}, property).metrics).toEqual({
      secret: 'from-property',
      usingDefaultSecret: false,
      authDisabled: false,
    })
    expect(resolve({}, {}, {}).metrics).toEqual({
      secret: DEFAULT_METRICS_SECRET,
      usingDefaultSecret: true,
      authDisabled: false,
    })
  })
})

describe('system properties (-Dkey=value)', () => {
  it('takes -Dservice.metrics.secret=VALUE out of the arguments and into the config', () => {
    const { args, properties } = extractSystemProperties([
      'serve',
      '-Dservice.metrics.secret=s3cr=t',
      '--rest-port',
      '0',
    ])
    expect(args).toEqual(['serve', '--rest-port', '0'])
    expect(properties).toEqual({ 'service.metrics.secret': 's3cr=t' })
    const config = resolve({}, {}, properties)
    expect(config.metrics.secret).toBe('s3cr=t')
    expect(config.metrics.usingDefaultSecret).toBe(false)
  })

  it('keeps arguments that only look similar', () => {
    const { args, properties } = extractSystemProperties(['-D', '-Dnovalue', '--D=x', 'serve'])
    expect(args).toEqual(['-D', '-Dnovalue', '--D=x', 'serve'])
    expect(properties).toEqual({})
  })

  it('rejects an empty -Dservice.metrics.secret= naming the flag', () => {
    const { properties } = extractSystemProperties(['-Dservice.metrics.secret='])
    expect(properties).toEqual({ 'service.metrics.secret': '' })
    expectConfigError(() => resolve({}, {}, properties), 'metrics-scrape-secret', /must not be empty/)
  })
})

describe('configuration validation: every bad value names its flag', () => {
  it.each([
    ['rest-port', '65536'],
    ['rest-port', '-1'],
    ['grpc-port', '70000'],
  ])('--%s %s: port out of range', (flag, value) => {
    expectConfigError(() => resolve({ [flag]: value }), flag, /from 0 to 65535/)
  })

  it.each([
    ['rest-port', 'http'],
    ['rest-port', '80.5'],
    ['rest-port', ''],
    ['db-max-pool', '1e3'],
    ['db-min-idle', 'two'],
    ['shutdown-timeout-sec', '1.5'],
    ['grpc-max-message-size-mb', '0x10'],
  ])('--%s %j: not a whole number', (flag, value) => {
    expectConfigError(() => resolve({ [flag]: value }), flag, /expected a whole number/)
  })

  it.each(['65536', 'db:', ':5432', '::1:5432', 'host:port'])('--debug-db-listen %j: not [ADDR:]PORT', (value) => {
    expectConfigError(() => resolve({ 'debug-db-listen': value }), 'debug-db-listen', /expected \[ADDR:\]PORT/)
  })

  it('--debug-db-listen with --db-url: there is no embedded database to expose', () => {
    expectConfigError(
      () => resolve({ 'debug-db-listen': '5433', 'db-url': 'postgres://u@h/db' }),
      'debug-db-listen',
      /only for the embedded database/,
    )
  })

  it('names the flag even when the bad value came from its environment variable', () => {
    expectConfigError(() => resolve({}, { SERVICE_GRPC_PORT: '99999' }), 'grpc-port', /99999/)
    expectConfigError(() => resolve({}, { DB_MAX_POOL_SIZE: 'lots' }), 'db-max-pool', /lots/)
  })

  it.each([
    ['db-max-pool', '0'],
    ['background-db-max-pool', '0'],
    ['shutdown-timeout-sec', '0'],
    ['grpc-max-message-size-mb', '0'],
    ['db-min-idle', '-1'],
    ['background-db-min-idle', '-2'],
  ])('--%s %s: below the minimum', (flag, value) => {
    expectConfigError(() => resolve({ [flag]: value }), flag)
  })

  it('min idle above max pool names the min-idle flag (both pools)', () => {
    expectConfigError(
      () => resolve({ 'db-min-idle': '6', 'db-max-pool': '5' }),
      'db-min-idle',
      /more than --db-max-pool 5/,
    )
    expectConfigError(
      () => resolve({ 'background-db-min-idle': '21' }),
      'background-db-min-idle',
      /more than --background-db-max-pool 20/,
    )
    expect(resolve({ 'db-min-idle': '5', 'db-max-pool': '5' }).primaryPool).toEqual({ minIdle: 5, max: 5 })
  })

  it('--grpc-max-message-size-mb above 2047 (gRPC lengths are int32)', () => {
    expectConfigError(() => resolve({ 'grpc-max-message-size-mb': '2048' }), 'grpc-max-message-size-mb', /2047/)
    expect(resolve({ 'grpc-max-message-size-mb': '2047' }).maxMessageBytes).toBe(2047 * MB)
  })

  it('a TLS certificate without its key, or a key without its certificate', () => {
    expectConfigError(() => resolve({ 'tls-cert-file': certFile }), 'tls-cert-file', /needs --tls-key-file/)
    expectConfigError(() => resolve({ 'tls-key-file': keyFile }), 'tls-key-file', /needs --tls-cert-file/)
    expectConfigError(() => resolve({}, { SERVICE_TLS_KEY_FILE: keyFile }), 'tls-key-file')
    // Half a pair is an error even with TLS disabled: the operator clearly meant something else.
    expectConfigError(() => resolve({ 'tls-disabled': true, 'tls-cert-file': certFile }), 'tls-cert-file')
  })

  it('unreadable TLS files name the flag of the file', () => {
    const missing = path.join(tmp, 'missing.pem')
    expectConfigError(
      () => resolve({ 'tls-cert-file': missing, 'tls-key-file': keyFile }),
      'tls-cert-file',
      /cannot read .*missing\.pem: ENOENT/,
    )
    expectConfigError(() => resolve({ 'tls-cert-file': certFile, 'tls-key-file': missing }), 'tls-key-file', /ENOENT/)
    expectConfigError(() => resolve({ 'tls-trust-cert-file': missing }), 'tls-trust-cert-file', /ENOENT/)
    expectConfigError(
      () => resolve({ 'tls-cert-file': tmp, 'tls-key-file': keyFile }),
      'tls-cert-file',
      /not a regular file/,
    )
  })

  it('a malformed database URL names --db-url; a URL without a user names --db-user', () => {
    expectConfigError(() => resolve({ 'db-url': 'mysql://localhost/db' }), 'db-url', /expected jdbc:postgresql/)
    expectConfigError(() => resolve({ 'db-url': 'jdbc:postgresql://localhost:5432' }), 'db-url', /no database/)
    expectConfigError(
      () => resolve({ 'db-url': 'jdbc:postgresql://localhost:99999/db?user=u' }),
      'db-url',
      /invalid port/,
    )
    expectConfigError(() => resolve({}, { DB_URL: 'garbage' }), 'db-url')
    expectConfigError(() => resolve({ 'db-url': 'jdbc:postgresql://localhost/db' }), 'db-user', /required/)
    expect(resolve({ 'db-url': 'jdbc:postgresql://localhost/db', 'db-user': 'me' }).database?.user).toBe('me')
  })

  it('--db-read-url needs --db-url (the embedded database has no replicas) and names the bad URL', () => {
    expectConfigError(() => resolve({ 'db-read-url': 'postgres://u@replica/db' }), 'db-read-url', /needs --db-url/)
    expectConfigError(
      () => resolve({ 'db-url': 'postgres://u@h/db', 'db-read-url': ['postgres://u@r1/db', 'mysql://r2/db'] }),
      'db-read-url',
      /URL 2: expected jdbc:postgresql/,
    )
  })

  it('an unknown log level names --log-level', () => {
    expectConfigError(() => resolve({ 'log-level': 'verbose' }), 'log-level', /debug, info, warn, error/)
    expectConfigError(() => resolve({}, { SERVICE_LOG_LEVEL: 'INFO' }), 'log-level')
  })

  it('a boolean flag with a non-boolean value names the flag', () => {
    expectConfigError(() => resolve({ 'tls-disabled': 'maybe' }), 'tls-disabled', /true or false/)
    expectConfigError(() => resolve({ 'metrics-auth-disabled': 'sometimes' }), 'metrics-auth-disabled')
  })

  it('an empty metrics secret given as a flag names --metrics-scrape-secret', () => {
    expectConfigError(() => resolve({ 'metrics-scrape-secret': '' }), 'metrics-scrape-secret', /must not be empty/)
  })

  it('an empty SERVICE_TLS_SELF_SIGNED_HOSTNAMES list falls back to the defaults; commas alone are an error', () => {
    expect(resolve({}, { SERVICE_TLS_SELF_SIGNED_HOSTNAMES: '' }).tls).toMatchObject({
      hostnames: ['localhost', '127.0.0.1', '::1'],
    })
    expectConfigError(
      () => resolve({}, { SERVICE_TLS_SELF_SIGNED_HOSTNAMES: ' , ' }),
      'tls-cert-file',
      /names no hostname/,
    )
  })

  it('a valid full configuration resolves without error', () => {
    const config = resolve({
      'rest-port': '0',
      'grpc-port': '65535',
      'db-url': 'jdbc:postgresql://db.internal:6543/memsvc?sslmode=require',
      'db-user': 'memsvc',
      'db-password': 'pw',
      'tls-cert-file': certFile,
      'tls-key-file': keyFile,
      'tls-trust-cert-file': otherCertFile,
      'metrics-auth-disabled': true,
    })
    expect(config.restPort).toBe(0)
    expect(config.grpcPort).toBe(65535)
    expect(config.database).toMatchObject({
      hosts: ['db.internal'],
      ports: [6543],
      database: 'memsvc',
      user: 'memsvc',
      password: 'pw',
      ssl: 'require',
    })
    expect(config.tls).toEqual({ mode: 'files', certFile, keyFile, trustCertFile: otherCertFile })
    expect(config.metrics.authDisabled).toBe(true)
  })
})
