// A fresh PostgreSQL database per run, dropped at the end (also on SIGINT).
import crypto from 'node:crypto'
import postgres from 'postgres'
import { backendCpuBetween, backendCpuSeconds } from './postgres-cpu.js'

/** The machine's PostgreSQL 15 (trust auth); override for another server. */
export const ADMIN_URL = process.env.MEMSVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export interface BenchDatabase {
  name: string
  /** postgres:// form, for the floors (postgres.js). */
  url: string
  /** What `memsvc serve --db-url` takes. */
  jdbcUrl: string
  user: string
  serverVersion: string
  /** VACUUM ANALYZE of the whole database, waited for. */
  vacuumAnalyze(): Promise<void>
  /**
   * VACUUM ANALYZE, then CHECKPOINT: what a bulk load leaves PostgreSQL to do in the
   * background (autovacuum of the loaded tables, writing the dirty buffers) done now, so a
   * latency probe after the load does not time it.
   */
  settle(): Promise<void>
  drop(): Promise<void>
  /** Measures the CPU time of this database's own backends (PostgreSQL runs on this machine). */
  openBackendMeter(): Promise<BackendMeter>
}

/**
 * CPU time of the PostgreSQL backends connected to one database: the server processes
 * that run its queries, without the shared ones (checkpointer, WAL writer) or other
 * databases' work. Read from /proc, so only for a PostgreSQL on this machine.
 */
export interface BackendMeter {
  /** CPU seconds those backends used since the previous call (since opening, the first time). */
  sample(): Promise<number>
  close(): Promise<void>
}

async function openBackendMeter(databaseName: string): Promise<BackendMeter> {
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 })
  let previous = await backendCpuSeconds(sql, databaseName)
  const sample = async () => {
    const now = await backendCpuSeconds(sql, databaseName)
    const used = backendCpuBetween(previous, now).seconds
    previous = now
    return used
  }
  return { sample, close: () => sql.end({ timeout: 5 }) }
}

async function withAdmin<T>(run: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 })
  try {
    return await run(sql)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `memsvc_bench_${crypto.randomBytes(5).toString('hex')}`
  const serverVersion = await withAdmin(async (sql) => {
    await sql.unsafe(`create database ${name}`)
    const [row] = await sql<Array<{ server_version: string }>>`show server_version`
    return row!.server_version
  })
  const admin = new URL(ADMIN_URL)
  const user = decodeURIComponent(admin.username) || 'postgres'
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  let dropped = false
  const vacuumAnalyze = async () => {
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 })
    try {
      await sql.unsafe('vacuum analyze')
    } finally {
      await sql.end({ timeout: 5 })
    }
  }
  return {
    name,
    url: url.toString(),
    jdbcUrl: `jdbc:postgresql://${admin.host}/${name}`,
    user,
    serverVersion,
    vacuumAnalyze,
    async settle() {
      await vacuumAnalyze()
      await withAdmin((sql) => sql.unsafe('checkpoint'))
    },
    openBackendMeter: () => openBackendMeter(name),
    async drop() {
      if (dropped) return
      dropped = true
      await withAdmin((sql) => sql.unsafe(`drop database if exists ${name} with (force)`))
    },
  }
}
