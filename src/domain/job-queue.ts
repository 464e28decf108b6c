import type { Queryable } from '../db/database.js'
import type { JobKind, JobPayloads } from './job-kinds.js'

/**
 * How the domain hands work to the background: a job stored in the caller's transaction
 * (or on its own), run later by src/jobs. The server's JobProcessor is the one queue.
 */
export interface JobQueue {
  /** Resolves to the job's id. */
  enqueue<Kind extends JobKind>(sql: Queryable, kind: Kind, payload: JobPayloads[Kind]): Promise<string>
}
