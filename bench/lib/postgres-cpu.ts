// The database's own CPU time: the backends serving one database, read from /proc (the
// harness runs on the database's host). PostgreSQL's shared background processes (WAL
// writer, checkpointer, autovacuum launcher) serve every database on the server, other
// users' too, and are left out.
import type postgres from 'postgres'
import { cpuSeconds } from './machine.js'

/**
 * CPU seconds so far of each backend connected to `databaseName` (by default the asking
 * connection's own database), by pid. The asking connection counts too: a pool may ask
 * through another connection next time, and one left out of the first reading but not of
 * the second would count its whole life (the memory benchmark asks through the floor's
 * pool, so that was every earlier floor query: PostgreSQL CPU per request came out above
 * what two cores can give).
 */
export async function backendCpuSeconds(sql: postgres.Sql, databaseName?: string): Promise<Map<number, number>> {
  const backends = await sql<Array<{ pid: number }>>`
    select pid from pg_stat_activity
    where datname = coalesce(${databaseName ?? null}::text, current_database())
      and backend_type = 'client backend'`
  const seconds = new Map<number, number>()
  for (const { pid } of backends) {
    const used = cpuSeconds(pid)
    if (used !== undefined) seconds.set(pid, used)
  }
  return seconds
}

/**
 * CPU seconds the backends used between two snapshots. A backend that connected in between
 * counts from zero; one that disconnected in between is missed (pools hold theirs open
 * through a run, so that is rare), and the count of both is returned to say so.
 */
export function backendCpuBetween(
  before: Map<number, number>,
  after: Map<number, number>,
): { seconds: number; backends: number; connected: number; disconnected: number } {
  let seconds = 0
  let connected = 0
  for (const [pid, used] of after) {
    const earlier = before.get(pid)
    if (earlier === undefined) connected++
    seconds += used - (earlier ?? 0)
  }
  const disconnected = [...before.keys()].filter((pid) => !after.has(pid)).length
  return { seconds, backends: after.size, connected, disconnected }
}
