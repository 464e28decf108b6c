// End-to-end tests of the built executable (run "npm run build" first). Each test
// runs dist/memsvc copied into a fresh temp directory with no node_modules, no node on
// PATH and its own HOME, exactly as a user who downloaded it would.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import tls from 'node:tls'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_METRICS_SECRET } from '../../src/config/server-config.js'
import { createTestDatabase, POSTGRES_ADMIN_URL, type TestDatabase } from '../support/databases.js'
import {
  BUILT_EXECUTABLE,
  createSandbox,
  formatRss,
  killAllProcesses,
  request,
  runCli,
  type Sandbox,
  ServerProcess,
  waitUntil,
} from '../support/executable.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

const PACKAGE_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version
/** package.json version, optionally followed by +<git short sha>. */
const VERSION_PATTERN = new RegExp(`^${PACKAGE_VERSION.replaceAll('.', '\\.')}(\\+[0-9a-f]{4,40})?$`)
const EXIT_CONFIG_ERROR = 2
const METRICS_SECRET = 'e2e-property-secret'
/** ecdsa-with-SHA256 (1.2.840.10045.4.3.2) as DER: the certificate's signature algorithm. */
const ECDSA_WITH_SHA256_DER = Buffer.from('06082a8648ce3d040302', 'hex')
/** The server checks its database every 2 s; allow a few rounds and the retry backoff. */
const DATABASE_CHANGE_TIMEOUT_MS = 20_000
/** How long "database down at start" is held, to see the server keep waiting. */
const DATABASE_DOWN_HOLD_MS = 3_000
/** Idle time before reading RSS, so start-up garbage has had a chance to be collected. */
const IDLE_BEFORE_RSS_MS = 2_000
const FIRST_EMBEDDED_START_TIMEOUT_MS = 60_000
const START_TIMEOUT_MS = 30_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Start-up measurements, printed at the end for the closing note. */
const measurements: string[] = []

let sandbox: Sandbox

beforeAll(() => {
  sandbox = createSandbox()
  // "node not needed": PATH holds only an empty directory.
  sandbox.env.PATH = sandbox.makeDir('bin')
})

// Every test stops its own servers; this only catches the ones a failed test left behind,
// so that they cannot hold the next test's data directory or ports.
afterEach(() => killAllProcesses())

afterAll(() => {
  killAllProcesses()
  sandbox?.remove()
  if (measurements.length > 0)
    console.log(
      `executable ${BUILT_EXECUTABLE}: ${(fs.statSync(BUILT_EXECUTABLE).size / 1024 / 1024).toFixed(1)} MB\n${measurements.join('\n')}`,
    )
})

function plaintextFlags(dataDir: string): string[] {
  return [
    '--rest-port',
    '0',
    '--grpc-port',
    '0',
    '--bind-address',
    '127.0.0.1',
    '--data-dir',
    dataDir,
    '--tls-disabled',
  ]
}

function tlsFlags(dataDir: string): string[] {
  return ['--rest-port', '0', '--grpc-port', '0', '--bind-address', '127.0.0.1', '--data-dir', dataDir]
}

async function expectJson(
  server: ServerProcess,
  pathname: string,
  status: number,
  body: Record<string, unknown>,
): Promise<void> {
  const response = await server.get(pathname)
  expect({ pathname, status: response.status }).toEqual({ pathname, status })
  expect(JSON.parse(response.body)).toMatchObject(body)
}

async function stopCleanly(server: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const exit = await server.stop(signal)
  expect(exit).toEqual({ code: 0, signal: null })
  expect(server.hasLogged(/\bstopped\b/)).toBe(true)
}

async function recordIdle(label: string, server: ServerProcess): Promise<void> {
  await sleep(IDLE_BEFORE_RSS_MS)
  measurements.push(
    `${label}: spawn to READY ${Math.round(server.readyAfterMs!)} ms, idle RSS ${formatRss(server.rssKb())}`,
  )
}

/** A running process's environment, as the kernel holds it. */
function processEnvironment(pid: number): Record<string, string> {
  const entries = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
  return Object.fromEntries(
    entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  )
}

interface PeerCertificate {
  x509: crypto.X509Certificate
  raw: Buffer
}

/** The certificate a TLS listener presents (not verified: we inspect it instead). */
function peerCertificate(port: number, alpn?: string[]): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: alpn },
      () => {
        const raw = socket.getPeerCertificate().raw
        socket.destroy()
        resolve({ raw, x509: new crypto.X509Certificate(raw) })
      },
    )
    socket.on('error', reject)
  })
}

/** A client that pins the certificate verifies the connection for this hostname. */
function verifiesWith(port: number, caPem: string, servername: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, ca: caPem, rejectUnauthorized: true }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
  })
}

function subjectAltNames(certificate: crypto.X509Certificate): string[] {
  return (certificate.subjectAltName ?? '').split(', ').filter(Boolean).sort()
}

/** How long a line the server has written may take to reach this process's end of its stderr pipe. */
const LOG_PIPE_DELAY_MS = 5_000

describe('command line', () => {
  it('prints its version with --version and version, then the runtime it carries', async () => {
    for (const args of [['--version'], ['version']]) {
      const result = await runCli(sandbox, args)
      expect(result.code).toBe(0)
      const [version, runtime, ...rest] = result.stdout.trim().split('\n')
      expect(version).toMatch(VERSION_PATTERN)
      expect(runtime).toMatch(/^runtime: Node\.js 24\.\d+\.\d+, OpenSSL 3\.\d+\.\d+, uWebSockets\.js 20\.\d+\.\d+ /)
      expect(rest).toEqual([])
    }
  })

  it('lists the environment variables in serve --help', async () => {
    const result = await runCli(sandbox, ['serve', '--help'])
    expect(result.code).toBe(0)
    for (const variable of [
      'SERVICE_REST_PORT',
      'SERVICE_GRPC_PORT',
      'DB_URL',
      'DB_USER',
      'DB_MAX_POOL_SIZE',
      'SERVICE_TLS_CERT_FILE',
      'SERVICE_METRICS_SECRET',
      'SERVICE_DATA_DIR',
    ]) {
      expect(result.stdout).toContain(variable)
    }
  })

  describe('rejects a bad setting with exit code 2 and one line naming the flag', () => {
    const certFile = () => {
      const file = path.join(sandbox.dir, 'some-cert.pem')
      fs.writeFileSync(file, 'not really a certificate\n')
      return file
    }
    const cases: Array<{ name: string; args: () => string[]; env?: NodeJS.ProcessEnv; flag: string }> = [
      { name: 'port out of range', args: () => ['--rest-port', '70000'], flag: '--rest-port' },
      {
        name: 'port out of range from the environment',
        args: () => [],
        env: { SERVICE_GRPC_PORT: '70000' },
        flag: '--grpc-port',
      },
      { name: 'certificate without its key', args: () => ['--tls-cert-file', certFile()], flag: '--tls-cert-file' },
      {
        name: 'unreadable key file',
        args: () => ['--tls-cert-file', certFile(), '--tls-key-file', path.join(sandbox.dir, 'missing', 'server.key')],
        flag: '--tls-key-file',
      },
      {
        name: 'malformed database URL',
        args: () => ['--db-url', 'jdbc:mysql://db.example:3306/memsvc'],
        flag: '--db-url',
      },
      {
        name: 'min idle above max pool',
        args: () => ['--db-min-idle', '10', '--db-max-pool', '5'],
        flag: '--db-min-idle',
      },
    ]
    for (const testCase of cases) {
      it(testCase.name, async () => {
        const dataDir = sandbox.makeDir(`bad-flags-${crypto.randomUUID()}`)
        // Only the flags under test, so none is given twice (yargs would make an array of it).
        const result = await runCli(
          sandbox,
          ['serve', '--data-dir', dataDir, '--bind-address', '127.0.0.1', ...testCase.args()],
          { env: testCase.env },
        )
        expect(result.code).toBe(EXIT_CONFIG_ERROR)
        const lines = result.stderr.trim().split('\n')
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(testCase.flag)
      })
    }
  })
})

describe('embedded database', () => {
  let dataDir: string
  let initialized = false

  beforeAll(() => {
    dataDir = sandbox.makeDir('embedded-data')
  })

  it(
    'first start creates the database, answers the probes, guards /metrics and stops on SIGTERM',
    async () => {
      const server = ServerProcess.start(sandbox, [
        ...plaintextFlags(dataDir),
        `-Dservice.metrics.secret=${METRICS_SECRET}`,
      ])
      await server.listening()
      // Probes answer from the first moment, whatever the state.
      expect((await server.get('/livez')).status).toBe(200)
      await server.waitForReady(FIRST_EMBEDDED_START_TIMEOUT_MS)
      expect(server.hasLogged(/creating the embedded database/)).toBe(true)
      expect(server.hasLogged(/single-node/)).toBe(true)
      // The native HTTP addon was extracted to this user's cache, not loaded from a package.
      expect(
        fs
          .readdirSync(path.join(sandbox.env.XDG_CACHE_HOME!, 'memsvc'))
          .filter((name) => /^uws-[0-9a-f]+\.node$/.test(name)),
      ).toHaveLength(1)
      measurements.push(`embedded, first start (initdb): spawn to READY ${Math.round(server.readyAfterMs!)} ms`)
      // The process replaced itself (same pid) with the embedded server's memory settings, and created
      // the database in a child process before opening it (src/runtime/small-host-process.ts, src/db/embedded.ts).
      expect(processEnvironment(server.pid)).toMatchObject({
        MALLOC_MMAP_THRESHOLD_: '131072',
        NODE_OPTIONS: expect.stringContaining('--max-semi-space-size=1'),
      })
      expect(server.hasLogged(/phasesMs=memory-reexec:\d+,.*pglite-initdb:\d+,.*pglite-boot:\d+/)).toBe(true)

      await expectJson(server, '/livez', 200, { state: 'READY' })
      await expectJson(server, '/readyz', 200, { ready: true, state: 'READY' })
      await expectJson(server, '/startupz', 200, { started: true, state: 'READY' })

      expect((await server.get('/metrics')).status).toBe(401)
      expect((await server.get('/metrics', { 'X-Service-Metrics-Key': 'wrong' })).status).toBe(401)
      const metrics = await server.get('/metrics', { 'X-Service-Metrics-Key': METRICS_SECRET })
      expect(metrics.status).toBe(200)
      expect(metrics.headers['cache-control']).toBe('no-store')
      expect(metrics.headers['content-type']).toMatch(/^text\/plain/)
      expect(metrics.body).toMatch(/^# (HELP|TYPE) /m)
      expect(server.hasLogged(/built-in default secret/)).toBe(false)

      const info = await server.get('/v1/system/info')
      expect(info.status).toBe(200)
      const thirdParty = JSON.parse(
        fs.readFileSync(path.join(sandbox.dir, 'licenses', 'third-party.json'), 'utf8'),
      ) as unknown[]
      expect(JSON.parse(info.body)).toMatchObject({
        storage: 'embedded',
        lifecycleState: 'READY',
        license: {
          directory: path.join(sandbox.dir, 'licenses'),
          present: true,
          thirdPartyPackages: thirdParty.length,
        },
      })
      expect(JSON.parse(info.body).version).toMatch(VERSION_PATTERN)
      // The runtime the executable carries: the pinned Node 24, its OpenSSL, the uWS built from third_party.
      expect(JSON.parse(info.body).runtime).toEqual({
        node: expect.stringMatching(/^24\./),
        openssl: expect.stringMatching(/^3\./),
        uws: expect.stringMatching(/^20\.67\.0 /),
      })

      // The OpenAPI document the executable serves is the one the build wrote beside it, byte for byte once parsed.
      const served = await server.get('/v1/openapi.json')
      expect(served.status).toBe(200)
      expect(JSON.parse(served.body)).toEqual(
        JSON.parse(fs.readFileSync(path.join(path.dirname(BUILT_EXECUTABLE), 'openapi.json'), 'utf8')),
      )

      // Once the init API exists, it also gives us data to find again after a restart.
      const init = await request(`${server.restBase}/v1/system/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      initialized = init.status === 200

      await stopCleanly(server)
    },
    FIRST_EMBEDDED_START_TIMEOUT_MS + START_TIMEOUT_MS,
  )

  it(
    'a restart reuses the data directory; the built-in metrics secret works and is warned about',
    async () => {
      const server = ServerProcess.start(sandbox, plaintextFlags(dataDir))
      await server.waitForReady(START_TIMEOUT_MS)
      expect(server.hasLogged(/creating the embedded database/)).toBe(false)
      const info = await server.get('/v1/system/info')
      expect(info.status).toBe(200)
      if (initialized) expect(JSON.parse(info.body)).toMatchObject({ initialized: true })

      expect(server.hasLogged(/built-in default secret/)).toBe(true)
      expect((await server.get('/metrics')).status).toBe(401)
      expect((await server.get('/metrics', { 'X-Service-Metrics-Key': DEFAULT_METRICS_SECRET })).status).toBe(200)

      await recordIdle('embedded, existing data dir', server)
      await stopCleanly(server)
    },
    START_TIMEOUT_MS * 2,
  )

  it(
    'TLS by default: a self-signed EC P-256 / SHA-256 certificate for localhost, 127.0.0.1 and ::1, shared by both ports and kept across restarts',
    async () => {
      const first = ServerProcess.start(sandbox, tlsFlags(dataDir))
      const { scheme, restPort, grpcPort } = await first.listening(START_TIMEOUT_MS)
      expect(scheme).toBe('https')
      await first.waitForReady(START_TIMEOUT_MS)
      await expectJson(first, '/readyz', 200, { ready: true })

      const { x509, raw } = await peerCertificate(restPort)
      expect(x509.publicKey.asymmetricKeyType).toBe('ec')
      expect(x509.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1')
      expect(raw.includes(ECDSA_WITH_SHA256_DER)).toBe(true)
      expect(subjectAltNames(x509)).toEqual(['DNS:localhost', 'IP Address:0:0:0:0:0:0:0:1', 'IP Address:127.0.0.1'])
      expect((await peerCertificate(grpcPort, ['h2'])).x509.fingerprint256).toBe(x509.fingerprint256)
      const pem = x509.toString()
      expect(await verifiesWith(restPort, pem, 'localhost')).toBe(true)
      await stopCleanly(first)

      const second = ServerProcess.start(sandbox, tlsFlags(dataDir))
      const restarted = await second.listening(START_TIMEOUT_MS)
      await second.waitForReady(START_TIMEOUT_MS)
      expect((await peerCertificate(restarted.restPort)).x509.fingerprint256).toBe(x509.fingerprint256)
      expect(second.hasLogged(/created a self-signed certificate/)).toBe(false)
      await stopCleanly(second)
    },
    START_TIMEOUT_MS * 3,
  )

  it(
    'SERVICE_TLS_SELF_SIGNED_HOSTNAMES changes the certificate names',
    async () => {
      const before = new crypto.X509Certificate(fs.readFileSync(path.join(dataDir, 'tls', 'server.crt')))
      const server = ServerProcess.start(sandbox, tlsFlags(dataDir), {
        SERVICE_TLS_SELF_SIGNED_HOSTNAMES: 'memsvc.test, 10.9.8.7',
      })
      const { restPort } = await server.listening(START_TIMEOUT_MS)
      const { x509 } = await peerCertificate(restPort)
      expect(subjectAltNames(x509)).toEqual(['DNS:memsvc.test', 'IP Address:10.9.8.7'])
      expect(x509.fingerprint256).not.toBe(before.fingerprint256)
      expect(await verifiesWith(restPort, x509.toString(), 'memsvc.test')).toBe(true)
      await server.waitForReady(START_TIMEOUT_MS)
      await stopCleanly(server)
    },
    START_TIMEOUT_MS * 2,
  )
})

describe('external PostgreSQL', () => {
  let database: TestDatabase
  let proxy: TcpProxy
  const admin = new URL(POSTGRES_ADMIN_URL)

  // Both servers below use one database, so they share its encryption key, as replicas must.
  let keyFlags: string[]

  beforeAll(async () => {
    const keyFile = path.join(sandbox.makeDir('pg-key'), 'encryption.key')
    fs.writeFileSync(keyFile, `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600 })
    keyFlags = ['--encryption-key-file', keyFile]
    database = await createTestDatabase()
    proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432), { enabled: false })
  })

  afterAll(async () => {
    killAllProcesses()
    await proxy?.close()
    await database?.drop()
  })

  it(
    'starts on PostgreSQL and stops on SIGINT',
    async () => {
      const server = ServerProcess.start(sandbox, [
        ...plaintextFlags(sandbox.makeDir('pg-data')),
        ...keyFlags,
        '--db-url',
        database.jdbcUrl,
      ])
      await server.waitForReady(START_TIMEOUT_MS)
      expect(server.hasLogged(/creating the embedded database/)).toBe(false)
      // Only the young generation's size: the malloc setting is for the embedded database only.
      expect(processEnvironment(server.pid).MALLOC_MMAP_THRESHOLD_).toBeUndefined()
      expect(processEnvironment(server.pid).NODE_OPTIONS).toContain('--max-semi-space-size=16')
      expect(server.hasLogged(/phasesMs=memory-reexec:\d+/)).toBe(true)
      const info = await server.get('/v1/system/info')
      expect(JSON.parse(info.body)).toMatchObject({ storage: 'postgresql', lifecycleState: 'READY' })
      await recordIdle('external PostgreSQL', server)
      await stopCleanly(server, 'SIGINT')
    },
    START_TIMEOUT_MS * 2,
  )

  it(
    'waits while the database is down at start, becomes READY when it is up, and follows a later outage',
    async () => {
      const viaProxy = `jdbc:postgresql://127.0.0.1:${proxy.port}/${database.name}?user=${admin.username}`
      proxy.disable()
      const server = ServerProcess.start(sandbox, [
        ...plaintextFlags(sandbox.makeDir('pg-proxy-data')),
        ...keyFlags,
        '--db-url',
        viaProxy,
      ])
      await server.listening(START_TIMEOUT_MS)
      await server.waitForLog(/database not reachable yet/, START_TIMEOUT_MS)
      await sleep(DATABASE_DOWN_HOLD_MS)
      await expectJson(server, '/livez', 200, { state: 'STARTING' })
      await expectJson(server, '/readyz', 503, { ready: false, state: 'STARTING' })
      await expectJson(server, '/startupz', 503, { started: false })
      expect(server.child.exitCode).toBeNull()

      proxy.enable()
      await server.waitForReady(DATABASE_CHANGE_TIMEOUT_MS)

      proxy.disable()
      await waitUntil(
        '/readyz 503 after the database is lost',
        async () => (await server.get('/readyz')).status === 503,
        DATABASE_CHANGE_TIMEOUT_MS,
      )
      await expectJson(server, '/livez', 200, { state: 'READY' })
      await expectJson(server, '/readyz', 503, { ready: false, state: 'READY' })

      proxy.enable()
      await waitUntil(
        '/readyz 200 after the database is back',
        async () => (await server.get('/readyz')).status === 200,
        DATABASE_CHANGE_TIMEOUT_MS,
      )
      // Logged before readiness flips, but stderr reaches this process through a pipe, which an HTTP answer can overtake.
      await server.waitForLog(/database reachable again/, LOG_PIPE_DELAY_MS)
      await stopCleanly(server)
    },
    START_TIMEOUT_MS + DATABASE_DOWN_HOLD_MS + DATABASE_CHANGE_TIMEOUT_MS * 3,
  )
})
