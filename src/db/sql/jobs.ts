import { COMMIT_WITHOUT_FLUSH, type Queryable, type Sql } from '../database.js'

export interface JobRow {
  id: string
  kind: string
  payload: Record<string, unknown>
  status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED'
  attempts: number
  max_attempts: number
  run_after: Date
  last_error: string | null
}

export interface NewJob {
  id: string
  kind: string
  payload: unknown
  maxAttempts: number
  runAfter: Date
}

/** Jobs in one statement, however many (a batch of memories: one ingest job each). */
export async function insertJobs(sql: Queryable, jobs: NewJob[]): Promise<void> {
  if (jobs.length === 0) return
  await sql`
    insert into jobs (id, kind, payload, status, max_attempts, run_after, created_at, updated_at)
    select id, kind, payload::jsonb, 'PENDING', max_attempts, run_after::timestamptz, now(), now()
    from unnest(${jobs.map((job) => job.id)}::uuid[], ${jobs.map((job) => job.kind)}::text[],
      ${jobs.map((job) => JSON.stringify(job.payload))}::text[], ${jobs.map((job) => job.maxAttempts)}::int[],
      ${jobs.map((job) => job.runAfter.toISOString())}::text[]) as input (id, kind, payload, max_attempts, run_after)`
}

/**
 * Takes up to `limit` runnable jobs for `worker`: pending ones whose time has come and
 * running ones whose lease expired (their worker died). SKIP LOCKED lets every process
 * claim at once without waiting on or double-taking each other's rows.
 */
export async function claimJobs(sql: Sql, worker: string, limit: number, leaseSeconds: number): Promise<JobRow[]> {
  return sql<JobRow[]>`
    update jobs set status = 'RUNNING', attempts = attempts + 1, locked_by = ${worker},
      locked_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
    where id in (
      select id from jobs
      where (status = 'PENDING' and run_after <= now()) or (status = 'RUNNING' and locked_until < now())
      order by run_after
      limit ${limit}
      for update skip locked
    ) and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}
    returning id, kind, payload, status, attempts, max_attempts, run_after, last_error`
}

/** Every claimed job back to PENDING, runnable now; returns how many. Only for a queue this process alone uses. */
export async function releaseAllClaims(sql: Queryable): Promise<number> {
  const rows = await sql`
    update jobs set status = 'PENDING', locked_by = null, locked_until = null, run_after = now(), updated_at = now()
    where status = 'RUNNING'
    returning id`
  return rows.length
}

export async function completeJob(sql: Sql, id: string, worker: string): Promise<void> {
  await sql`
    update jobs set status = 'SUCCEEDED', finished_at = now(), updated_at = now(), locked_by = null, locked_until = null
    where id = ${id} and locked_by = ${worker} and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}`
}

/** Back to PENDING after `retryInMs`, or FAILED with its last error once it has no attempts left. */
export async function failJob(
  sql: Sql,
  id: string,
  worker: string,
  error: string,
  retryInMs: number | undefined,
): Promise<void> {
  await sql`
    update jobs set
      status = ${retryInMs === undefined ? 'FAILED' : 'PENDING'},
      last_error = ${error},
      run_after = now() + make_interval(secs => ${(retryInMs ?? 0) / 1000}),
      finished_at = ${retryInMs === undefined ? new Date() : null},
      locked_by = null, locked_until = null, updated_at = now()
    where id = ${id} and locked_by = ${worker} and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}`
}

export async function countJobsByStatus(sql: Queryable): Promise<Array<{ status: string; count: number }>> {
  return sql<Array<{ status: string; count: number }>>`select status, count(*)::int as count from jobs group by status`
}

/** Jobs not yet finished (waiting to run or running), per kind: e.g. the memory ingest backlog. */
export async function countUnfinishedJobsByKind(sql: Queryable): Promise<Array<{ kind: string; count: number }>> {
  return sql<
    Array<{ kind: string; count: number }>
  >`select kind, count(*)::int as count from jobs where status in ('PENDING', 'RUNNING') group by kind`
}

export async function findJob(sql: Queryable, id: string): Promise<JobRow | undefined> {
  const rows = await sql<
    JobRow[]
  >`select id, kind, payload, status, attempts, max_attempts, run_after, last_error from jobs where id = ${id}`
  return rows[0]
}

/** Finished jobs are kept for a while for inspection, then removed. */
export async function deleteFinishedJobs(sql: Queryable, olderThanSeconds: number): Promise<number> {
  const rows =
    await sql`delete from jobs where status in ('SUCCEEDED', 'FAILED') and finished_at < now() - make_interval(secs => ${olderThanSeconds}) returning id`
  return rows.length
}
