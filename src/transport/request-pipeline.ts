import { requestIdFrom } from '../domain/call-context.js'
import { AppError, toAppError } from '../errors/app-error.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { Logger } from '../observability/logger.js'
import type { HistogramSeries } from '../observability/series-histogram.js'

/**
 * Why a call is answered through a drain and not waited for by it. Every call without one is
 * work: refused once draining starts, and counted until it is answered.
 * - `probe`: /livez, /readyz, /startupz must report the drain itself.
 * - `metrics`: scrapes keep working, so the drain can be watched.
 * - `console-file`: the console's static files, so the console stays usable to watch the drain.
 * - `drain-control`: the drain call answers while draining and must not wait for itself.
 * - `api-document`: GET /v1/openapi.json is text fixed at startup (no use case, no database), like
 *   the console's files; a client or the console describing the API keeps working through a drain.
 * - `no-route`: a 404 or 405 that reaches no use case.
 */
export type DrainExemption = 'probe' | 'metrics' | 'console-file' | 'drain-control' | 'api-document' | 'no-route'

/** What the pipeline knows about the route or method a call came in on. */
export interface CallRoute {
  transport: 'rest' | 'grpc' | 'mcp'
  /** The route pattern or the RPC path, as logs name it. */
  name: string
  drainExempt?: DrainExemption
}

const NANOSECONDS_PER_SECOND = 1e9

/** The steps every call takes on either transport; each wrapper adds only its wire's rules. */
export class RequestPipeline {
  constructor(
    readonly lifecycle: Lifecycle,
    readonly log: Logger,
  ) {}

  /** Starts timing a call; `identify` and `admit` follow once the transport has read the request. */
  begin(route: CallRoute): Call {
    return new Call(this, route)
  }
}

/** One call, from its arrival to its answer. */
export class Call {
  readonly #pipeline: RequestPipeline
  readonly #route: CallRoute
  readonly #started = process.hrtime.bigint()
  #requestId: string | undefined
  #endWork: (() => void) | undefined

  constructor(pipeline: RequestPipeline, route: CallRoute) {
    this.#pipeline = pipeline
    this.#route = route
  }

  /** The caller's request id once `identify` has seen it; a fresh one if the call failed before that. */
  get requestId(): string {
    this.#requestId ??= requestIdFrom(undefined)
    return this.#requestId
  }

  /** Keeps the caller's X-Request-Id when it is a plain token, otherwise makes one. */
  identify(incoming: unknown): string {
    this.#requestId = requestIdFrom(incoming)
    return this.#requestId
  }

  /** Refuses work once draining has started, and counts it in flight until `endWork` or `finish`. */
  admit(): void {
    if (this.#route.drainExempt !== undefined) return
    const { lifecycle } = this.#pipeline
    if (!lifecycle.acceptingWork)
      throw new AppError('UNAVAILABLE', `server is ${lifecycle.state.toLowerCase()} and accepts no new requests`)
    this.#endWork = lifecycle.beginRequest()
  }

  /** The error to answer with. One that is not the caller's or the database's doing becomes INTERNAL, logged here once. */
  failure(error: unknown): AppError {
    let appError: AppError
    try {
      appError = toAppError(error)
    } catch (conversionError) {
      // A thrown object whose properties throw when read.
      return this.internal(conversionError)
    }
    return appError.code === 'INTERNAL' ? this.internal(error) : appError
  }

  /** Logs a failure of the server's own (a bug, an answer that cannot be written) and gives the INTERNAL to answer with. */
  internal(error: unknown): AppError {
    this.#pipeline.log.error('request failed', {
      requestId: this.requestId,
      transport: this.#route.transport,
      route: this.#route.name,
      error: describeError(error),
      stack: (error as Error | undefined)?.stack,
    })
    return new AppError('INTERNAL', 'internal error')
  }

  /** Stops counting the call as work; a second call does nothing (an aborted REST request ends it early). */
  endWork(): void {
    this.#endWork?.()
    this.#endWork = undefined
  }

  /** The call has been answered: it stops being work and its duration goes to `duration`. */
  finish(duration: HistogramSeries): void {
    this.endWork()
    duration.observe(Number(process.hrtime.bigint() - this.#started) / NANOSECONDS_PER_SECOND)
  }
}

/** The error's kind and message only: a log line must not carry whatever object was thrown. */
function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return `non-error value of type ${typeof error} thrown`
}
