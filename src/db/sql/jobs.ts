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

/** How many jobs of one kind a single run may take together (kinds not named: one). */
export interface BatchLimit {
  kind: string
  limit: number
}

/**
 * Kinds whose jobs name a lane in their payload (memory.ingest: its space), and what this
 * worker already runs of each lane. A run takes one lane's jobs; runs are shared out lane by
 * lane (a lane's next run comes after every other lane's run with fewer under way); a lane
 * never has more than `maxRunsPerLane` runs under way, and a held lane gets none.
 */
export interface LaneRules {
  keys: Array<{ kind: string; payloadKey: string }>
  /** Lanes with runs under way here. */
  running: Array<{ kind: string; lane: string; runs: number }>
  /** Lanes not to claim now, whatever they run (a handler knows they would only wait). */
  held: Array<{ kind: string; lane: string }>
  maxRunsPerLane: number
}

const NO_LANES: LaneRules = { keys: [], running: [], held: [], maxRunsPerLane: 1 }

/** A claimed job, the run it belongs to (jobs with the same `run` are run together) and its lane, if its kind has lanes. */
export interface ClaimedJobRow extends JobRow {
  run: number
  lane: string | null
}

/**
 * Takes runnable jobs for `worker` (pending ones whose time has come and running ones whose
 * lease expired: their worker died), enough for `runs` runs: a run is one job, or up to its
 * kind's batch limit of jobs of one kind (and lane), the runs taken oldest first within the
 * lane rules. SKIP LOCKED lets every process claim at once without waiting on or
 * double-taking each other's rows; candidates looked at but not taken are locked only while
 * this statement runs. Jobs of a full or held lane are not candidates, so a lane that must
 * wait does not fill the candidates and hide the others' jobs.
 */
export async function claimJobs(
  sql: Sql,
  worker: string,
  runs: number,
  leaseSeconds: number,
  batchLimits: BatchLimit[],
  lanes: LaneRules = NO_LANES,
): Promise<ClaimedJobRow[]> {
  const widest = Math.max(1, ...batchLimits.map((batch) => batch.limit))
  const closed = [...lanes.running.filter((lane) => lane.runs >= lanes.maxRunsPerLane), ...lanes.held]
  const payloadKeys = lanes.keys.map((key) => key.payloadKey)
  const laneKinds = lanes.keys.map((key) => key.kind)
  const laneOfJob = sql`payload ->> (${payloadKeys}::text[])[array_position(${laneKinds}::text[], kind)]`
  return sql<ClaimedJobRow[]>`
    with candidates as materialized (
      select id, kind, run_after, ${laneOfJob} as lane from jobs
      where ((status = 'PENDING' and run_after <= now()) or (status = 'RUNNING' and locked_until < now()))
        and (kind, coalesce(${laneOfJob}, '')) not in (
          select * from unnest(${closed.map((lane) => lane.kind)}::text[], ${closed.map((lane) => lane.lane)}::text[]))
      order by run_after
      limit ${runs * widest}
      for update skip locked
    ), grouped as (
      select c.id, c.kind, c.lane, c.run_after,
        (row_number() over (partition by c.kind, c.lane order by c.run_after, c.id) - 1) / coalesce(l.size, 1) as unit
      from candidates c
      left join unnest(${batchLimits.map((batch) => batch.kind)}::text[], ${batchLimits.map((batch) => batch.limit)}::int[])
        as l (kind, size) on l.kind = c.kind
    ), units as (
      select g.id, g.kind, g.lane, g.unit, min(g.run_after) over (partition by g.kind, g.lane, g.unit) as first_run_after,
        case when g.lane is null then 0 else coalesce(r.runs, 0) + g.unit end as share
      from grouped g
      left join unnest(${lanes.running.map((lane) => lane.kind)}::text[], ${lanes.running.map((lane) => lane.lane)}::text[],
        ${lanes.running.map((lane) => lane.runs)}::int[]) as r (kind, lane, runs) on r.kind = g.kind and r.lane = g.lane
    ), ranked as (
      select id, lane, dense_rank() over (order by share, first_run_after, kind, lane, unit)::int as run
      from units
      where share < ${lanes.maxRunsPerLane}
    )
    update jobs set status = 'RUNNING', attempts = attempts + 1, locked_by = ${worker},
      locked_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
    from ranked
    where jobs.id = ranked.id and ranked.run <= ${runs} and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}
    returning jobs.id, jobs.kind, jobs.payload, jobs.status, jobs.attempts, jobs.max_attempts, jobs.run_after,
      jobs.last_error, ranked.run, ranked.lane`
}

/** Pushes back the lease of the jobs `worker` still holds, while their run goes on. */
export async function extendLeases(sql: Sql, worker: string, ids: string[], leaseSeconds: number): Promise<void> {
  await sql`
    update jobs set locked_until = now() + make_interval(secs => ${leaseSeconds})
    where id = any(${ids}::uuid[]) and locked_by = ${worker} and status = 'RUNNING' and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}`
}

/** Every claimed job back to PENDING, runnable now; returns how many. Only for a queue this process alone uses. */
export async function releaseAllClaims(sql: Queryable): Promise<number> {
  const rows = await sql`
    update jobs set status = 'PENDING', locked_by = null, locked_until = null, run_after = now(), updated_at = now()
    where status = 'RUNNING'
    returning id`
  return rows.length
}

/** What became of one run of a job: done, to run again after `retryInMs`, or failed for good. */
export type JobOutcome =
  | { id: string; status: 'SUCCEEDED' }
  | { id: string; status: 'PENDING'; error: string; retryInMs: number }
  | { id: string; status: 'FAILED'; error: string }

/**
 * The outcomes of a run's jobs, in one statement however many. A job another worker took
 * meanwhile (its lease expired) is left to that worker. A success keeps the last error of
 * earlier attempts, for inspection.
 */
export async function recordJobOutcomes(sql: Sql, worker: string, outcomes: JobOutcome[]): Promise<void> {
  if (outcomes.length === 0) return
  await sql`
    update jobs set
      status = input.status,
      last_error = case when input.status = 'SUCCEEDED' then jobs.last_error else input.error end,
      run_after = case when input.status = 'PENDING' then now() + make_interval(secs => input.retry_seconds) else jobs.run_after end,
      finished_at = case when input.status = 'PENDING' then null else now() end,
      locked_by = null, locked_until = null, updated_at = now()
    from unnest(${outcomes.map((outcome) => outcome.id)}::uuid[], ${outcomes.map((outcome) => outcome.status)}::text[],
      ${outcomes.map((outcome) => ('error' in outcome ? outcome.error : null))}::text[],
      ${outcomes.map((outcome) => (outcome.status === 'PENDING' ? outcome.retryInMs / 1000 : 0))}::float8[])
      as input (id, status, error, retry_seconds)
    where jobs.id = input.id and jobs.locked_by = ${worker} and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}`
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
  const rows = await sql`
    delete from jobs where status in ('SUCCEEDED', 'FAILED') and finished_at < now() - make_interval(secs => ${olderThanSeconds})
    returning id`
  return rows.length
}
