import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DataDirInUseError } from '../../src/db/embedded.js'
import { MIGRATIONS, migrate } from '../../src/db/migrations.js'
import { generateApiKey } from '../../src/domain/api-key-format.js'
import { ApiClient, TRANSPORTS } from '../support/api-client.js'
import { createTestDatabase, ENGINES, POSTGRES_ADMIN_URL, type TestDatabase } from '../support/databases.js'
import { HealthProbe, type HealthWatch, ServingStatus } from '../support/grpc-clients.js'
import { httpRequest } from '../support/http-client.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { waitFor, within } from '../support/wait.js'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const ALL_VERSIONS = MIGRATIONS.map((migration) => migration.version)
const ON_POSTGRES = ENGINES.includes('postgresql')
const ON_EMBEDDED = ENGINES.includes('embedded')

/** Stops whatever a test started, even when it fails half-way. */
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function schemaMigrations(server: TestServer): Promise<Array<{ version: number; count: number }>> {
  const sql = server.server.context.database!.primary
  return sql<Array<{ version: number; count: number }>>`
    select version, count(*)::int as count from schema_migrations group by version order by version`
}

describe.each(ENGINES)('migrations (%s)', (engine) => {
  let server: TestServer

  beforeAll(async () => {
    server = await startTestServer({ engine })
  })

  afterAll(async () => {
    await server?.stop()
  })

  it('applies every embedded migration exactly once at start', async () => {
    expect(await schemaMigrations(server)).toEqual(ALL_VERSIONS.map((version) => ({ version, count: 1 })))
    expect(server.logs.filter((line) => line.includes('applied migrations'))).toHaveLength(1)
    expect(server.logs.find((line) => line.includes('applied migrations'))).toContain(
      `versions=${ALL_VERSIONS.join(',')}`,
    )
  })

  it('running migrate() again is a no-op: it returns [] and changes nothing', async () => {
    const sql = server.server.context.database!.primary
    const tablesBefore =
      await sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`
    expect(await migrate(sql)).toEqual([])
    expect(await migrate(sql)).toEqual([])
    expect(await schemaMigrations(server)).toEqual(ALL_VERSIONS.map((version) => ({ version, count: 1 })))
    const tablesAfter =
      await sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`
    expect(tablesAfter).toEqual(tablesBefore)
  })

  it('the schema the migrations create is there (same SQL on both engines)', async () => {
    const sql = server.server.context.database!.primary
    const tables = await sql<Array<{ table_name: string }>>`
      select table_name from information_schema.tables where table_schema = 'public' order by table_name`
    expect(tables.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['api_keys', 'schema_migrations', 'system_state', 'users']),
    )
  })
})

describe.each(ENGINES)('restart on existing storage (%s)', (engine) => {
  it('a second start on the same database applies nothing and is READY', async () => {
    const database = engine === 'postgresql' ? await createTestDatabase() : undefined
    if (database) cleanups.push(() => database.drop())
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-restart-'))
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }))

    const first = await startTestServer({ engine, database, dataDir })
    await first.stop()
    const second = await startTestServer({ engine, database, dataDir })
    cleanups.push(() => second.stop())
    expect(second.server.lifecycle.ready).toBe(true)
    expect(second.logs.some((line) => line.includes('applied migrations'))).toBe(false)
    expect(await schemaMigrations(second)).toEqual(ALL_VERSIONS.map((version) => ({ version, count: 1 })))
  })
})

describe.runIf(ON_POSTGRES)('PostgreSQL: replicas and pools', () => {
  let admin: postgres.Sql

  beforeAll(() => {
    admin = postgres(POSTGRES_ADMIN_URL, { max: 2, onnotice: () => {} })
  })

  afterAll(async () => {
    await admin?.end({ timeout: 5 })
  })

  /** Connections a pool of this process holds on `database`, by state. */
  async function poolConnections(database: TestDatabase, pool: 'primary' | 'background') {
    const rows = await admin<Array<{ total: number; waiting: number }>>`
      select count(*)::int as total, count(*) filter (where wait_event_type = 'Lock')::int as waiting
      from pg_stat_activity
      where datname = ${database.name} and application_name = ${`memsvc-${pool}-${process.pid}`}`
    return rows[0]!
  }

  it('three servers started at once on a fresh database all reach READY; each migration is recorded once', async () => {
    const database = await createTestDatabase()
    cleanups.push(() => database.drop())
    const servers = await Promise.all(
      [0, 1, 2].map(() => startTestServer({ engine: 'postgresql', database, waitForReady: false })),
    )
    cleanups.push(() => Promise.all(servers.map((server) => server.stop())))
    await within('all three servers READY', Promise.all(servers.map((server) => server.server.ready)), 60_000)
    for (const server of servers) {
      expect(server.server.lifecycle.state).toBe('READY')
      expect((await httpRequest(`${server.restUrl}/readyz`)).status).toBe(200)
    }
    expect(await schemaMigrations(servers[0]!)).toEqual(ALL_VERSIONS.map((version) => ({ version, count: 1 })))
    // The advisory lock serialised them: exactly one applied the migrations.
    expect(servers.filter((server) => server.logs.some((line) => line.includes('applied migrations')))).toHaveLength(1)
  })

  it.each([
    { pool: 'primary' as const, flags: { 'db-max-pool': 3, 'db-min-idle': 0 }, max: 3 },
    { pool: 'background' as const, flags: { 'background-db-max-pool': 2, 'background-db-min-idle': 0 }, max: 2 },
  ])('$pool pool never opens more than its max connections (max $max)', async ({ pool, flags, max }) => {
    const server = await startTestServer({ engine: 'postgresql', flags })
    cleanups.push(() => server.stop())
    const database = server.server.context.database!
    const sql = pool === 'primary' ? database.primary : database.background
    // Queries that block until the test releases its lock: they hold connections for
    // as long as the test needs, with no sleeps involved. Advisory locks are per
    // database, so the gate connects to the server's database.
    const gate = postgres(server.database!.url, { max: 1, onnotice: () => {} })
    cleanups.push(() => gate.end({ timeout: 5 }))
    const lockKey = 0x7e57_0000 + (pool === 'primary' ? 1 : 2)
    await gate`select pg_advisory_lock(${lockKey})`
    const queries = Array.from({ length: max + 5 }, () =>
      sql`select pg_advisory_xact_lock_shared(${lockKey})`.then(() => 'done'),
    )
    let highest = 0
    const seen = await waitFor(`${max} ${pool} connections blocked on the gate`, async () => {
      const now = await poolConnections(server.database!, pool)
      highest = Math.max(highest, now.total)
      return now.waiting === max ? now : undefined
    })
    expect(seen.total).toBe(max)
    // Look a few more times while everything is queued: still no more than max.
    for (let look = 0; look < 5; look++)
      highest = Math.max(highest, (await poolConnections(server.database!, pool)).total)
    expect(highest).toBe(max)
    await gate`select pg_advisory_unlock(${lockKey})`
    expect(await within('queued queries finish once the gate opens', Promise.all(queries), 30_000)).toEqual(
      Array(max + 5).fill('done'),
    )
    expect((await poolConnections(server.database!, pool)).total).toBeLessThanOrEqual(max)
  })

  it('min idle: each pool holds at least its --*-min-idle connections soon after start', async () => {
    const server = await startTestServer({
      engine: 'postgresql',
      flags: { 'db-min-idle': 3, 'db-max-pool': 5, 'background-db-min-idle': 2, 'background-db-max-pool': 4 },
    })
    cleanups.push(() => server.stop())
    const primary = await waitFor('3 primary connections open', async () => {
      const now = await poolConnections(server.database!, 'primary')
      return now.total >= 3 ? now.total : undefined
    })
    const background = await waitFor('2 background connections open', async () => {
      const now = await poolConnections(server.database!, 'background')
      return now.total >= 2 ? now.total : undefined
    })
    expect(primary).toBeGreaterThanOrEqual(3)
    expect(primary).toBeLessThanOrEqual(5)
    expect(background).toBeGreaterThanOrEqual(2)
    expect(background).toBeLessThanOrEqual(4)
  })

  it('min idle 0: the background pool opens nothing until it is used', async () => {
    const server = await startTestServer({ engine: 'postgresql', flags: { 'background-db-min-idle': 0 } })
    cleanups.push(() => server.stop())
    expect((await poolConnections(server.database!, 'background')).total).toBe(0)
  })
})

describe.runIf(ON_EMBEDDED)('embedded: one server per data directory', () => {
  it('a second server in the same process on the same data dir fails with a clear "in use" error', async () => {
    const first = await startTestServer({ engine: 'embedded' })
    cleanups.push(() => first.stop())
    const second = await startTestServer({ engine: 'embedded', dataDir: first.dataDir, waitForReady: false })
    cleanups.push(() => second.stop())
    const error = await second.server.ready.then(
      () => undefined,
      (failure: unknown) => failure,
    )
    expect(error).toBeInstanceOf(DataDirInUseError)
    expect((error as Error).message).toMatch(/data directory .* is in use/)
    expect((error as Error).message).toContain(first.dataDir)
    // The first one is unharmed.
    expect(first.server.lifecycle.ready).toBe(true)
    expect((await httpRequest(`${first.restUrl}/readyz`)).status).toBe(200)
    expect(await first.server.context.database!.primary`select 1 as one`).toEqual([{ one: 1 }])
  })

  it('a second memsvc process on the same data dir exits with code 2 and says the directory is in use', async () => {
    const first = await startTestServer({ engine: 'embedded' })
    cleanups.push(() => first.stop())
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO_ROOT, 'src/main.ts'),
        'serve',
        '--data-dir',
        first.dataDir,
        '--tls-disabled',
        '--rest-port',
        '0',
        '--grpc-port',
        '0',
        '--bind-address',
        '127.0.0.1',
        '--metrics-scrape-secret',
        'x',
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    )
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const code = await within(
      'the second process to exit',
      new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode))),
      60_000,
    )
    expect(code, output).toBe(2)
    expect(output).toMatch(
      new RegExp(
        `data directory ${first.dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another memsvc process \\(pid ${process.pid}\\)`,
      ),
    )
    expect(first.server.lifecycle.ready).toBe(true)
  })

  it('the data dir is free again once the first server stops', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-lock-'))
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const first = await startTestServer({ engine: 'embedded', dataDir })
    await first.stop()
    expect(fs.existsSync(path.join(dataDir, 'memsvc.pid'))).toBe(false)
    const second = await startTestServer({ engine: 'embedded', dataDir })
    cleanups.push(() => second.stop())
    expect(second.server.lifecycle.ready).toBe(true)
  })

  it('a stale lock from a process that no longer exists does not block start', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-stale-'))
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    // A pid that cannot be alive: above the kernel's pid_max.
    fs.writeFileSync(path.join(dataDir, 'memsvc.pid'), '2147483646')
    const server = await startTestServer({ engine: 'embedded', dataDir })
    cleanups.push(() => server.stop())
    expect(server.server.lifecycle.ready).toBe(true)
  })
})

/**
 * Polls /livez in the background for the whole scenario, so "200 throughout"
 * covers every moment of the outage, not just the moments the test looked.
 */
function pollLiveness(restUrl: string): { stop(): Promise<Array<{ status: number; body: string }>> } {
  const results: Array<{ status: number; body: string }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      try {
        const response = await httpRequest(`${restUrl}/livez`, { timeoutMs: 5_000 })
        results.push({ status: response.status, body: response.body })
      } catch (error) {
        results.push({ status: 0, body: (error as Error).message })
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return results
    },
  }
}

async function readyz(server: TestServer) {
  const response = await httpRequest(`${server.restUrl}/readyz`)
  return { status: response.status, body: response.json() as Record<string, unknown> }
}

describe.runIf(ON_POSTGRES)('PostgreSQL outages (through a TCP proxy the test controls)', () => {
  let proxy: TcpProxy
  let database: TestDatabase
  let server: TestServer | undefined
  let health: HealthProbe | undefined
  let watch: HealthWatch | undefined

  beforeAll(async () => {
    database = await createTestDatabase()
  })

  afterEach(async () => {
    watch?.cancel()
    health?.close()
    await server?.stop()
    await proxy?.close()
    server = undefined
    health = undefined
    watch = undefined
  })

  afterAll(async () => {
    await database?.drop()
  })

  const dbUrlThrough = (port: number) => `jdbc:postgresql://127.0.0.1:${port}/${database.name}?user=postgres`

  it('database down at start: probes answer STARTING, health NOT_SERVING; then READY and SERVING when it comes up', async () => {
    // Disabled from the start: every connection is reset, as if the database were down.
    proxy = await startTcpProxy('127.0.0.1', 5432, { enabled: false })
    server = await startTestServer({
      engine: 'postgresql',
      database,
      flags: { 'db-url': dbUrlThrough(proxy.port) },
      waitForReady: false,
    })
    const liveness = pollLiveness(server.restUrl)
    health = new HealthProbe({ address: server.grpcAddress })
    watch = health.watch('')

    await waitFor('a failed connection attempt in the log', () =>
      server!.logs.some((line) => line.includes('database not reachable yet; retrying')),
    )
    expect(await readyz(server)).toEqual({ status: 503, body: { ready: false, state: 'STARTING' } })
    const startupz = await httpRequest(`${server.restUrl}/startupz`)
    expect([startupz.status, startupz.json()]).toEqual([503, { started: false, state: 'STARTING' }])
    const livez = await httpRequest(`${server.restUrl}/livez`)
    expect([livez.status, livez.json()]).toEqual([200, { state: 'STARTING' }])
    expect(await health.check('')).toBe(ServingStatus.NOT_SERVING)
    await watch.waitFor(ServingStatus.NOT_SERVING)
    expect(watch.statuses[0]).toBe(ServingStatus.NOT_SERVING)
    // Metrics still answer while the database is away.
    const metrics = await httpRequest(`${server.restUrl}/metrics`, {
      headers: { 'x-service-metrics-key': 'test-metrics-secret' },
    })
    expect(metrics.status).toBe(200)
    expect(metrics.body).toContain('memsvc_lifecycle_state{state="STARTING"} 1')
    // API calls while STARTING are a clear 503 / UNAVAILABLE, not an INTERNAL about missing tables.
    const client = new ApiClient({ restUrl: server.restUrl, grpcAddress: server.grpcAddress })
    try {
      for (const transport of TRANSPORTS) {
        expect((await client.call(transport, 'initializeSystem')).status).toBe('UNAVAILABLE')
        expect((await client.call(transport, 'listApiKeys', {}, generateApiKey())).status).toBe('UNAVAILABLE')
      }
    } finally {
      client.close()
    }

    proxy.enable()
    await within('READY once the database is reachable', server.server.ready, 60_000)
    expect(await readyz(server)).toEqual({ status: 200, body: { ready: true, state: 'READY' } })
    expect((await httpRequest(`${server.restUrl}/startupz`)).status).toBe(200)
    expect(await health.check('')).toBe(ServingStatus.SERVING)
    await watch.waitFor(ServingStatus.SERVING)
    expect(watch.error()).toBeUndefined()
    expect(await schemaMigrations(server)).toEqual(ALL_VERSIONS.map((version) => ({ version, count: 1 })))

    const polled = await liveness.stop()
    expect(polled.length).toBeGreaterThan(0)
    expect(polled.filter((entry) => entry.status !== 200)).toEqual([])
    expect(polled.every((entry) => ['STARTING', 'READY'].includes(JSON.parse(entry.body).state))).toBe(true)
  })

  it('a connection reset while postgres.js fetches array types fails only that query: no unhandled rejection, the next query works', async () => {
    proxy = await startTcpProxy('127.0.0.1', 5432)
    const unhandled: unknown[] = []
    const recordUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', recordUnhandled)
    const sql = postgres(`postgres://postgres@127.0.0.1:${proxy.port}/${database.name}`, { max: 1, onnotice: () => {} })
    try {
      // The query postgres.js sends on every new connection before the caller's own.
      proxy.resetOnceWhenClientSends('pg_catalog.pg_type')
      const first = await sql`select 1 as one`.then(
        () => 'resolved',
        (error: NodeJS.ErrnoException) => error.code,
      )
      expect(['ECONNRESET', 'CONNECTION_CLOSED']).toContain(first)
      expect(await sql`select 2 as two`).toEqual([{ two: 2 }])
      // An unhandled rejection is reported on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', recordUnhandled)
      await sql.end({ timeout: 1 })
    }
  })

  it('database lost while READY: readyz 503 and NOT_SERVING until it is back, then 200 and SERVING; no restart', async () => {
    proxy = await startTcpProxy('127.0.0.1', 5432)
    server = await startTestServer({ engine: 'postgresql', database, flags: { 'db-url': dbUrlThrough(proxy.port) } })
    const liveness = pollLiveness(server.restUrl)
    health = new HealthProbe({ address: server.grpcAddress })
    watch = health.watch('')
    await watch.waitFor(ServingStatus.SERVING)
    expect(await readyz(server)).toEqual({ status: 200, body: { ready: true, state: 'READY' } })

    proxy.disable()
    const down = await waitFor('readyz 503 after the database went away', async () => {
      const now = await readyz(server!)
      return now.status === 503 ? now : undefined
    })
    // The readiness body is {ready, state}; the server adds a reason while the database is away.
    expect(down.body).toMatchObject({ ready: false, state: 'READY' })
    expect(Object.keys(down.body).filter((key) => !['ready', 'state', 'reason'].includes(key))).toEqual([])
    expect(await health.check('')).toBe(ServingStatus.NOT_SERVING)
    const notServingAt = watch.statuses.indexOf(ServingStatus.NOT_SERVING)
    await watch.waitFor(ServingStatus.NOT_SERVING)
    expect((await httpRequest(`${server.restUrl}/startupz`)).status).toBe(200)
    const metrics = await httpRequest(`${server.restUrl}/metrics`, {
      headers: { 'x-service-metrics-key': 'test-metrics-secret' },
    })
    expect(metrics.status).toBe(200)
    expect(metrics.body).toContain('memsvc_ready 0')

    proxy.enable()
    const back = await waitFor('readyz 200 after the database came back', async () => {
      const now = await readyz(server!)
      return now.status === 200 ? now : undefined
    })
    expect(back.body).toEqual({ ready: true, state: 'READY' })
    expect(await health.check('')).toBe(ServingStatus.SERVING)
    const lostAt = Math.max(notServingAt, watch.statuses.indexOf(ServingStatus.NOT_SERVING))
    await watch.waitFor(ServingStatus.SERVING, lostAt + 1)
    expect(watch.statuses).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING, ServingStatus.SERVING])
    expect(watch.error()).toBeUndefined()
    // Same server object, same state, and the pool works again.
    expect(server.server.lifecycle.state).toBe('READY')
    expect(await server.server.context.database!.primary`select 1 as one`).toEqual([{ one: 1 }])

    const polled = await liveness.stop()
    expect(polled.length).toBeGreaterThan(0)
    expect(polled.filter((entry) => entry.status !== 200)).toEqual([])
    expect(polled.every((entry) => JSON.parse(entry.body).state === 'READY')).toBe(true)
  })
})
