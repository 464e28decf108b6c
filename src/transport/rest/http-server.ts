import { STATUS_CODES } from 'node:http'
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import { requestIdFrom } from '../../domain/call-context.js'
import type { Principal } from '../../domain/permissions.js'
import { AppError, invalidArgument, toAppError } from '../../errors/app-error.js'
import type { Lifecycle } from '../../lifecycle/lifecycle.js'
import type { Logger } from '../../observability/logger.js'
import type { ServerMetrics } from '../../observability/metrics.js'
import type { HistogramSeries } from '../../observability/series-histogram.js'
import type { Uws } from '../../runtime/uws.js'
import { TLS12_CIPHERS } from '../../tls/cipher-policy.js'

/** What a handler sees: plain data, copied out of uWS before anything awaits. */
export interface RestRequest {
  method: string
  path: string
  params: Record<string, string>
  /** Read-only: requests without a query string share one empty instance. */
  query: URLSearchParams
  /** Only the headers in READ_HEADERS, by their lower-case names; absent ones are missing. */
  headers: Record<string, string>
  body: Buffer
  requestId: string
  /** Set on routes that need an API key and read a body: the key was checked from the headers before the body was read. */
  principal?: Principal
}

export interface RestResponse {
  status: number
  headers?: Record<string, string>
  /** Serialised as JSON unless `text` is given. */
  json?: unknown
  /** Sent as it is; JSON unless `contentType` says otherwise. */
  text?: string
  contentType?: string
}

export type RestHandler = (request: RestRequest) => Promise<RestResponse> | RestResponse

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

export interface RouteOptions {
  /**
   * Counted as in-flight work and refused once draining starts. Probes and metrics
   * are not: they must keep answering through a drain.
   */
  isWork?: boolean
  /**
   * The route refuses callers without a valid API key. A body is then read only after the key
   * has been checked, and may be as large as the body limit; without this a body may be at most
   * UNAUTHENTICATED_BODY_LIMIT_BYTES.
   */
  needsApiKey?: boolean
}

const UWS_REGISTER: Record<HttpMethod, 'get' | 'post' | 'put' | 'del'> = { GET: 'get', POST: 'post', PUT: 'put', DELETE: 'del' }

/**
 * The request headers any handler reads: only these are copied out of uWS. Copying every
 * header with req.forEach was the largest single cost of the request wrapper (bench
 * profile of GET /v1/users/me). A handler that needs another header adds it here.
 */
const READ_HEADERS = ['authorization', 'x-request-id', 'content-length', 'content-type', 'x-service-metrics-key'] as const
/**
 * The most a request may send before an API key has been verified (on routes without one, such as
 * POST /v1/system/init, and on unknown routes): nothing such a request does needs more, and it keeps
 * what an anonymous client can make the server hold small.
 */
export const UNAUTHENTICATED_BODY_LIMIT_BYTES = 16 * 1024
const EMPTY_QUERY = new URLSearchParams()
const METRIC_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
const EMPTY_BODY = Buffer.alloc(0)
const NANOSECONDS_PER_SECOND = 1e9

function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
}

export function errorBody(error: AppError, requestId: string): unknown {
  return {
    error: {
      code: error.httpStatus,
      status: error.code,
      message: error.message,
      details: error.details,
      requestId,
    },
  }
}

/** A list body whose items arrive as JSON texts: joined as they are, never parsed again. */
export function listBody(field: string, itemsJson: string[], nextToken?: string): string {
  const next = nextToken === undefined ? '' : `,"nextToken":${JSON.stringify(nextToken)}`
  return `{"${field}":[${itemsJson.join(',')}]${next}}`
}

export interface HttpServerOptions {
  uws: Uws
  tls?: { certFile: string; keyFile: string }
  maxBodyBytes: number
  /** Checks an Authorization header value; rejects (401) when it is missing or invalid. */
  authenticate?: (authorization: string | undefined) => Promise<Principal>
  lifecycle: Lifecycle
  metrics: ServerMetrics
  log: Logger
}

/**
 * The one place that knows uWS's rules: onAborted is registered first, request data
 * is copied before any await, every write happens inside cork, and bodies are
 * assembled from onData chunks under a size cap. Nothing thrown on the request path
 * may leave a uWS callback (Node would end the process): it becomes a logged 500.
 */
export class HttpServer {
  readonly #app: TemplatedApp
  readonly #options: HttpServerOptions
  readonly #patterns = new Map<string, Set<HttpMethod>>()
  readonly #routes: Array<{ method: HttpMethod; pattern: string; options: RouteOptions }> = []
  /** Duration series by "method route status", resolved once each. */
  readonly #durations = new Map<string, HistogramSeries>()
  #listenSocket: us_listen_socket | undefined

  constructor(options: HttpServerOptions) {
    this.#options = options
    this.#app = options.tls
      ? options.uws.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile, ssl_ciphers: TLS12_CIPHERS })
      : options.uws.App()
  }

  route(method: HttpMethod, pattern: string, handler: RestHandler, options: RouteOptions = {}): void {
    const paramNames = pattern
      .split('/')
      .filter((segment) => segment.startsWith(':'))
      .map((segment) => segment.slice(1))
    const methods = this.#patterns.get(pattern) ?? new Set<HttpMethod>()
    methods.add(method)
    this.#patterns.set(pattern, methods)
    this.#routes.push({ method, pattern, options })
    this.#app[UWS_REGISTER[method]](pattern, (res, req) => this.#handle(res, req, method, pattern, paramNames, handler, options))
  }

  /** Every route registered, in order (tests walk them all). */
  get routes(): ReadonlyArray<{ method: HttpMethod; pattern: string; options: RouteOptions }> {
    return this.#routes
  }

  /** Registers 405 for known paths with other methods and a JSON 404 for everything else. Call after the routes. */
  finishRoutes(): void {
    for (const [pattern, methods] of this.#patterns) {
      const allow = [...methods].join(', ')
      this.#app.any(pattern, (res, req) =>
        this.#handle(res, req, req.getMethod().toUpperCase(), pattern, [], () => {
          throw new AppError('METHOD_NOT_ALLOWED', `method not allowed; use ${allow}`)
        }, {}, { allow }),
      )
    }
    this.#app.any('/*', (res, req) =>
      this.#handle(res, req, req.getMethod().toUpperCase(), 'unmatched', [], (request) => {
        throw new AppError('NOT_FOUND', `no route for ${request.method} ${request.path}`)
      }, {}),
    )
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${host}:${port} (address in use or not permitted)`))
          return
        }
        this.#listenSocket = socket
        resolve(this.#options.uws.us_socket_local_port(socket as never))
      })
    })
  }

  close(): void {
    if (this.#listenSocket) this.#options.uws.us_listen_socket_close(this.#listenSocket)
    this.#listenSocket = undefined
  }

  #durationSeries(requestMethod: string, route: string, status: number): HistogramSeries {
    // A client picks the method string: unknown ones share one label so they cannot grow the series without bound.
    const method = METRIC_METHODS.has(requestMethod) ? requestMethod : 'OTHER'
    const key = `${method} ${route} ${status}`
    let series = this.#durations.get(key)
    if (!series) {
      series = this.#options.metrics.httpDuration.series({ method, route, status_code: String(status) })
      this.#durations.set(key, series)
    }
    return series
  }

  #handle(
    res: HttpResponse,
    req: HttpRequest,
    method: string,
    routeName: string,
    paramNames: string[],
    handler: RestHandler,
    options: RouteOptions,
    extraHeaders: Record<string, string> = {},
  ): void {
    const { lifecycle, log, maxBodyBytes } = this.#options
    const started = process.hrtime.bigint()
    let aborted = false
    let responded = false
    /** Set while body bytes may still arrive: answering then closes the connection instead of reading on. */
    let bodyPending = false
    let requestId: string | undefined
    let endWork = () => {}
    res.onAborted(() => {
      aborted = true
      endWork()
    })

    /** The last resort: whatever escaped becomes one logged 500, never a thrown exception inside a uWS callback. */
    const internalFailure = (error: unknown): RestResponse => {
      const id = (requestId ??= requestIdFrom(undefined))
      log.error('request failed', { requestId: id, route: routeName, error: describeError(error), stack: (error as Error | undefined)?.stack })
      return { status: 500, json: errorBody(new AppError('INTERNAL', 'internal error'), id) }
    }

    const respond = (response: RestResponse) => {
      if (aborted || responded) return
      responded = true
      const id = (requestId ??= requestIdFrom(undefined))
      let prepared: PreparedResponse
      try {
        prepared = prepare(response, extraHeaders)
      } catch (error) {
        // A body that cannot be serialised (BigInt, a cycle, a throwing toJSON) or a bad header.
        prepared = prepare(internalFailure(error), extraHeaders)
      }
      // After a refused or unread body the rest of it may still be arriving: close instead of reading on.
      const closeConnection = prepared.status === 413 || bodyPending || !lifecycle.acceptingWork
      try {
        res.cork(() => {
          res.writeStatus(statusLine(prepared.status))
          res.writeHeader('x-request-id', id)
          res.writeHeader('x-content-type-options', 'nosniff')
          for (const [name, value] of prepared.headers) res.writeHeader(name, value)
          if (!lifecycle.acceptingWork && prepared.status !== 413) res.writeHeader('connection', 'close')
          res.end(prepared.body, closeConnection)
        })
      } catch (error) {
        // uWS refused a write half-way: the response cannot be trusted, so the connection goes.
        internalFailure(error)
        if (!aborted) res.close()
      }
      this.#durationSeries(method, routeName, prepared.status).observe(Number(process.hrtime.bigint() - started) / NANOSECONDS_PER_SECOND)
      endWork()
    }

    const fail = (error: unknown) => {
      let response: RestResponse
      try {
        const appError = toAppError(error)
        response = appError.code === 'INTERNAL' ? internalFailure(error) : { status: appError.httpStatus, json: errorBody(appError, requestId ??= requestIdFrom(undefined)) }
      } catch (conversionError) {
        response = internalFailure(conversionError)
      }
      respond(response)
    }

    /** Runs `step` so that nothing it throws can leave this uWS callback. */
    const guarded = (step: () => void) => {
      try {
        step()
      } catch (error) {
        fail(error)
      }
    }

    guarded(() => {
      // Everything from req must be copied now: it is invalid after this function returns.
      const headers: Record<string, string> = {}
      for (const name of READ_HEADERS) {
        const value = req.getHeader(name)
        if (value !== '') headers[name] = value
      }
      requestId = requestIdFrom(headers['x-request-id'])
      const params: Record<string, string> = {}
      let badParam: string | undefined
      paramNames.forEach((name, index) => {
        const value = decodePathSegment(req.getParameter(index) ?? '')
        if (value === undefined) badParam ??= name
        else params[name] = value
      })
      const path = req.getUrl()
      const rawQuery = req.getQuery()
      const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY
      if (badParam !== undefined) throw invalidArgument(badParam, 'is not a valid percent-encoded path segment')

      if (options.isWork) {
        if (!lifecycle.acceptingWork) throw new AppError('UNAVAILABLE', `server is ${lifecycle.state.toLowerCase()} and accepts no new requests`)
        endWork = lifecycle.beginRequest()
      }

      const run = (body: Buffer, principal: Principal | undefined) => {
        if (aborted || responded) return
        const result = handler({ method, path, params, query, headers, body, requestId: requestId!, principal })
        if (result instanceof Promise) result.then(respond, fail)
        else respond(result)
      }
      // A request with side effects starts only once uWS has parsed everything it read with it:
      // uWS closes the connection, this request's response unsent, when a request pipelined
      // behind it in the same read is malformed or more than it will hold (NOTES.md of
      // third_party/uWebSockets.js, change 6), and work begun would take effect with no one to
      // tell (a key created whose raw key is never delivered).
      const start = (body: Buffer, principal?: Principal) =>
        method === 'GET' || method === 'HEAD' ? run(body, principal) : afterParsing(() => guarded(() => run(body, principal)))

      if (method === 'GET' || method === 'DELETE' || method === 'HEAD') {
        start(EMPTY_BODY)
        return
      }
      this.#readBody(res, headers, options, {
        setPending: (pending) => (bodyPending = pending),
        isSettled: () => aborted || responded,
        guarded,
        fail,
        start,
      })
    })
  }

  /**
   * Reads a request body under its cap. On a route that needs an API key the key is checked
   * from the headers while at most UNAUTHENTICATED_BODY_LIMIT_BYTES of body are read: a larger
   * (or chunked) body waits with the socket paused, and a caller without a valid key is answered
   * 401 without it being read. A small body is read to its end first, so that the 401 leaves the
   * connection usable instead of resetting it under the client's feet.
   */
  #readBody(
    res: HttpResponse,
    headers: Record<string, string>,
    options: RouteOptions,
    exchange: {
      setPending(pending: boolean): void
      isSettled(): boolean
      guarded(step: () => void): void
      fail(error: unknown): void
      start(body: Buffer, principal?: Principal): void
    },
  ): void {
    const { authenticate, maxBodyBytes } = this.#options
    const needsKey = options.needsApiKey === true && authenticate !== undefined
    const anonymousLimit = Math.min(maxBodyBytes, UNAUTHENTICATED_BODY_LIMIT_BYTES)
    const limit = needsKey ? maxBodyBytes : anonymousLimit
    const declared = headers['content-length']
    exchange.setPending(true)
    if (declared !== undefined && Number(declared) > limit) {
      throw new AppError('PAYLOAD_TOO_LARGE', `request body of ${declared} bytes exceeds the limit of ${limit} bytes${needsKey ? '' : ' for requests without an API key'}`)
    }
    const smallBody = declared !== undefined && Number(declared) <= anonymousLimit
    const chunks: Buffer[] = []
    let received = 0
    let body: Buffer | undefined
    let principal: Principal | undefined
    let authenticated = !needsKey
    /** The authentication failure, held until a small body has been read to its end. */
    let refusal: { error: unknown } | undefined
    let paused = false
    // Paused, uWS reads nothing more from the socket: what it already read (one receive buffer at most) is all that is held.
    const pause = () => {
      if (paused) return
      paused = true
      res.pause()
    }
    const proceed = () => {
      if (exchange.isSettled()) return
      if (refusal && body !== undefined) exchange.fail(refusal.error)
      else if (body !== undefined && authenticated) exchange.start(body, principal)
    }
    res.onData((chunk, isLast) =>
      exchange.guarded(() => {
        if (exchange.isSettled()) return
        received += chunk.byteLength
        if (received > limit) throw new AppError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`)
        if (!authenticated && received > anonymousLimit) pause()
        // uWS reuses the chunk's memory after this callback returns: copy it.
        chunks.push(Buffer.from(new Uint8Array(chunk)))
        if (!isLast) return
        exchange.setPending(false)
        body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
        proceed()
      }),
    )
    if (!needsKey) return
    if (!smallBody) pause()
    authenticate!(headers.authorization).then(
      (who) =>
        exchange.guarded(() => {
          principal = who
          authenticated = true
          // uWS 20.30 resets the connection when a socket that is not paused is resumed.
          if (paused && !exchange.isSettled()) res.resume()
          proceed()
        }),
      (error: unknown) => {
        if (body === undefined && smallBody) refusal = { error }
        else exchange.fail(error)
      },
    )
  }
}

/** What respond() writes, computed before the first byte so that a failure can still become a clean 500. */
interface PreparedResponse {
  status: number
  headers: Array<[string, string]>
  body: string
}

function prepare(response: RestResponse, extraHeaders: Record<string, string>): PreparedResponse {
  const body = response.text ?? (response.json === undefined ? '' : JSON.stringify(response.json))
  if (typeof body !== 'string') throw new TypeError(`response body of type ${typeof body} cannot be sent`)
  const headers: Array<[string, string]> = []
  if (body.length > 0 || response.contentType) headers.push(['content-type', response.contentType ?? 'application/json; charset=utf-8'])
  for (const source of [extraHeaders, response.headers ?? {}]) {
    for (const name in source) {
      const value = source[name]
      if (typeof value !== 'string' || /[\r\n]/.test(value)) throw new TypeError(`response header ${name} has a value that cannot be sent`)
      headers.push([name, value])
    }
  }
  return { status: response.status, headers, body }
}

/** The error's kind and message only: a log line must not carry whatever object was thrown. */
function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return `non-error value of type ${typeof error} thrown`
}

/** A decoded path segment, or undefined when its percent-encoding is malformed (decodeURIComponent throws URIError). */
function decodePathSegment(raw: string): string | undefined {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

let parsingQueue: Array<() => void> | undefined

/**
 * Runs `task` after the current uWS read has been parsed to its end (uWS parses all of a read
 * before the event loop moves on, and runs microtasks after each callback, so a microtask would
 * be too early). One setImmediate serves every request of the turn.
 */
function afterParsing(task: () => void): void {
  if (parsingQueue) {
    parsingQueue.push(task)
    return
  }
  const queue = [task]
  parsingQueue = queue
  setImmediate(() => {
    parsingQueue = undefined
    for (const queued of queue) queued()
  })
}
