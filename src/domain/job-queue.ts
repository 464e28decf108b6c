import type { Queryable } from '../db/database.js'
import type { JobKind, JobPayloads } from './job-kinds.js'

/**
 * How the domain hands work to the background: a job stored in the caller's transaction
 * (or on its own), run later by src/jobs. The server's JobProcessor is the one queue.
 */
export interface JobQueue {
  /** Resolves to the job's id. Stored in a transaction, the job runs once that commits and `wake` is called. */
  enqueue<Kind extends JobKind>(sql: Queryable, kind: Kind, payload: JobPayloads[Kind]): Promise<string>
  /** One job per payload, stored in one statement. */
  enqueueMany<Kind extends JobKind>(sql: Queryable, kind: Kind, payloads: Array<JobPayloads[Kind]>): Promise<void>
  /**
   * Look for runnable jobs now: call after committing a transaction that enqueued some.
   * (A wake from inside the transaction finds nothing yet, and the job waits for the next poll.)
   */
  wake(): void
}
