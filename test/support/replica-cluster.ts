import { execFile } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import { POSTGRES_ADMIN_URL } from './databases.js'

const run = promisify(execFile)

/**
 * A streaming replica of the machine's PostgreSQL, made for a test and removed after it:
 * `pg_basebackup -R` of the whole cluster into a temporary directory, started on a port of
 * its own (design.md §6, "Replicas"). The machine's cluster keeps its config in
 * /etc/postgresql, so the copy gets a minimal postgresql.conf and the two other files.
 */
export interface ReplicaCluster {
  port: number
  /** postgres://… of `database` on the replica. */
  urlOf(database: string): string
  /** pg_wal_replay_pause(): the replica keeps receiving WAL but applies none of it. */
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  /** `pg_ctl stop -m immediate`: as a crash or a pulled cable would. */
  stop(): Promise<void>
  start(): Promise<void>
  /** Waits until the replica has replayed everything the primary had when this was called. */
  caughtUp(timeoutMs?: number): Promise<void>
  remove(): Promise<void>
}

const REPLICATION_HBA_LINE = 'host replication all 127.0.0.1/32 trust'
const START_TIMEOUT_SEC = 60
/** Settings a hot standby needs at least as high as its primary's, or it refuses to start. */
const SETTINGS_NOT_BELOW_PRIMARY = [
  'max_connections',
  'max_worker_processes',
  'max_wal_senders',
  'max_prepared_transactions',
  'max_locks_per_transaction',
]

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

const asPostgres = (command: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', command, ...args])

/** Lets the machine's cluster accept replication connections from loopback; says whether it had to. */
async function allowReplication(admin: postgres.Sql): Promise<{ hbaFile: string; added: boolean }> {
  const [row] = await admin<Array<{ hbaFile: string }>>`select current_setting('hba_file') as "hbaFile"`
  const hbaFile = row!.hbaFile
  const text = fs.readFileSync(hbaFile, 'utf8')
  if (text.split('\n').some((line) => line.trim().replace(/\s+/g, ' ') === REPLICATION_HBA_LINE))
    return { hbaFile, added: false }
  fs.writeFileSync(hbaFile, `${text.endsWith('\n') ? text : `${text}\n`}${REPLICATION_HBA_LINE}\n`)
  await admin`select pg_reload_conf()`
  return { hbaFile, added: true }
}

async function forgetReplication(admin: postgres.Sql, hbaFile: string): Promise<void> {
  const kept = fs
    .readFileSync(hbaFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim().replace(/\s+/g, ' ') !== REPLICATION_HBA_LINE)
  fs.writeFileSync(hbaFile, kept.join('\n'))
  await admin`select pg_reload_conf()`
}

export async function startReplicaCluster(): Promise<ReplicaCluster> {
  if (process.getuid?.() !== 0)
    throw new Error('a test replica needs root: it edits pg_hba.conf and runs pg_basebackup and pg_ctl as postgres')
  const admin = postgres(POSTGRES_ADMIN_URL, { max: 1, onnotice: () => {} })
  const primaryUrl = new URL(POSTGRES_ADMIN_URL)
  const [cluster] = await admin<Array<{ version: string; identFile: string }>>`
    select current_setting('server_version_num') as version, current_setting('ident_file') as "identFile"`
  const { version, identFile } = cluster!
  const bin = `/usr/lib/postgresql/${Math.floor(Number(version) / 10_000)}/bin`
  const settings = await admin<Array<{ name: string; setting: string }>>`
    select name, setting from pg_settings where name in ${admin(SETTINGS_NOT_BELOW_PRIMARY)}`
  const { hbaFile, added } = await allowReplication(admin)

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-replica-'))
  const dataDir = path.join(root, 'data')
  const logFile = path.join(root, 'postgres.log')
  fs.chmodSync(root, 0o755)
  await run('chown', ['postgres:postgres', root])
  const port = await freePort()
  const pgCtl = (args: string[]) => asPostgres(`${bin}/pg_ctl`, ['-D', dataDir, ...args])
  let running = false

  const remove = async () => {
    if (running) await pgCtl(['stop', '-m', 'immediate', '-w']).catch(() => {})
    running = false
    fs.rmSync(root, { recursive: true, force: true })
    if (added) await forgetReplication(admin, hbaFile).catch(() => {})
    await admin.end({ timeout: 1 })
  }

  try {
    await asPostgres(`${bin}/pg_basebackup`, [
      ...['-D', dataDir, '-R', '-X', 'stream', '-c', 'fast'],
      ...['-h', primaryUrl.hostname, '-p', primaryUrl.port || '5432', '-U', primaryUrl.username || 'postgres'],
    ])
    const conf = [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${root}'`,
      'hot_standby = on',
      ...settings.map((entry) => `${entry.name} = ${entry.setting}`),
    ]
    fs.writeFileSync(path.join(dataDir, 'postgresql.conf'), `${conf.join('\n')}\n`)
    fs.copyFileSync(hbaFile, path.join(dataDir, 'pg_hba.conf'))
    fs.copyFileSync(identFile, path.join(dataDir, 'pg_ident.conf'))
    await run('chown', ['-R', 'postgres:postgres', dataDir])
  } catch (error) {
    await remove()
    throw error
  }

  const replicaUrl = (database: string) =>
    `postgres://${primaryUrl.username || 'postgres'}@127.0.0.1:${port}/${database}`
  const onReplica = async <T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> => {
    const sql = postgres(replicaUrl('postgres'), { max: 1, onnotice: () => {} })
    try {
      return await work(sql)
    } finally {
      await sql.end({ timeout: 1 })
    }
  }
  const replica: ReplicaCluster = {
    port,
    urlOf: replicaUrl,
    pauseReplay: () => onReplica(async (sql) => void (await sql`select pg_wal_replay_pause()`)),
    resumeReplay: () => onReplica(async (sql) => void (await sql`select pg_wal_replay_resume()`)),
    async stop() {
      await pgCtl(['stop', '-m', 'immediate', '-w'])
      running = false
    },
    async start() {
      await pgCtl(['start', '-w', '-t', String(START_TIMEOUT_SEC), '-l', logFile])
      running = true
    },
    async caughtUp(timeoutMs = 30_000) {
      const [primary] = await admin<Array<{ lsn: string }>>`select pg_current_wal_lsn()::text as lsn`
      const lsn = primary!.lsn
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const replayed = await onReplica(
          (sql) => sql<Array<{ done: boolean }>>`select pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as done`,
        ).catch(() => [{ done: false }])
        if (replayed[0]?.done) return
        if (Date.now() > deadline) throw new Error(`the replica did not replay ${lsn} within ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    remove,
  }
  try {
    await replica.start()
    await replica.caughtUp()
  } catch (error) {
    const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2_000) : ''
    await remove()
    throw new Error(`the replica did not start: ${(error as Error).message}\n${log}`)
  }
  return replica
}
