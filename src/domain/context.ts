import type { Database, Sql } from '../db/database.js'
import type { VectorSupport } from '../db/vector-storage.js'
import { AppError, databaseUnreachable } from '../errors/app-error.js'
import type { DrainController } from '../lifecycle/drain.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { Logger } from '../observability/logger.js'
import type { LocalModels } from '../providers/local/local-models.js'
import type { QueryEmbeddingCache } from '../providers/query-embedding-cache.js'
import type { SecretBox } from '../secrets/secret-box.js'
import { Authenticator } from './auth.js'
import type { CallContext } from './call-context.js'
import { API_KEY_USAGE_JOB } from './job-kinds.js'
import type { JobQueue } from './job-queue.js'
import type { LicenseSummary } from './licenses.js'
import type { Principal } from './permissions.js'
import type { ReadConnection, ReadRouting } from './read-routing.js'
import { ResponseBudget } from './response-budget.js'
import type { SpaceRowsCache } from './space-rows-cache.js'

/** What a document upload may be (src/domain/documents.ts). */
export interface DocumentLimits {
  maxUploadBytes: number
  /** An image's pixels, checked from its header before its bytes are stored. */
  maxImagePixels: number
  /** The OCR languages this server reads now (bundled English and <data-dir>/ocr-languages). */
  ocrLanguages(): string[]
}

/** What a server knows from its first moment, before any database: enough for probes, system info and drain. */
export interface ServerFacts {
  readonly lifecycle: Lifecycle
  readonly log: Logger
  readonly version: string
  readonly licenses: LicenseSummary
  readonly tlsEnabled: boolean
  readonly drainController: DrainController
}

/** What the use cases need besides the facts; each exists once the database is migrated and the encryption key checked. */
export interface DomainParts {
  readonly database: Database
  /** The server key's operations (seal, open, fingerprint). */
  readonly secrets: SecretBox
  readonly jobs: JobQueue
  /** Whether memories can be stored here (pgvector), as found when the database was prepared. */
  readonly vectorSupport: VectorSupport
  /** Retrieval's query vectors, kept so that a repeated message costs no provider call. */
  readonly queryEmbeddings: QueryEmbeddingCache
  /** The rows retrieval plans from, kept per space and evicted on change; already started. */
  readonly spaceRows: SpaceRowsCache
  /** The local embedding models this server runs (LOCAL embedders) and their inference threads. */
  readonly localModels: LocalModels
  /** What an upload may be: its size, and an image's pixels (checked from its header before it is stored). */
  readonly documentLimits: DocumentLimits
  /** Where reads go: the read replicas (--db-read-url), or the primary. */
  readonly readRouting: ReadRouting
}

/** The facts and the parts, as members of the context (declaration merging with the class below). */
export interface DomainContext extends ServerFacts, DomainParts {}

/**
 * What the use cases need from a running server, complete from the moment it exists: the
 * server builds it once, when it becomes READY (see ServerContext for the time before).
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every fact and part (Object.assign)
export class DomainContext {
  readonly authenticator: Authenticator
  /** The memory streamed answers may hold at once, shared by every retrieval of this server. */
  readonly responseBudget = new ResponseBudget()

  /** Starts authentication, whose usage stamps are written by jobs on the background pool. */
  constructor(facts: ServerFacts, parts: DomainParts) {
    Object.assign(this, facts, parts)
    this.authenticator = new Authenticator(parts.database, facts.log)
    this.authenticator.start()
    this.authenticator.setUsageSink(async (usage) => {
      await parts.jobs.enqueue(parts.database.background, API_KEY_USAGE_JOB, { usage })
    })
  }

  /**
   * Every protected use case that may write starts here; one that only reads starts at
   * `authenticateRead`. The caller is remembered as a writer, so its next reads wait for
   * a replica to have its writes (ReadRouting).
   */
  async authenticate(call: CallContext): Promise<Principal> {
    const principal = await this.identify(call)
    await this.readRouting.noteWrite(principal)
    return principal
  }

  /** A use case that only reads: the caller, and where its statements go (a replica or the primary). */
  async authenticateRead(call: CallContext): Promise<{ principal: Principal; reads: ReadConnection }> {
    const principal = await this.identify(call)
    return { principal, reads: await this.readRouting.connection(principal, call.signal) }
  }

  /** Who is calling, without starting a use case: the transports ask before they read a body. */
  identify(call: CallContext): Promise<Principal> {
    if (call.principal) return Promise.resolve(call.principal)
    // While the health check finds the database unreachable, 503 at once: a request sent to
    // the pool then would only wait for a connection that cannot be made.
    if (!this.lifecycle.databaseReachable) return Promise.reject(databaseUnreachable())
    return this.authenticator.authenticate(call.authorization)
  }

  /** The primary pool, for requests. */
  get sql(): Sql {
    if (!this.lifecycle.databaseReachable) throw databaseUnreachable()
    return this.database.primary
  }

  get storage(): string {
    return this.database.engine
  }

  /** Writes the usage stamps still in memory and stops listening for key and space changes. */
  async close(): Promise<void> {
    await this.authenticator.stop()
    await this.spaceRows.stop()
    await this.readRouting.close()
  }
}

/**
 * What the transports hold from the start. While the server is STARTING only the facts
 * exist (probes, system info); a use case that needs the database answers UNAVAILABLE
 * (HTTP 503) until the server has built its DomainContext and become READY.
 */
export class ServerContext {
  #domain: DomainContext | undefined

  constructor(readonly facts: ServerFacts) {}

  /** Called once by the server, just before it becomes READY. */
  open(domain: DomainContext): void {
    this.#domain = domain
  }

  /** The use cases' context; UNAVAILABLE while the server is starting. */
  get domain(): DomainContext {
    if (!this.#domain)
      throw new AppError('UNAVAILABLE', 'the server is starting and its database is not ready yet; try again shortly')
    return this.#domain
  }

  /** The context if the server has become READY, without failing when it has not. */
  get domainIfOpen(): DomainContext | undefined {
    return this.#domain
  }
}
