import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import type { Principal } from '../../domain/permissions.js'
import { AppError } from '../../errors/app-error.js'
import type { Lifecycle } from '../../lifecycle/lifecycle.js'
import type { Logger } from '../../observability/logger.js'
import type { ServerMetrics } from '../../observability/metrics.js'
import type { HistogramSeries } from '../../observability/series-histogram.js'
import type { Uws } from '../../runtime/uws.js'
import { TLS12_CIPHERS } from '../../tls/cipher-policy.js'
import { DEFAULT_REQUEST_BYTES } from '../../validation/request-limits.js'
import { type DrainExemption, RequestPipeline } from '../request-pipeline.js'
import { type ExchangeServer, RestExchange, type ServedRoute } from './rest-exchange.js'
import type { RestHandler } from './rest-messages.js'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface RouteOptions {
  /**
   * Why the route is answered through a drain and not waited for (the reasons are listed in
   * request-pipeline.ts). Without it the route is work: refused once draining starts and
   * counted until it is answered.
   */
  drainExempt?: DrainExemption
  /**
   * The route refuses callers without a valid API key. A body is then read only after the key
   * has been checked, and may be as large as the body limit; without this a body may be at most
   * UNAUTHENTICATED_BODY_LIMIT_BYTES (request-body.ts).
   */
  needsApiKey?: boolean
  /**
   * The largest body the route reads from a caller with a valid key (413 above it), capped by the
   * server's limit; DEFAULT_REQUEST_BYTES unless given (src/validation/request-limits.ts).
   */
  maxBodyBytes?: number
  /** Request headers the handler reads besides the ones every route copies (READ_HEADERS in rest-exchange.ts). */
  readHeaders?: readonly string[]
  /**
   * A header that may carry the API key when Authorization is absent (a bare key, as MCP
   * clients send `x-api-key`). It must be one of `readHeaders`.
   */
  apiKeyHeader?: string
  /**
   * The body is handed to the handler as it arrives (RestRequest.bodyStream) when this says so
   * of the request's Content-Type: uploads, which may be far larger than any body held whole.
   * The API key is checked before any of it is read.
   */
  streamBody?: (contentType: string | undefined) => boolean
  /** The protocol the route speaks, as logs name it (REST unless given). */
  transport?: 'mcp'
}

export interface RegisteredRoute {
  method: HttpMethod
  pattern: string
  options: RouteOptions
}

const UWS_REGISTER: Record<HttpMethod, 'get' | 'post' | 'put' | 'patch' | 'del'> = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'del',
}
const METRIC_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

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
 * The REST listener: routes, the 404/405 answers and the duration metric. Each request is a
 * RestExchange (rest-exchange.ts), which keeps uWS's rules and runs the steps both
 * transports share (request-pipeline.ts).
 */
export class HttpServer {
  readonly #app: TemplatedApp
  readonly #options: HttpServerOptions
  readonly #exchangeServer: ExchangeServer
  readonly #patterns = new Map<string, Set<HttpMethod>>()
  readonly #routes: RegisteredRoute[] = []
  /**
   * Duration series by route, then method, then status, resolved once each: nested maps
   * keyed by the route object and the strings and numbers the exchange already holds, as a
   * key built per request was a string to allocate and hash on every answer.
   */
  readonly #durations = new Map<ServedRoute, Map<string, Map<number, HistogramSeries>>>()
  #listenSocket: us_listen_socket | undefined

  constructor(options: HttpServerOptions) {
    this.#options = options
    this.#app = options.tls
      ? options.uws.SSLApp({
          cert_file_name: options.tls.certFile,
          key_file_name: options.tls.keyFile,
          ssl_ciphers: TLS12_CIPHERS,
        })
      : options.uws.App()
    this.#exchangeServer = {
      pipeline: new RequestPipeline(options.lifecycle, options.log),
      maxBodyBytes: options.maxBodyBytes,
      authenticate: options.authenticate,
      durationSeries: (requestMethod, route, status) => this.#durationSeries(requestMethod, route, status),
    }
  }

  route(method: HttpMethod, pattern: string, handler: RestHandler, options: RouteOptions = {}): void {
    const methods = this.#patterns.get(pattern) ?? new Set<HttpMethod>()
    methods.add(method)
    this.#patterns.set(pattern, methods)
    this.#routes.push({ method, pattern, options })
    const served = servedRoute(pattern, handler, options)
    this.#app[UWS_REGISTER[method]](pattern, (res, req) =>
      new RestExchange(res, served, method, this.#exchangeServer).receive(req),
    )
  }

  /** Every route registered, in order (tests walk them all). */
  get routes(): readonly RegisteredRoute[] {
    return this.#routes
  }

  /** Registers 405 for known paths with other methods and a JSON 404 for everything else. Call after the routes. */
  finishRoutes(): void {
    for (const [pattern, methods] of this.#patterns) {
      const allow = [...methods].join(', ')
      const notAllowed = noRoute(
        pattern,
        () => {
          throw new AppError('METHOD_NOT_ALLOWED', `method not allowed; use ${allow}`)
        },
        { allow },
      )
      this.#app.any(pattern, (res, req) => this.#serveAnyMethod(res, req, notAllowed))
    }
    const unmatched = noRoute('unmatched', (request) => {
      throw new AppError('NOT_FOUND', `no route for ${request.method} ${request.path}`)
    })
    this.#app.any('/*', (res, req) => this.#serveAnyMethod(res, req, unmatched))
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

  #serveAnyMethod(res: HttpResponse, req: HttpRequest, route: ServedRoute): void {
    new RestExchange(res, route, req.getMethod().toUpperCase(), this.#exchangeServer).receive(req)
  }

  #durationSeries(requestMethod: string, route: ServedRoute, status: number): HistogramSeries {
    // A client picks the method string: unknown ones share one label so they cannot grow the series without bound.
    const method = METRIC_METHODS.has(requestMethod) ? requestMethod : 'OTHER'
    let byMethod = this.#durations.get(route)
    if (!byMethod) {
      byMethod = new Map()
      this.#durations.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (!byStatus) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let series = byStatus.get(status)
    if (!series) {
      series = this.#options.metrics.httpDuration.series({ method, route: route.name, status_code: String(status) })
      byStatus.set(status, series)
    }
    return series
  }
}

function servedRoute(pattern: string, handler: RestHandler, options: RouteOptions): ServedRoute {
  const paramNames = pattern
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1))
  return {
    transport: options.transport ?? 'rest',
    name: pattern,
    handler,
    paramNames,
    needsApiKey: options.needsApiKey === true,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_REQUEST_BYTES,
    drainExempt: options.drainExempt,
    extraHeaders: {},
    routeHeaders: options.readHeaders ?? [],
    apiKeyHeader: options.apiKeyHeader,
    streamBody: options.streamBody,
  }
}

/** A 404 or 405 answer: it reaches no use case and decodes no parameters. */
function noRoute(name: string, handler: RestHandler, extraHeaders: Record<string, string> = {}): ServedRoute {
  return {
    transport: 'rest',
    name,
    handler,
    paramNames: [],
    needsApiKey: false,
    // Read as the body of a request without a key: UNAUTHENTICATED_BODY_LIMIT_BYTES at most.
    maxBodyBytes: DEFAULT_REQUEST_BYTES,
    drainExempt: 'no-route',
    extraHeaders,
    routeHeaders: [],
  }
}
