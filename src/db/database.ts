import crypto from 'node:crypto'
import postgres from 'postgres'
import { type DatabaseTarget, describeDatabaseTarget } from '../config/database-url.js'
import type { PoolSettings, ServerConfig } from '../config/server-config.js'
import type { StartupTimeline } from '../lifecycle/startup-timeline.js'
import type { Logger } from '../observability/logger.js'
import type { PoolStats } from '../observability/metrics.js'
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded.js'
import { ReadReplicas, type ReplicaPools } from './read-replicas.js'

export type Sql = postgres.Sql<Record<string, never>>
/** A transaction handle; multi-statement writes take one. */
export type Tx = postgres.TransactionSql<Record<string, never>>
export type Queryable = Sql | Tx

const IDLE_TIMEOUT_SEC = 300
const CONNECT_TIMEOUT_SEC = 5
/**
 * Seconds a pool connection waits before it retries a failed connect. postgres.js's
 * default grows to 20 s, and the request queued behind that connection waits all of it:
 * requests hung for 10 s and more in an outage, and kept hanging after the database was
 * back. Capped this low, a queued request fails (503) or succeeds within half a second.
 */
const RECONNECT_FIRST_SEC = 0.05
const RECONNECT_MAX_SEC = 0.5
const reconnectBackoff = (retries: number) => Math.min(RECONNECT_FIRST_SEC * 2 ** retries, RECONNECT_MAX_SEC)
/** PostgreSQL answers `select 1` on its own connection in milliseconds; a second means it is gone. */
const POSTGRES_PING_TIMEOUT_MS = 1_000
/** PGlite runs the ping behind the requests on its one backend: it must answer the ping, or any other message, this soon. */
const EMBEDDED_PING_TIMEOUT_MS = 3_000
/** Shorter than IDLE_TIMEOUT_SEC, so the connections it touches never reach the idle timeout. */
const MIN_IDLE_REFRESH_MS = 60_000
/**
 * Embedded mode uses one connection for both pools. pglite-socket feeds the protocol
 * messages of all its connections to PGlite's single backend one message at a time, and
 * keeps a connection's messages together only inside a transaction: elsewhere another
 * connection's Bind can land between one query's Bind and Execute and replace the unnamed
 * portal ("portal \"\" does not exist", or rows answered to the wrong query; seen as soon
 * as ingest jobs ran beside requests). PGlite runs one statement at a time anyway.
 */
const EMBEDDED_CONNECTIONS = 1

/** A LISTEN subscription that knows whether it is currently receiving. */
export interface ChangeFeed {
  /** False while the listening connection is down: notifications may be missed. */
  readonly live: boolean
  close(): Promise<void>
}

export interface ChangeFeedHandlers {
  onMessage(channel: string, payload: string): void
  /** Called when the feed goes down or comes back. */
  onLiveChange(live: boolean): void
}

export interface Database {
  primary: Sql
  background: Sql
  /** Streaming replicas reads may use (--db-read-url); absent without any. Checked from the start. */
  replicas?: ReadReplicas
  engine: 'postgresql' | 'embedded'
  /**
   * Notifications from every process sharing the database. Embedded mode has one
   * process only, so its feed is always live and never needs to deliver anything.
   */
  subscribe(channels: string[], handlers: ChangeFeedHandlers): ChangeFeed
  /**
   * The application_name of this process's listening connection, unique per process
   * (pid plus a random suffix, since replicas on different hosts may share a pid).
   */
  readonly listenerName: string
  /** For the start-up log; never contains a password. */
  description: string
  /** Debug installs: "host:port" where the embedded database answers psql. */
  debugListen?: string
  poolStats(): Promise<PoolStats[]>
  /**
   * Whether the database answers, on a connection of its own: a health check queued
   * behind a saturated request pool would report an outage that is only load.
   */
  ping(): Promise<void>
  /** How long a ping may take before the database counts as unreachable. */
  pingTimeoutMs: number
  close(): Promise<void>
}

interface ClientTarget {
  hosts: string[]
  ports: number[]
  database: string
  user: string
  password?: string
  ssl: DatabaseTarget['ssl']
  path?: string
}

function sslOption(ssl: DatabaseTarget['ssl']): boolean | 'require' | 'prefer' | { rejectUnauthorized: boolean } {
  return ssl === 'verify-full' ? { rejectUnauthorized: true } : ssl
}

/** Where and as whom to connect, shared by the pools and the LISTEN connection. */
function connectionOptions(target: ClientTarget, applicationName: string): Record<string, unknown> {
  return {
    host: target.path ?? target.hosts,
    port: target.path ? undefined : target.ports,
    path: target.path,
    database: target.database,
    username: target.user,
    password: target.password,
    ssl: sslOption(target.ssl),
    connect_timeout: CONNECT_TIMEOUT_SEC,
    backoff: reconnectBackoff,
    connection: { application_name: applicationName },
    onnotice: () => {},
  }
}

export function createPool(target: ClientTarget, pool: PoolSettings, applicationName: string): Sql {
  const options = {
    ...connectionOptions(target, applicationName),
    max: pool.max,
    idle_timeout: IDLE_TIMEOUT_SEC,
    // Identifiers stay as written; the SQL modules map rows to API objects explicitly.
    transform: { undefined: null },
  } as unknown as postgres.Options<Record<string, never>>
  return postgres(options) as unknown as Sql
}

/**
 * postgres.js opens connections lazily and has no minimum; this holds `minIdle`
 * connections open by touching them more often than the idle timeout closes them.
 */
function keepMinIdle(sql: Sql, minIdle: number): () => void {
  if (minIdle === 0) return () => {}
  const touch = async () => {
    const reserved = await Promise.allSettled(Array.from({ length: minIdle }, () => sql.reserve()))
    await Promise.allSettled(
      reserved.map(async (entry) => {
        if (entry.status !== 'fulfilled') return
        try {
          await entry.value`select 1`
        } finally {
          entry.value.release()
        }
      }),
    )
  }
  void touch().catch(() => {})
  const timer = setInterval(() => void touch().catch(() => {}), MIN_IDLE_REFRESH_MS)
  timer.unref()
  return () => clearInterval(timer)
}

const LISTEN_RETRY_MS = 1_000

/** A dedicated connection running LISTEN, re-established after every disconnect. */
function subscribeOnPostgres(
  target: ClientTarget,
  listenerName: string,
  channels: string[],
  handlers: ChangeFeedHandlers,
): ChangeFeed {
  let live = false
  let closed = false
  const setLive = (next: boolean) => {
    if (live === next) return
    live = next
    handlers.onLiveChange(next)
  }
  const client = postgres({
    ...connectionOptions(target, listenerName),
    max: 1,
    idle_timeout: undefined,
    max_lifetime: null,
    onnotify: (notifiedChannel: string, payload: string) => {
      if (channels.includes(notifiedChannel)) handlers.onMessage(notifiedChannel, payload)
    },
    onclose: () => {
      setLive(false)
      if (!closed) setTimeout(() => void startListening(), LISTEN_RETRY_MS).unref()
    },
  } as unknown as postgres.Options<Record<string, never>>)
  const startListening = async () => {
    if (closed) return
    try {
      for (const channel of channels) await client.unsafe(`listen "${channel.replace(/"/g, '""')}"`)
      setLive(true)
    } catch {
      setLive(false)
      if (!closed) setTimeout(() => void startListening(), LISTEN_RETRY_MS).unref()
    }
  }
  void startListening()
  return {
    get live() {
      return live
    },
    async close() {
      closed = true
      setLive(false)
      await client.end({ timeout: 1 })
    },
  }
}

const ALWAYS_LIVE_FEED: ChangeFeed = { live: true, close: async () => {} }

async function postgresPoolStats(
  sql: Sql,
  pools: Array<{ name: string; applicationName: string; max: number }>,
): Promise<PoolStats[]> {
  const rows = await sql<Array<{ application_name: string; open: number; active: number }>>`
    select application_name, count(*)::int as open, count(*) filter (where state = 'active')::int as active
    from pg_stat_activity
    where pid <> pg_backend_pid() and application_name in ${sql(pools.map((pool) => pool.applicationName))}
    group by application_name`
  return pools.map((pool) => {
    const row = rows.find((entry) => entry.application_name === pool.applicationName)
    return { pool: pool.name, max: pool.max, open: row?.open ?? 0, active: row?.active ?? 0 }
  })
}

/** postgres.js's target for the embedded database's private socket. */
export const embeddedClientTarget = (socketPath: string): ClientTarget => ({
  hosts: [],
  ports: [],
  database: 'postgres',
  user: 'postgres',
  ssl: false,
  path: socketPath,
})

/** A replica's read pool, as large as the primary's, and its one check connection. */
function replicaPools(target: DatabaseTarget, index: number, pool: PoolSettings): ReplicaPools {
  const clientTarget: ClientTarget = { ...target, user: target.user! }
  return {
    name: describeDatabaseTarget(target).replace(/^postgresql:\/\/[^@/]*@/, ''),
    reads: createPool(clientTarget, { minIdle: 0, max: pool.max }, `memsvc-read-${process.pid}-${index + 1}`),
    checks: createPool(clientTarget, { minIdle: 0, max: 1 }, `memsvc-read-check-${process.pid}-${index + 1}`),
  }
}

/** `startup`, when given, records the embedded database's own start-up phases. */
export async function openDatabase(config: ServerConfig, log: Logger, startup?: StartupTimeline): Promise<Database> {
  const stopKeepers: Array<() => void> = []
  if (config.database) {
    const target = config.database
    const clientTarget: ClientTarget = { ...target, user: target.user! }
    const suffix = process.pid
    const listenerName = `memsvc-listen-${process.pid}-${crypto.randomBytes(3).toString('hex')}`
    const pools = [
      { name: 'primary', applicationName: `memsvc-primary-${suffix}`, settings: config.primaryPool },
      { name: 'background', applicationName: `memsvc-background-${suffix}`, settings: config.backgroundPool },
    ]
    const primary = createPool(clientTarget, config.primaryPool, pools[0]!.applicationName)
    const background = createPool(clientTarget, config.backgroundPool, pools[1]!.applicationName)
    stopKeepers.push(
      keepMinIdle(primary, config.primaryPool.minIdle),
      keepMinIdle(background, config.backgroundPool.minIdle),
    )
    const healthCheck = createPool(clientTarget, { minIdle: 0, max: 1 }, `memsvc-health-${suffix}`)
    const replicas = config.readReplicas.length
      ? new ReadReplicas(
          primary,
          config.readReplicas.map((replica, index) => replicaPools(replica, index, config.primaryPool)),
          config.readRouting,
          log,
        )
      : undefined
    return {
      primary,
      background,
      replicas,
      ping: async () => void (await healthCheck`select 1`),
      pingTimeoutMs: POSTGRES_PING_TIMEOUT_MS,
      engine: 'postgresql',
      description: describeDatabaseTarget(target),
      listenerName,
      subscribe: (channels, handlers) => subscribeOnPostgres(clientTarget, listenerName, channels, handlers),
      poolStats: () =>
        postgresPoolStats(
          primary,
          pools.map((pool) => ({ name: pool.name, applicationName: pool.applicationName, max: pool.settings.max })),
        ),
      async close() {
        for (const stop of stopKeepers) stop()
        await Promise.all([
          replicas?.close(),
          primary.end({ timeout: 5 }),
          background.end({ timeout: 5 }),
          healthCheck.end({ timeout: 1 }),
        ])
      },
    }
  }

  const pool = { minIdle: 0, max: EMBEDDED_CONNECTIONS }
  const embedded: EmbeddedPostgres = await startEmbeddedPostgres(
    config.dataDir,
    pool.max,
    log,
    config.debugDbListen,
    startup,
  )
  const shared = createPool(embeddedClientTarget(embedded.socketPath), pool, 'memsvc-embedded')
  let pendingPing: Promise<unknown> | undefined
  log.info(
    'embedded single-node database: one server process per data directory; use --db-url for PostgreSQL and replicas',
    {
      dataDir: config.dataDir,
      connections: pool.max,
    },
  )
  return {
    primary: shared,
    background: shared,
    engine: 'embedded',
    // In-process: an unanswered query here means PGlite itself is stuck, not the network.
    // A full disk does not stop `select 1`, so the file system is asked directly.
    ping: async () => {
      embedded.requireFreeSpace()
      // The last ping's query may still wait behind a long transaction: never queue a second.
      pendingPing ??= shared`select 1`.finally(() => {
        pendingPing = undefined
      })
      await Promise.race([pendingPing, embedded.nextAnswer()])
    },
    pingTimeoutMs: EMBEDDED_PING_TIMEOUT_MS,
    subscribe: () => ALWAYS_LIVE_FEED,
    listenerName: 'memsvc-embedded',
    description: `embedded PGlite in ${embedded.dataDir}`,
    debugListen: embedded.debugListen,
    // The in-process socket server sees connections, not which pool opened them.
    poolStats: async () => [{ pool: 'embedded', max: pool.max, open: embedded.activeConnections() }],
    async close() {
      await shared.end({ timeout: 5 })
      await embedded.stop()
    },
  }
}

/**
 * A condition that is always true and, as it is evaluated, turns synchronous_commit off
 * for the statement's own transaction: its commit does not wait for the WAL to reach disk.
 * AND it into the WHERE of a single-statement write whose loss in a database crash is
 * harmless because the work is redone: a job's claim, status and outcome (a lost one means
 * the job runs again after its lease; jobs are idempotent). On a busy queue these flushes,
 * several per job, were most of a job's waiting; a transaction around the statement to
 * SET LOCAL would cost two more round trips. Anything later committed durably makes these
 * durable too (the WAL is flushed in order).
 */
export const COMMIT_WITHOUT_FLUSH = "set_config('synchronous_commit', 'off', true) is not null"

/** A reserved connection: statements on it run in the order sent, pipelined. */
export type ReservedSql = postgres.ReservedSql<Record<string, never>>

/**
 * Statements that need none of each other's answers, written together on one reserved
 * connection: one write and one wake-up of one backend, where each statement sent on its
 * own through the pool can take a connection (and a wake-up) of its own. Resolves with
 * every answer in order; the first failure is thrown once all have settled, and the
 * connection goes back to the pool.
 */
export async function pipelined<Results extends readonly unknown[]>(
  sql: Sql,
  statements: (connection: ReservedSql) => { [Index in keyof Results]: PromiseLike<Results[Index]> },
): Promise<Results> {
  const connection = await sql.reserve()
  try {
    const settled = await Promise.allSettled(statements(connection))
    const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
    if (failed) throw failed.reason
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as Results
  } finally {
    connection.release()
  }
}

/**
 * One transaction in one round trip: BEGIN, the statements and COMMIT pipelined, for
 * statements that need none of each other's answers (a transaction-local setting and the
 * statement it is for). `sql.begin` waits for BEGIN's answer before it sends the first
 * statement and for the last answer before it sends COMMIT: three round trips, each one
 * more wake-up of the backend. postgres.js ends every statement with its own Sync, so a
 * failing statement makes the later ones fail ("current transaction is aborted") and
 * COMMIT roll back: the connection goes back to the pool outside any transaction.
 */
export async function pipelinedTransaction<Results extends readonly unknown[]>(
  sql: Sql,
  statements: (tx: ReservedSql) => { [Index in keyof Results]: PromiseLike<Results[Index]> },
): Promise<Results> {
  const answers = await pipelined<unknown[]>(sql, (tx) => [tx`begin`, ...statements(tx), tx`commit`])
  return answers.slice(1, -1) as unknown as Results
}
