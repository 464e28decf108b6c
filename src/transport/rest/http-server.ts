import { STATUS_CODES } from 'node:http'
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import { requestIdFrom } from '../../domain/call-context.js'
import { AppError, toAppError } from '../../errors/app-error.js'
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
}

const UWS_REGISTER: Record<HttpMethod, 'get' | 'post' | 'put' | 'del'> = { GET: 'get', POST: 'post', PUT: 'put', DELETE: 'del' }

/**
 * The request headers any handler reads: only these are copied out of uWS. Copying every
 * header with req.forEach was the largest single cost of the request wrapper (bench
 * profile of GET /v1/users/me). A handler that needs another header adds it here.
 */
const READ_HEADERS = ['authorization', 'x-request-id', 'content-length', 'x-service-metrics-key'] as const
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
  lifecycle: Lifecycle
  metrics: ServerMetrics
  log: Logger
}

/**
 * The one place that knows uWS's rules: onAborted is registered first, request data
 * is copied before any await, every write happens inside cork, and bodies are
 * assembled from onData chunks under a size cap.
 */
export class HttpServer {
  readonly #app: TemplatedApp
  readonly #options: HttpServerOptions
  readonly #patterns = new Map<string, Set<HttpMethod>>()
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
    this.#app[UWS_REGISTER[method]](pattern, (res, req) => this.#handle(res, req, method, pattern, paramNames, handler, options))
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
    let endWork = () => {}
    res.onAborted(() => {
      aborted = true
      endWork()
    })

    // Everything from req must be copied now: it is invalid after this function returns.
    const headers: Record<string, string> = {}
    for (const name of READ_HEADERS) {
      const value = req.getHeader(name)
      if (value !== '') headers[name] = value
    }
    const params: Record<string, string> = {}
    paramNames.forEach((name, index) => {
      params[name] = decodeURIComponent(req.getParameter(index) ?? '')
    })
    const path = req.getUrl()
    const rawQuery = req.getQuery()
    const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY
    const requestId = requestIdFrom(headers['x-request-id'])

    const respond = (response: RestResponse) => {
      if (aborted) return
      const body = response.text ?? (response.json === undefined ? '' : JSON.stringify(response.json))
      res.cork(() => {
        res.writeStatus(statusLine(response.status))
        res.writeHeader('x-request-id', requestId)
        res.writeHeader('x-content-type-options', 'nosniff')
        if (body.length > 0 || response.contentType) {
          res.writeHeader('content-type', response.contentType ?? 'application/json; charset=utf-8')
        }
        for (const name in extraHeaders) res.writeHeader(name, extraHeaders[name]!)
        for (const name in response.headers) res.writeHeader(name, response.headers[name]!)
        // After a refused oversized body the rest of it may still be arriving: close instead of reading on.
        const closeConnection = response.status === 413
        if (!lifecycle.acceptingWork && !closeConnection) res.writeHeader('connection', 'close')
        res.end(body, closeConnection || !lifecycle.acceptingWork)
      })
      this.#durationSeries(method, routeName, response.status).observe(Number(process.hrtime.bigint() - started) / NANOSECONDS_PER_SECOND)
      endWork()
    }

    const fail = (error: unknown) => {
      const appError = toAppError(error)
      if (appError.code === 'INTERNAL') log.error('request failed', { requestId, route: routeName, error: error as Error, stack: (error as Error)?.stack })
      respond({ status: appError.httpStatus, json: errorBody(appError, requestId) })
    }

    if (options.isWork) {
      if (!lifecycle.acceptingWork) {
        fail(new AppError('UNAVAILABLE', `server is ${lifecycle.state.toLowerCase()} and accepts no new requests`))
        return
      }
      endWork = lifecycle.beginRequest()
    }

    const run = (body: Buffer) => {
      let result: Promise<RestResponse> | RestResponse
      try {
        result = handler({ method, path, params, query, headers, body, requestId })
      } catch (error) {
        fail(error)
        return
      }
      if (result instanceof Promise) result.then(respond, fail)
      else respond(result)
    }

    if (method === 'GET' || method === 'DELETE' || method === 'HEAD') {
      run(EMPTY_BODY)
      return
    }
    const declaredLength = Number(headers['content-length'] ?? 0)
    if (declaredLength > maxBodyBytes) {
      fail(new AppError('PAYLOAD_TOO_LARGE', `request body of ${declaredLength} bytes exceeds the limit of ${maxBodyBytes} bytes`))
      return
    }
    const chunks: Buffer[] = []
    let received = 0
    let rejected = false
    res.onData((chunk, isLast) => {
      if (rejected) return
      received += chunk.byteLength
      if (received > maxBodyBytes) {
        rejected = true
        fail(new AppError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${maxBodyBytes} bytes`))
        return
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)))
      if (isLast) run(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
    })
  }
}
