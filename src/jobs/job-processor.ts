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
}

/** Thrown by a handler when trying again cannot help (the resource is gone, the input is wrong). */
export class PermanentJobError extends Error {}

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
  concurrency: 4,
  pollIntervalMs: 1_000,
  leaseSeconds: 120,
  retryBaseMs: 2_000,
  maxRetryDelayMs: 5 * 60_000,
}

const FINISHED_JOB_RETENTION_SEC = 7 * 24 * 3600
const CLEANUP_INTERVAL_MS = 10 * 60_000
const RETRY_JITTER = 0.2
const MAX_ERROR_LENGTH = 2_000
/** Recording a job's outcome is retried this often, this far apart (about 10 s), before the lease is left to bring it back. */
const RECORD_ATTEMPTS = 20
const RECORD_RETRY_MS = 500
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/**
 * Runs durable jobs from the `jobs` table on the background pool. Several server
 * processes share one queue: claims use FOR UPDATE SKIP LOCKED, so each job runs
 * once; failures retry with exponential backoff until the kind's attempts run out,
 * then the job stays FAILED with its last error. Jobs survive restarts.
 */
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

export class JobProcessor implements WorkIntake, JobQueue {
  readonly name = 'background jobs'
  readonly workerId = `${process.pid}-${crypto.randomBytes(3).toString('hex')}`
  readonly #handlers = new Map<string, JobHandler<never>>()
  readonly #active = new Set<Promise<void>>()
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
    this.wake()
    return id
  }

  async enqueueMany(sql: Queryable, kind: string, payloads: object[]): Promise<void> {
    const maxAttempts = this.#handlerOf(kind).maxAttempts
    const runAfter = new Date()
    await jobsSql.insertJobs(
      sql,
      payloads.map((payload) => ({ id: crypto.randomUUID(), kind, payload, maxAttempts, runAfter })),
    )
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
      let claimed: jobsSql.JobRow[] = []
      if (free > 0 && this.mayClaim()) {
        try {
          claimed = await jobsSql.claimJobs(this.sql, this.workerId, free, this.#options.leaseSeconds)
        } catch (error) {
          this.log.warn('could not claim jobs; will retry', { error: error as Error })
        }
      }
      for (const job of claimed) {
        const running = this.#execute(job).finally(() => {
          this.#active.delete(running)
          this.wake()
        })
        this.#active.add(running)
      }
      await this.#cleanupNowAndThen()
      // A full batch suggests more is waiting: look again at once.
      if (claimed.length === 0 || claimed.length < free) await this.#sleep(this.#options.pollIntervalMs)
    }
  }

  /**
   * Records a job's outcome, again and again through a short database outage: a finished job
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

  async #execute(job: jobsSql.JobRow): Promise<void> {
    const handler = this.#handlers.get(job.kind)
    const started = process.hrtime.bigint()
    try {
      if (!handler) throw new PermanentJobError(`no handler for job kind ${job.kind} in this server version`)
      await handler.run(job.payload as never, job.attempts)
      await this.#record(() => jobsSql.completeJob(this.sql, job.id, this.workerId))
      this.#jobsTotal.inc({ kind: job.kind, outcome: 'succeeded' })
    } catch (error) {
      const message = ((error as Error)?.message ?? String(error)).slice(0, MAX_ERROR_LENGTH)
      const finalAttempt = error instanceof PermanentJobError || job.attempts >= job.max_attempts
      const retryInMs = finalAttempt ? undefined : this.#retryDelay(job.attempts)
      try {
        await this.#record(() => jobsSql.failJob(this.sql, job.id, this.workerId, message, retryInMs))
      } catch (recordError) {
        this.log.warn('could not record a job failure; its lease will expire and it will run again', {
          jobId: job.id,
          error: recordError as Error,
        })
      }
      this.#jobsTotal.inc({ kind: job.kind, outcome: finalAttempt ? 'failed' : 'retried' })
      const fields = { jobId: job.id, kind: job.kind, attempt: job.attempts, error: message }
      if (finalAttempt) this.log.warn('job failed for good', fields)
      else this.log.info('job failed; will retry', { ...fields, retryInMs })
    } finally {
      this.#jobDuration.observe({ kind: job.kind }, Number(process.hrtime.bigint() - started) / 1e9)
    }
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
