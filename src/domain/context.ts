import type { Database, Sql } from '../db/database.js'
import { AppError } from '../errors/app-error.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { Logger } from '../observability/logger.js'
import type { SecretBox } from '../secrets/secret-box.js'
import type { DrainController } from '../lifecycle/drain.js'
import { Authenticator } from './auth.js'
import type { CallContext } from './call-context.js'
import { API_KEY_USAGE_JOB } from './job-kinds.js'
import type { JobQueue } from './job-queue.js'
import type { LicenseSummary } from './licenses.js'
import type { Principal } from './permissions.js'

/** What the use cases need from the running server. One per server instance. */
export class DomainContext {
  #database: Database | undefined
  /** Set by the server; absent in contexts that cannot drain. */
  drainController: DrainController | undefined
  #authenticator: Authenticator | undefined
  #secrets: SecretBox | undefined
  #jobs: JobQueue | undefined

  constructor(
    readonly lifecycle: Lifecycle,
    readonly log: Logger,
    readonly version: string,
    readonly licenses: LicenseSummary,
    readonly tlsEnabled: boolean,
  ) {}

  attachDatabase(database: Database): void {
    this.#database = database
    this.#authenticator = new Authenticator(database, this.log)
    this.#authenticator.start()
  }

  /** The job queue; from here on, authentication's usage stamps are written by jobs. */
  attachJobs(jobs: JobQueue): void {
    this.#jobs = jobs
    const background = this.#database!.background
    this.authenticator.setUsageSink(async (usage) => {
      await jobs.enqueue(background, API_KEY_USAGE_JOB, { usage })
    })
  }

  get jobs(): JobQueue {
    if (!this.#jobs) throw new AppError('UNAVAILABLE', 'the server is starting and has not started its job processor yet')
    return this.#jobs
  }

  /** The server key's operations (seal, fingerprint), once the key has been checked against the database. */
  attachSecrets(secrets: SecretBox): void {
    this.#secrets = secrets
  }

  get secrets(): SecretBox {
    if (!this.#secrets) throw new AppError('UNAVAILABLE', 'the server is starting and has not checked its encryption key yet')
    return this.#secrets
  }

  async detachDatabase(): Promise<void> {
    await this.#authenticator?.stop()
  }

  get authenticator(): Authenticator {
    if (!this.#authenticator) throw new AppError('UNAVAILABLE', 'the server is starting and has not reached its database yet')
    return this.#authenticator
  }

  /** Every protected use case starts here. */
  /**
   * Not async itself: hands back the authenticator's own promise, since an async wrapper
   * returning a promise costs an extra promise and three microtask turns on every request.
   */
  authenticate(call: CallContext): Promise<Principal> {
    try {
      this.#requireMigratedDatabase()
    } catch (error) {
      return Promise.reject(error)
    }
    return this.authenticator.authenticate(call.authorization)
  }

  get database(): Database | undefined {
    return this.#database
  }

  /** The primary pool; until the database is connected, calls fail as UNAVAILABLE rather than hang. */
  get sql(): Sql {
    return this.#requireMigratedDatabase().primary
  }

  /** Until migrations have run the tables may not exist: a clear 503, not an INTERNAL "relation does not exist". */
  #requireMigratedDatabase(): Database {
    if (!this.#database || this.lifecycle.state === 'STARTING') {
      throw new AppError('UNAVAILABLE', 'the server is starting and its database is not ready yet; try again shortly')
    }
    return this.#database
  }

  get storage(): string {
    return this.#database?.engine ?? 'unknown'
  }
}
