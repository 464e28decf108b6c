import crypto from 'node:crypto'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { Queryable, Sql } from '../db/database.js'
import * as jobsSql from '../db/sql/jobs.js'
import type { JobQueue } from '../domain/job-queue.js'
import type { WorkIntake } from '../lifecycle/drain.js'
import type { Logger } from '../observability/logger.js'

/** A job kind: what it does with its payload, and how often it may be tried. */
export interface JobHandler<Payload = Record<string, unknown>> {
  kind: string
  maxAttempts: number
  run(payload: Payload, attempt: number): Promise<void>
  /**
   * Set by kinds whose jobs are cheaper done together (one provider call, one transaction
   * for many): up to `limit` ready jobs of the kind are claimed as one run and handed to
   * `runMany`, which settles each job on its own, in order, so one job's failure is its own.
   */
  batch?: {
    limit: number
    runMany(jobs: Array<{ payload: Payload; attempt: number }>): Promise<Array<PromiseSettledResult<void>>>
  }
  /**
   * Set by kinds whose jobs wait on something some of them share (memory.ingest: a space's
   * embedders): a job's lane is its payload's `payloadKey`. A run takes one lane's jobs, the
   * lanes share the workers, and no lane has more runs at once than all workers but one
   * (maxRunsPerLane): jobs whose provider stalls can never hold every worker, and another
   * lane's jobs still run.
   */
  lanes?: {
    payloadKey: string
    /**
     * Lanes not to claim now: their jobs would only wait, holding a worker (a provider they
     * share with other lanes has as many calls under way as a lane may have runs).
     */
    held?(maxRunsPerLane: number): Iterable<string>
  }
}

/** Thrown by a handler when trying again cannot help (the resource is gone, the input is wrong). */
export class PermanentJobError extends Error {}

/**
 * A failure may say how long trying again is pointless (`retryAfterMs`: a provider's
 * Retry-After, a stalled provider's cool-down); the job's retry waits at least that long.
 */
function requestedRetryDelay(error: unknown): number {
  const requested = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs
  return typeof requested === 'number' && Number.isFinite(requested) ? requested : 0
}

const laneKey = (kind: string, lane: string) => `${kind}\n${lane}`

/** How many runs one lane may have at once with `concurrency` workers: all but one, so another lane always finds one. */
export const maxRunsPerLane = (concurrency: number): number => Math.max(1, concurrency - 1)

export interface JobProcessorOptions {
  /** Jobs run at once by this process. */
  concurrency: number
  pollIntervalMs: number
  /** A claimed job not finished within this time is taken again by another worker. */
  leaseSeconds: number
  /** First retry delay; doubles with each attempt up to maxRetryDelayMs. */
  retryBaseMs: number
  maxRetryDelayMs: number
}

export const DEFAULT_JOB_OPTIONS: JobProcessorOptions = {
  // One lane may have all runs but one (maxRunsPerLane): a space's ingest gets the four it
  // always had, and a fifth worker is always there for other spaces and kinds.
  concurrency: 5,
  pollIntervalMs: 1_000,
  leaseSeconds: 120,
  retryBaseMs: 2_000,
  maxRetryDelayMs: 5 * 60_000,
}

/**
 * A run renews its jobs' leases this many times per lease, so that a long run (an ingest of
 * 16 memories through a slow provider) is not taken for a dead worker's and run again beside
 * itself. A run that outlasts MAX_RENEWED_RUN_MS is no longer renewed: if its handler hangs,
 * the jobs come back once their lease passes.
 */
const LEASE_RENEWALS_PER_LEASE = 3
const MAX_RENEWED_RUN_MS = 30 * 60_000
const FINISHED_JOB_RETENTION_SEC = 7 * 24 * 3600
const CLEANUP_INTERVAL_MS = 10 * 60_000
const RETRY_JITTER = 0.2
const MAX_ERROR_LENGTH = 2_000
/** Recording a job's outcome is retried this often, this far apart (about 10 s), before the lease is left to bring it back. */
const RECORD_ATTEMPTS = 20
const RECORD_RETRY_MS = 500
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** A gauge of job counts read from the queue table at each scrape, one series per label value. */
function jobCountGauge(
  registry: Registry,
  name: string,
  help: string,
  labelName: string,
  read: () => Promise<Array<{ label: string; count: number }>>,
): void {
  new Gauge({
    name,
    help,
    labelNames: [labelName],
    registers: [registry],
    collect: async function (this: Gauge) {
      this.reset()
      try {
        for (const row of await read()) this.set({ [labelName]: row.label }, row.count)
      } catch {
        // The database may be down; the scrape still succeeds without this gauge.
      }
    },
  })
}

type ClaimedJob = Omit<jobsSql.ClaimedJobRow, 'run'>

/** The claimed jobs as runs, in the order claimed. */
function groupByRun(claimed: jobsSql.ClaimedJobRow[]): ClaimedJob[][] {
  const runs = new Map<number, ClaimedJob[]>()
  for (const { run, ...job } of claimed) {
    const jobs = runs.get(run)
    if (jobs) jobs.push(job)
    else runs.set(run, [job])
  }
  return [...runs.values()]
}

const settle = (work: Promise<void>): Promise<PromiseSettledResult<void>> =>
  work.then(
    () => ({ status: 'fulfilled', value: undefined }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  )

/**
 * Runs durable jobs from the `jobs` table on the background pool. Several server
 * processes share one queue: claims use FOR UPDATE SKIP LOCKED, so each job runs
 * once; failures retry with exponential backoff until the kind's attempts run out,
 * then the job stays FAILED with its last error. Jobs survive restarts. Each worker takes
 * one run at a time: a job, or a batch of one kind when its handler takes batches.
 */
export class JobProcessor implements WorkIntake, JobQueue {
  readonly name = 'background jobs'
  readonly workerId = `${process.pid}-${crypto.randomBytes(3).toString('hex')}`
  readonly #handlers = new Map<string, JobHandler<never>>()
  readonly #active = new Set<Promise<void>>()
  /** Runs under way per lane of a kind, keyed by laneKey. */
  readonly #laneRuns = new Map<string, { kind: string; lane: string; runs: number }>()
  readonly #options: JobProcessorOptions
  #running = false
  #loop: Promise<void> | undefined
  /** Ends the loop's current sleep; set only while it sleeps. */
  #wake: (() => void) | undefined
  /** A wake that came while the loop was claiming: its next sleep ends at once, so no job waits a whole poll. */
  #wakePending = false
  #lastCleanup = 0
  readonly #jobsTotal: Counter<'kind' | 'outcome'>
  readonly #jobDuration: Histogram<'kind'>

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly registry: Registry,
    /** Intake follows the lifecycle: nothing is claimed while the database is unreachable. */
    readonly mayClaim: () => boolean,
    options: Partial<JobProcessorOptions> = {},
  ) {
    this.#options = { ...DEFAULT_JOB_OPTIONS, ...options }
    this.#jobsTotal = new Counter({
      name: 'memsvc_jobs_total',
      help: 'Background job attempts finished, by kind and outcome (succeeded, retried, failed).',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    })
    this.#jobDuration = new Histogram({
      name: 'memsvc_job_duration_seconds',
      help: 'Duration of background job attempts.',
      labelNames: ['kind'] as const,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    })
    jobCountGauge(registry, 'memsvc_jobs_queue_depth', 'Jobs in the shared queue, by status.', 'status', async () =>
      (await jobsSql.countJobsByStatus(sql)).map((row) => ({ label: row.status, count: row.count })),
    )
    jobCountGauge(
      registry,
      'memsvc_jobs_unfinished',
      'Jobs waiting to run or running, by kind (memory.ingest: the ingest backlog).',
      'kind',
      async () => (await jobsSql.countUnfinishedJobsByKind(sql)).map((row) => ({ label: row.kind, count: row.count })),
    )
  }

  register<Payload>(handler: JobHandler<Payload>): void {
    this.#handlers.set(handler.kind, handler as JobHandler<never>)
  }

  /** Stores a job (in the caller's transaction, if it passes one) and wakes this process's loop. */
  async enqueue(sql: Queryable, kind: string, payload: object, delayMs = 0): Promise<string> {
    const id = crypto.randomUUID()
    await jobsSql.insertJobs(sql, [
      { id, kind, payload, maxAttempts: this.#handlerOf(kind).maxAttempts, runAfter: new Date(Date.now() + delayMs) },
    ])
    this.#wakeFor(kind, [payload])
    return id
  }

  async enqueueMany(sql: Queryable, kind: string, payloads: object[]): Promise<void> {
    const maxAttempts = this.#handlerOf(kind).maxAttempts
    const runAfter = new Date()
    await jobsSql.insertJobs(
      sql,
      payloads.map((payload) => ({ id: crypto.randomUUID(), kind, payload, maxAttempts, runAfter })),
    )
    this.#wakeFor(kind, payloads)
  }

  /**
   * Wakes the loop for new jobs, unless each is in a lane that cannot be given a run now: a
   * claim would only step over that lane's backlog (a bulk import into a space whose share of
   * the workers is busy). The lane's next run is claimed when one of its runs ends.
   */
  #wakeFor(kind: string, payloads: object[]): void {
    const lanes = this.#handlers.get(kind)?.lanes
    if (lanes) {
      const maxRuns = maxRunsPerLane(this.#options.concurrency)
      const held = new Set(lanes.held?.(maxRuns) ?? [])
      const closed = (payload: object) => {
        const lane = (payload as Record<string, unknown>)[lanes.payloadKey]
        if (typeof lane !== 'string') return false
        return held.has(lane) || (this.#laneRuns.get(laneKey(kind, lane))?.runs ?? 0) >= maxRuns
      }
      if (payloads.every(closed)) return
    }
    this.wake()
  }

  #handlerOf(kind: string): JobHandler<never> {
    const handler = this.#handlers.get(kind)
    if (!handler) throw new Error(`no handler for job kind ${kind}`)
    return handler
  }

  wake(): void {
    if (this.#wake) this.#wake()
    else this.#wakePending = true
  }

  /**
   * At start on a queue no other process can be using (the embedded engine: its data
   * directory is locked to one process), a RUNNING job was cut off by the end of an
   * earlier process (kill -9, power loss). It runs again now rather than after its lease.
   */
  async releaseClaimsOfEarlierProcess(): Promise<void> {
    try {
      const released = await jobsSql.releaseAllClaims(this.sql)
      if (released > 0) this.log.info('jobs that an earlier process left running will run again', { jobs: released })
    } catch (error) {
      this.log.warn('could not release jobs an earlier process left running; they run again when their lease expires', {
        error: error as Error,
      })
    }
  }

  start(): void {
    if (this.#running) return
    this.#running = true
    this.#loop = this.#run()
  }

  /** Drain: claims nothing more, and resolves when the jobs already claimed are done. */
  async stopAndFinish(): Promise<void> {
    this.#running = false
    this.wake()
    await this.#loop
    await Promise.allSettled([...this.#active])
  }

  get activeJobs(): number {
    return this.#active.size
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const free = this.#options.concurrency - this.#active.size
      let runs: ClaimedJob[][] = []
      if (free > 0 && this.mayClaim()) {
        try {
          runs = groupByRun(
            await jobsSql.claimJobs(
              this.sql,
              this.workerId,
              free,
              this.#options.leaseSeconds,
              this.#batchLimits(),
              this.#laneRules(),
            ),
          )
        } catch (error) {
          this.log.warn('could not claim jobs; will retry', { error: error as Error })
        }
      }
      for (const jobs of runs) {
        const lane = this.#laneStarted(jobs[0]!)
        const running = this.#execute(jobs).finally(() => {
          this.#active.delete(running)
          this.#laneEnded(lane)
          this.wake()
        })
        this.#active.add(running)
      }
      await this.#cleanupNowAndThen()
      // Every free worker given a run suggests more is waiting: look again at once. Not when
      // a lane reached its share with workers left: the next claim would step over that
      // lane's whole backlog; other lanes' jobs hidden behind it wait for the next wake or poll.
      if (runs.length === 0 || runs.length < free) await this.#sleep(this.#options.pollIntervalMs)
    }
  }

  #laneRules(): jobsSql.LaneRules {
    const maxRuns = maxRunsPerLane(this.#options.concurrency)
    const keys: jobsSql.LaneRules['keys'] = []
    const held: jobsSql.LaneRules['held'] = []
    for (const handler of this.#handlers.values()) {
      if (!handler.lanes) continue
      keys.push({ kind: handler.kind, payloadKey: handler.lanes.payloadKey })
      for (const lane of handler.lanes.held?.(maxRuns) ?? []) held.push({ kind: handler.kind, lane })
    }
    return { keys, running: [...this.#laneRuns.values()], held, maxRunsPerLane: maxRuns }
  }

  /** Counts a run in its lane (if its kind has lanes); returns the key to end it with. */
  #laneStarted(job: ClaimedJob): string | undefined {
    if (job.lane === null) return undefined
    const id = laneKey(job.kind, job.lane)
    const entry = this.#laneRuns.get(id)
    if (entry) entry.runs++
    else this.#laneRuns.set(id, { kind: job.kind, lane: job.lane, runs: 1 })
    return id
  }

  #laneEnded(id: string | undefined): void {
    if (id === undefined) return
    const entry = this.#laneRuns.get(id)!
    if (--entry.runs === 0) this.#laneRuns.delete(id)
  }

  /**
   * Records a run's outcomes, again and again through a short database outage: a finished job
   * whose outcome is lost waits out its whole lease before it runs again.
   */
  async #record(write: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await write()
        return
      } catch (error) {
        if (!this.#running || attempt >= RECORD_ATTEMPTS) throw error
        await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_MS).unref())
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#wakePending) {
      this.#wakePending = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.#wake = undefined
        resolve()
      }
      const timer = setTimeout(done, ms)
      timer.unref()
      this.#wake = done
    })
  }

  #batchLimits(): jobsSql.BatchLimit[] {
    return [...this.#handlers.values()].flatMap((handler) =>
      handler.batch ? [{ kind: handler.kind, limit: handler.batch.limit }] : [],
    )
  }

  /** Renews the run's leases until the returned function is called (see LEASE_RENEWALS_PER_LEASE). */
  #renewLeases(jobs: jobsSql.JobRow[]): () => void {
    const leaseSeconds = this.#options.leaseSeconds
    const ids = jobs.map((job) => job.id)
    const startedAt = Date.now()
    let renewing = false
    const timer = setInterval(
      () => {
        if (renewing) return
        if (Date.now() - startedAt > MAX_RENEWED_RUN_MS) {
          clearInterval(timer)
          this.log.warn('a job run has gone on too long; its lease is no longer renewed', {
            jobIds: ids.join(','),
            kind: jobs[0]!.kind,
            minutes: MAX_RENEWED_RUN_MS / 60_000,
          })
          return
        }
        renewing = true
        jobsSql
          .extendLeases(this.sql, this.workerId, ids, leaseSeconds)
          .catch((error: unknown) =>
            this.log.warn('could not renew the lease of running jobs; will try again', {
              jobIds: ids.join(','),
              error: error as Error,
            }),
          )
          .finally(() => (renewing = false))
      },
      (leaseSeconds * 1000) / LEASE_RENEWALS_PER_LEASE,
    )
    timer.unref()
    return () => clearInterval(timer)
  }

  /** One run: a job, or several of one kind for a handler that takes them together. */
  async #execute(jobs: jobsSql.JobRow[]): Promise<void> {
    const kind = jobs[0]!.kind
    const handler = this.#handlers.get(kind)
    const started = process.hrtime.bigint()
    const stopRenewing = this.#renewLeases(jobs)
    let results: Array<PromiseSettledResult<void>>
    try {
      if (!handler) throw new PermanentJobError(`no handler for job kind ${kind} in this server version`)
      results = handler.batch
        ? await handler.batch.runMany(jobs.map((job) => ({ payload: job.payload as never, attempt: job.attempts })))
        : [await settle(handler.run(jobs[0]!.payload as never, jobs[0]!.attempts))]
    } catch (error) {
      results = jobs.map(() => ({ status: 'rejected', reason: error }))
    } finally {
      stopRenewing()
    }
    const outcomes = jobs.map((job, index) => this.#outcome(job, results[index]))
    try {
      await this.#record(() => jobsSql.recordJobOutcomes(this.sql, this.workerId, outcomes))
    } catch (recordError) {
      this.log.warn('could not record the outcome of jobs; their lease will expire and they will run again', {
        jobIds: jobs.map((job) => job.id),
        error: recordError as Error,
      })
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    for (const [index, job] of jobs.entries()) {
      const outcome = outcomes[index]!
      this.#jobDuration.observe({ kind }, seconds)
      if (outcome.status === 'SUCCEEDED') {
        this.#jobsTotal.inc({ kind, outcome: 'succeeded' })
        continue
      }
      const fields = { jobId: job.id, kind, attempt: job.attempts, error: outcome.error }
      if (outcome.status === 'FAILED') {
        this.#jobsTotal.inc({ kind, outcome: 'failed' })
        this.log.warn('job failed for good', fields)
      } else {
        this.#jobsTotal.inc({ kind, outcome: 'retried' })
        this.log.info('job failed; will retry', { ...fields, retryInMs: outcome.retryInMs })
      }
    }
  }

  #outcome(job: jobsSql.JobRow, result: PromiseSettledResult<void> | undefined): jobsSql.JobOutcome {
    if (result?.status === 'fulfilled') return { id: job.id, status: 'SUCCEEDED' }
    const error = result ? result.reason : new Error(`the ${job.kind} handler settled no outcome for this job`)
    const message = ((error as Error)?.message ?? String(error)).slice(0, MAX_ERROR_LENGTH)
    if (error instanceof PermanentJobError || job.attempts >= job.max_attempts)
      return { id: job.id, status: 'FAILED', error: message }
    const retryInMs = Math.max(this.#retryDelay(job.attempts), requestedRetryDelay(error))
    return { id: job.id, status: 'PENDING', error: message, retryInMs }
  }

  #retryDelay(attempt: number): number {
    const exponential = Math.min(this.#options.retryBaseMs * 2 ** (attempt - 1), this.#options.maxRetryDelayMs)
    return Math.round(exponential * (1 - RETRY_JITTER + Math.random() * 2 * RETRY_JITTER))
  }

  async #cleanupNowAndThen(): Promise<void> {
    const now = Date.now()
    if (now - this.#lastCleanup < CLEANUP_INTERVAL_MS) return
    this.#lastCleanup = now
    try {
      const removed = await jobsSql.deleteFinishedJobs(this.sql, FINISHED_JOB_RETENTION_SEC)
      if (removed > 0) this.log.debug('removed old finished jobs', { removed })
    } catch (error) {
      this.log.warn('could not remove old finished jobs', { error: error as Error })
    }
  }
}
