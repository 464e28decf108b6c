import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { resolveServerConfig, type ServerConfig } from '../../src/config/server-config.js'
import { createLogger } from '../../src/observability/logger.js'
import { type RunningServer, type StartOptions, startServer } from '../../src/server/server.js'
import { createTestDatabase, type Engine, type TestDatabase } from './databases.js'

export interface TestServer {
  engine: Engine
  server: RunningServer
  config: ServerConfig
  restUrl: string
  grpcAddress: string
  dataDir: string
  database?: TestDatabase
  /** Every line the server logged, for assertions that secrets never appear. */
  logs: string[]
  stop(): Promise<void>
}

export interface TestServerOptions {
  engine: Engine
  /** Extra flags, as the serve command would receive them. */
  flags?: Record<string, unknown>
  env?: NodeJS.ProcessEnv
  /** Reuse a database (e.g. a second process on the same one). */
  database?: TestDatabase
  dataDir?: string
  waitForReady?: boolean
  startOptions?: StartOptions
}

/**
 * Every in-process test server uses this one encryption key unless a test passes its own
 * 'encryption-key-file' (or undefined, to exercise the key created in the data directory):
 * servers sharing a database must share the key, as replicas do.
 */
export const TEST_ENCRYPTION_KEY_FILE = path.join(os.tmpdir(), 'memsvc-test-encryption.key')
const TEST_ENCRYPTION_KEY_HEX = '6d656d737663207465737420656e6372797074696f6e206b6579202d20763121'

/** One file for every worker (no clean-up needed): written whole and renamed into place, so no reader sees it half-written. */
function testEncryptionKeyFile(): string {
  const wanted = `${TEST_ENCRYPTION_KEY_HEX}\n`
  const current = fs.existsSync(TEST_ENCRYPTION_KEY_FILE)
    ? fs.readFileSync(TEST_ENCRYPTION_KEY_FILE, 'utf8')
    : undefined
  if (current !== wanted) {
    const staging = `${TEST_ENCRYPTION_KEY_FILE}.${process.pid}.tmp`
    fs.writeFileSync(staging, wanted, { mode: 0o600 })
    fs.renameSync(staging, TEST_ENCRYPTION_KEY_FILE)
  }
  return TEST_ENCRYPTION_KEY_FILE
}

/** Starts a real server in-process on ephemeral ports, against PostgreSQL or embedded PGlite. */
export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const ownsDataDir = options.dataDir === undefined
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-test-'))
  const ownsDatabase = options.engine === 'postgresql' && options.database === undefined
  const database = options.engine === 'postgresql' ? (options.database ?? (await createTestDatabase())) : undefined
  const flags: Record<string, unknown> = {
    'rest-port': 0,
    'grpc-port': 0,
    'bind-address': '127.0.0.1',
    'tls-disabled': true,
    'data-dir': dataDir,
    'log-level': 'debug',
    'metrics-scrape-secret': 'test-metrics-secret',
    'shutdown-timeout-sec': 5,
    'encryption-key-file': testEncryptionKeyFile(),
    // Small pools: suites run in parallel against one PostgreSQL with max_connections 100.
    'db-max-pool': 6,
    'db-min-idle': 1,
    'background-db-max-pool': 2,
    ...(database ? { 'db-url': database.jdbcUrl } : {}),
    ...options.flags,
  }
  const config = resolveServerConfig(flags, options.env ?? {}, {})
  const logs: string[] = []
  const log = createLogger('debug', (line) => logs.push(line))
  const server = await startServer(config, log, options.startOptions)
  if (options.waitForReady !== false) await server.ready
  const scheme = server.tls ? 'https' : 'http'
  return {
    engine: options.engine,
    server,
    config,
    restUrl: `${scheme}://127.0.0.1:${server.restPort}`,
    grpcAddress: `127.0.0.1:${server.grpcPort}`,
    dataDir,
    database,
    logs,
    async stop() {
      await server.shutdown('test finished')
      if (ownsDatabase) await database?.drop()
      if (ownsDataDir) fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
