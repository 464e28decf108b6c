import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { STATUS_CODES } from 'node:http'
import type { Principal } from '../../domain/permissions.js'
import { type AppError, invalidArgument } from '../../errors/app-error.js'
import type { HistogramSeries } from '../../observability/series-histogram.js'
import type { Call, CallRoute, RequestPipeline } from '../request-pipeline.js'
import { BinaryStreamWriter } from './binary-stream.js'
import { type BodyRules, readBody } from './request-body.js'
import { errorBody, type RestHandler, type RestRequest, type RestResponse, type RestStream } from './rest-messages.js'
import { RestStreamWriter } from './rest-stream.js'
import { StreamedBody } from './streamed-body.js'

/** A route as the wrapper serves it: resolved once, when it is registered. */
export interface ServedRoute extends CallRoute {
  /** Names of the pattern's `:parameters`, in order; empty where they are not decoded (the 405 answers). */
  paramNames: string[]
  handler: RestHandler
  /** The route refuses callers without a valid API key, checked before its body is read (request-body.ts). */
  needsApiKey: boolean
  /** The largest body the route reads (RouteOptions.maxBodyBytes), before the server's own cap. */
  maxBodyBytes: number
  /** Headers every answer on the route carries (Allow, on a 405). */
  extraHeaders: Record<string, string>
  /** Request headers the route's handler reads besides READ_HEADERS and BODY_HEADERS (RouteOptions.readHeaders). */
  routeHeaders: readonly string[]
  /** A header that may carry the API key when Authorization is absent (RouteOptions.apiKeyHeader). */
  apiKeyHeader?: string
  /** Whether the request's body is handed over as it arrives (RouteOptions.streamBody). */
  streamBody?: (contentType: string | undefined) => boolean
}

/** What an exchange uses of the server it arrived on. */
export interface ExchangeServer {
  pipeline: RequestPipeline
  maxBodyBytes: number
  authenticate?: BodyRules['authenticate']
  durationSeries(requestMethod: string, route: ServedRoute, status: number): HistogramSeries
}

/**
 * The request headers every request needs: only these, the body headers below and a route's
 * own (RouteOptions.readHeaders) are copied out of uWS. Copying every header with
 * req.forEach was the largest single cost of the request wrapper, and each getHeader is a
 * call into uWS (bench profiles of GET /v1/users/me).
 */
const READ_HEADERS = ['authorization', 'x-request-id'] as const
/** Read only for methods whose body is read (see `receive`): a GET's would go unused. */
const BODY_HEADERS = ['content-length', 'content-type'] as const
const EMPTY_QUERY = new URLSearchParams()
const EMPTY_BODY = Buffer.alloc(0)

/**
 * One request on a uWS route, from its arrival to its answer, keeping uWS's rules: onAborted
 * is registered first, request data is copied before any await, every write happens inside
 * cork. Nothing thrown on the request path may leave a uWS callback (Node would end the
 * process): it becomes a logged 500.
 */
export class RestExchange {
  readonly #res: HttpResponse
  readonly #route: ServedRoute
  readonly #method: string
  readonly #server: ExchangeServer
  readonly #call: Call
  #request: RestRequest | undefined
  #aborted = false
  #responded = false
  /** Made when a handler asks for the request's cancellation signal. */
  #cancellation: AbortController | undefined
  #streamWriter: RestStreamWriter | undefined
  #binaryWriter: BinaryStreamWriter | undefined
  #streamedBody: StreamedBody | undefined
  /** True while body bytes may still arrive: answering then closes the connection instead of reading on. */
  bodyPending = false

  constructor(res: HttpResponse, route: ServedRoute, method: string, server: ExchangeServer) {
    this.#res = res
    res.onAborted(() => {
      this.#aborted = true
      this.#call.endWork()
      this.#cancellation?.abort()
      this.#streamWriter?.abort()
      this.#binaryWriter?.abort()
      this.#streamedBody?.abort()
    })
    this.#route = route
    this.#method = method
    this.#server = server
    this.#call = server.pipeline.begin(route)
  }

  /** Answered or aborted: nothing more is done for it. */
  get settled(): boolean {
    return this.#aborted || this.#responded
  }

  /** Copies the request out of `req` (invalid once this uWS callback returns), admits it, and reads its body if it has one. */
  receive(req: HttpRequest): void {
    this.guarded(() => {
      const request = this.#copyRequest(req)
      this.#call.admit()
      if (!hasReadBody(this.#method)) {
        this.start(EMPTY_BODY)
        return
      }
      const rules = {
        maxBodyBytes: Math.min(this.#route.maxBodyBytes, this.#server.maxBodyBytes),
        authenticate: this.#route.needsApiKey ? this.#server.authenticate : undefined,
      }
      if (this.#route.streamBody?.(request.headers['content-type'])) this.#receiveStreamed(request, rules)
      else readBody(this.#res, request.headers, rules, this)
    })
  }

  /**
   * Runs the handler. A request with side effects starts only once uWS has parsed everything it
   * read with it: uWS closes the connection, this request's response unsent, when a request
   * pipelined behind it in the same read is malformed or more than it will hold (NOTES.md of
   * third_party/uWebSockets.js, change 6), and work begun would take effect with no one to tell
   * (a key created whose raw key is never delivered).
   */
  start(body: Buffer, principal?: Principal): void {
    if (this.#method === 'GET' || this.#method === 'HEAD') this.#run(body, principal)
    else afterParsing(() => this.guarded(() => this.#run(body, principal)))
  }

  /**
   * A body handed to the handler as it arrives: the socket waits, paused, while the API key is
   * checked, and the handler starts once it is (a caller without a valid key is answered 401,
   * the connection then closed, none of the body read past uWS's first buffer).
   */
  #receiveStreamed(request: RestRequest, rules: BodyRules): void {
    // The server's cap only: the use case holds an upload to its own limit (--max-upload-mb), once the key is known.
    const body = new StreamedBody(this.#res, this.#server.maxBodyBytes)
    this.#streamedBody = body
    this.bodyPending = true
    body.onEnd = () => {
      this.bodyPending = false
    }
    body.pause()
    request.bodyStream = body
    if (!rules.authenticate) {
      this.start(EMPTY_BODY)
      return
    }
    rules.authenticate(request.headers.authorization).then(
      (who) => this.guarded(() => this.start(EMPTY_BODY, who)),
      (error: unknown) => this.fail(error),
    )
  }

  /** Runs `step` so that nothing it throws can leave a uWS callback. */
  guarded(step: () => void): void {
    try {
      step()
    } catch (error) {
      this.fail(error)
    }
  }

  fail(error: unknown): void {
    this.respond(this.#errorResponse(this.#call.failure(error)))
  }

  respond(response: RestResponse): void {
    if (this.settled) return
    this.#streamedBody?.release()
    if (response.stream) {
      void this.#respondStreamed(response.stream)
      return
    }
    if (response.binary) {
      void this.#respondBinary(response.binary)
      return
    }
    this.#responded = true
    const prepared = this.#prepare(response)
    this.#write(prepared)
    this.#call.finish(this.#server.durationSeries(this.#method, this.#route, prepared.status))
  }

  #copyRequest(req: HttpRequest): RestRequest {
    const headers: Record<string, string> = {}
    for (const name of READ_HEADERS) {
      const value = req.getHeader(name)
      if (value !== '') headers[name] = value
    }
    if (hasReadBody(this.#method)) {
      for (const name of BODY_HEADERS) {
        const value = req.getHeader(name)
        if (value !== '') headers[name] = value
      }
    }
    for (const name of this.#route.routeHeaders) {
      const value = req.getHeader(name)
      if (value !== '') headers[name] = value
    }
    const keyInOtherHeader = this.#route.apiKeyHeader === undefined ? undefined : headers[this.#route.apiKeyHeader]
    if (headers.authorization === undefined && keyInOtherHeader !== undefined) headers.authorization = keyInOtherHeader
    const requestId = this.#call.identify(headers['x-request-id'])
    const params = copyParams(req, this.#route.paramNames)
    const rawQuery = req.getQuery()
    const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY
    const cancellation = () => {
      this.#cancellation ??= abortedAlready(this.#aborted)
      return this.#cancellation.signal
    }
    this.#request = {
      method: this.#method,
      path: req.getUrl(),
      params,
      query,
      headers,
      body: EMPTY_BODY,
      requestId,
      principal: undefined,
      cancellation,
    }
    return this.#request
  }

  /**
   * A streamed 200. The first piece is pulled before anything is written, so whatever stops
   * the answer from starting (validation, permissions, a provider refusing) is an ordinary
   * JSON error with its own status. The call stays work for the drain until the last piece
   * is written or the client leaves.
   */
  async #respondStreamed(stream: RestStream): Promise<void> {
    let first: IteratorResult<string>
    try {
      first = await stream.pieces.next()
    } catch (error) {
      this.fail(error)
      return
    }
    if (this.settled) {
      void stream.pieces.return?.().catch(() => {})
      return
    }
    this.#responded = true
    const res = this.#res
    const writer = new RestStreamWriter(res, stream)
    this.#streamWriter = writer
    // Proxies (nginx) must pass each piece on as it comes rather than buffer the answer.
    const writeHead = this.#streamedHead(stream.contentType, { 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
    try {
      const outcome = await writer.run(writeHead, first.done ? '' : first.value, (error) => this.#call.internal(error))
      if (outcome === 'ended') this.#call.finish(this.#server.durationSeries(this.#method, this.#route, 200))
    } catch (error) {
      // A write on a response uWS no longer holds: the answer cannot be trusted, so the connection goes.
      this.#call.internal(error)
      this.#call.endWork()
      if (!this.#aborted) res.close()
    }
  }

  /** Writes a streamed 200's status line and headers; called inside the cork of its first piece. */
  #streamedHead(contentType: string, headers: Record<string, string>): () => void {
    const res = this.#res
    const requestId = this.#call.requestId
    return () => {
      res.writeStatus(statusLine(200))
      res.writeHeader('x-request-id', requestId)
      res.writeHeader('x-content-type-options', 'nosniff')
      res.writeHeader('content-type', contentType)
      for (const [name, value] of Object.entries(headers)) res.writeHeader(name, value)
    }
  }

  /** Bytes: status and headers go out with the first slice; a failure after that can only cut the answer. */
  async #respondBinary(binary: NonNullable<RestResponse['binary']>): Promise<void> {
    this.#responded = true
    const res = this.#res
    const writer = new BinaryStreamWriter(res)
    this.#binaryWriter = writer
    const writeHead = this.#streamedHead(binary.contentType, binary.headers ?? {})
    try {
      const outcome = await writer.run(writeHead, binary.parts)
      if (outcome === 'ended') this.#call.finish(this.#server.durationSeries(this.#method, this.#route, 200))
      else this.#call.endWork()
    } catch (error) {
      this.#call.internal(error)
      this.#call.endWork()
      if (!this.#aborted) res.close()
    }
  }

  #run(body: Buffer, principal: Principal | undefined): void {
    if (this.settled) return
    const request = this.#request!
    request.body = body
    request.principal = principal
    const result = this.#route.handler(request)
    if (result instanceof Promise) {
      result.then(
        (response) => this.respond(response),
        (error: unknown) => this.fail(error),
      )
    } else {
      this.respond(result)
    }
  }

  /** An error that names when to try again (the response budget is spent) carries it as Retry-After. */
  #errorResponse(error: AppError): RestResponse {
    const json = errorBody(error, this.#call.requestId)
    if (error.retryAfterSeconds === undefined) return { status: error.httpStatus, json }
    return { status: error.httpStatus, headers: { 'retry-after': String(error.retryAfterSeconds) }, json }
  }

  #prepare(response: RestResponse): PreparedResponse {
    try {
      return prepare(response, this.#route.extraHeaders)
    } catch (error) {
      // A body that cannot be serialised (BigInt, a cycle, a throwing toJSON) or a bad header.
      return prepare(this.#errorResponse(this.#call.internal(error)), this.#route.extraHeaders)
    }
  }

  /** Writes the answer in one cork; if uWS refuses a write half-way the response cannot be trusted, so the connection goes. */
  #write(prepared: PreparedResponse): void {
    const res = this.#res
    const requestId = this.#call.requestId
    const draining = !this.#server.pipeline.lifecycle.acceptingWork
    // After a refused or unread body the rest of it may still be arriving: close instead of reading on
    // (uWS then reads and drops what still comes for a few seconds first, so that the client sees this answer).
    // A 413 leaves body unread unless the body had arrived whole (an upload refused once read, by what it held).
    const closeConnection = this.bodyPending || draining
    try {
      res.cork(() => {
        // uWS writes `200 OK` itself before the first header: a call into it less for most answers.
        if (prepared.status !== OK) res.writeStatus(statusLine(prepared.status))
        res.writeHeader('x-request-id', requestId)
        res.writeHeader('x-content-type-options', 'nosniff')
        for (const [name, value] of prepared.headers) res.writeHeader(name, value)
        // Said, so that a client does not send its next request on a connection that is going.
        if (closeConnection) res.writeHeader('connection', 'close')
        res.end(prepared.body, closeConnection)
      })
    } catch (error) {
      this.#call.internal(error)
      if (!this.#aborted) res.close()
    }
  }
}

/** GET, DELETE and HEAD requests are answered without reading a body; any other method's body is read. */
const hasReadBody = (method: string) => method !== 'GET' && method !== 'DELETE' && method !== 'HEAD'

function abortedAlready(aborted: boolean): AbortController {
  const controller = new AbortController()
  if (aborted) controller.abort()
  return controller
}

/** The route's parameters, decoded; a malformed percent-encoding is the client's error, naming the parameter. */
function copyParams(req: HttpRequest, names: string[]): Record<string, string> {
  const params: Record<string, string> = {}
  let badParam: string | undefined
  names.forEach((name, index) => {
    const value = decodePathSegment(req.getParameter(index) ?? '')
    if (value === undefined) badParam ??= name
    else params[name] = value
  })
  if (badParam !== undefined) throw invalidArgument(badParam, 'is not a valid percent-encoded path segment')
  return params
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

const OK = 200
const STATUS_LINES = new Map<number, string>()

/** `200 OK` and the like, built once per status: one string less to make per answer. */
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
    // Statuses come from the server's own code, never from a request: the map stays small.
    STATUS_LINES.set(status, line)
  }
  return line
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
  if (body.length > 0 || response.contentType)
    headers.push(['content-type', response.contentType ?? 'application/json; charset=utf-8'])
  for (const source of [extraHeaders, response.headers ?? {}]) {
    for (const name in source) {
      const value = source[name]
      if (typeof value !== 'string' || /[\r\n]/.test(value))
        throw new TypeError(`response header ${name} has a value that cannot be sent`)
      headers.push([name, value])
    }
  }
  return { status: response.status, headers, body }
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
