// The calls themselves: one channel per client, the API key as metadata on every call, a
// deadline per call, retries with exponential backoff when an idempotent call meets
// UNAVAILABLE (no server yet, a restart, a draining replica), cancellation by AbortSignal,
// and every failure turned into a MemsvcError.
import { type ChannelCredentials, Client, type ClientWritableStream, Metadata, status } from '@grpc/grpc-js'
import { clientError, isServiceError, type MemsvcError, toMemsvcError } from './errors.js'
import { channelCredentials, parseAddress, type ServerAddress, type TlsOptions } from './tls.js'

const DEFAULT_DEADLINE_MS = 30_000
const DEFAULT_MAX_ATTEMPTS = 4
const DEFAULT_INITIAL_BACKOFF_MS = 200
const DEFAULT_MAX_BACKOFF_MS = 5_000
const BACKOFF_MULTIPLIER = 2
/** Backoff is drawn from [1 - JITTER, 1] of the step, so that many clients do not retry in step. */
const JITTER = 0.2

export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  maxAttempts?: number
  initialBackoffMs?: number
  maxBackoffMs?: number
}

export interface MemsvcClientOptions {
  /** https://host:port (TLS, the server's default), http://host:port (plaintext) or host:port (TLS). */
  address: string
  /** Sent as `authorization: Bearer <key>` on every call. */
  apiKey?: string
  tls?: TlsOptions
  /**
   * Channel credentials built by the caller, used instead of `tls` (for a trust decision made
   * elsewhere, as `memsvc init` does when it asks before pinning).
   */
  credentials?: ChannelCredentials
  /** Deadline of a unary call, retries included (default 30 s). Streams have none unless a call sets one. */
  deadlineMs?: number
  retry?: RetryOptions
  /** Extra grpc-js channel options. */
  channelOptions?: Record<string, string | number>
}

export interface CallOptions {
  /** Overrides the client's deadline for this call (for a stream: the whole stream). */
  deadlineMs?: number
  /** Aborting cancels the call (and the server's work behind it); the call rejects with code CANCELLED. */
  signal?: AbortSignal
  /** Overrides the client's retry setting for this call; `false` turns retries off. */
  retry?: RetryOptions | false
  /** Sent as x-request-id; the server logs the request under it and returns it on errors. */
  requestId?: string
  /**
   * Hears the server's response headers (gRPC initial metadata) as soon as they arrive, before the
   * answer: e.g. the id of an import that ImportSpace has started (x-import-id), which resumes it
   * if the stream is cut before the answer. Text headers only, the first value of each.
   */
  onHeaders?: (headers: Record<string, string>) => void
}

/** What a generated method definition (src/generated) gives us. */
export interface MethodDefinition<Request, Response> {
  path: string
  requestStream: boolean
  responseStream: boolean
  requestSerialize: (value: Request) => Buffer
  requestDeserialize: (value: Buffer) => Request
  responseDeserialize: (value: Buffer) => Response
}

const EMPTY = Buffer.alloc(0)

/**
 * The message with every field the caller left out set to its protobuf default: decoding
 * an empty message gives exactly those, so `{ name: 'x' }` is enough where the generated
 * type asks for every repeated and map field too.
 */
function withDefaults<Request>(
  method: MethodDefinition<Request, unknown>,
  request: Partial<Request> | undefined,
): Request {
  const given = Object.fromEntries(Object.entries(request ?? {}).filter(([, value]) => value !== undefined))
  return { ...method.requestDeserialize(EMPTY), ...given } as Request
}

/** A call's initial metadata as the plain object CallOptions.onHeaders hears. */
function headersOf(metadata: Metadata): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [key, value] of Object.entries(metadata.getMap())) if (typeof value === 'string') headers[key] = value
  return headers
}

/** Passes the call's response headers to `options.onHeaders`, when the caller asked for them. */
function reportHeaders(
  call: { on(event: 'metadata', listener: (metadata: Metadata) => void): unknown },
  options?: CallOptions,
) {
  const listener = options?.onHeaders
  if (listener) call.on('metadata', (metadata: Metadata) => listener(headersOf(metadata)))
}

function abortError(signal: AbortSignal): MemsvcError {
  const reason = signal.reason instanceof Error ? signal.reason.message : 'the call was aborted'
  return clientError(status.CANCELLED, reason, signal.reason)
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal))
      return
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortError(signal!))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Writes one message and resolves once grpc-js has handed it to HTTP/2 (or the call has ended):
 * one message in flight at a time, so what the caller reads for the next one waits for this one.
 */
function written<Request>(
  stream: ClientWritableStream<Request>,
  message: Request,
  ended: Promise<unknown>,
): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.write(message, () => resolve())
    ended.then(
      () => resolve(),
      () => resolve(),
    )
  })
}

export class Transport {
  readonly server: ServerAddress
  readonly #options: MemsvcClientOptions
  #client: Promise<Client> | undefined
  #closed = false

  constructor(options: MemsvcClientOptions) {
    this.server = parseAddress(options.address)
    this.#options = options
  }

  /** The channel is opened on the first call: a pinned certificate must be read and checked first. */
  #connect(): Promise<Client> {
    if (this.#closed) return Promise.reject(clientError(status.UNAVAILABLE, 'the client is closed'))
    this.#client ??= this.#credentials().then(
      (credentials: ChannelCredentials) => new Client(this.server.target, credentials, this.#options.channelOptions),
    )
    // A failed connect (e.g. the pinned certificate did not match) is tried afresh next time.
    this.#client.catch(() => {
      this.#client = undefined
    })
    return this.#client
  }

  #credentials(): Promise<ChannelCredentials> {
    const given = this.#options.credentials
    return given ? Promise.resolve(given) : channelCredentials(this.server, this.#options.tls)
  }

  #metadata(options: CallOptions | undefined): Metadata {
    const metadata = new Metadata()
    if (this.#options.apiKey) metadata.set('authorization', `Bearer ${this.#options.apiKey}`)
    if (options?.requestId) metadata.set('x-request-id', options.requestId)
    return metadata
  }

  #retryPolicy(options: CallOptions | undefined, idempotent: boolean): Required<RetryOptions> {
    const chosen = options?.retry === false ? { maxAttempts: 1 } : { ...this.#options.retry, ...options?.retry }
    return {
      maxAttempts: idempotent ? Math.max(1, chosen.maxAttempts ?? DEFAULT_MAX_ATTEMPTS) : 1,
      initialBackoffMs: chosen.initialBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS,
      maxBackoffMs: chosen.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS,
    }
  }

  /** Runs `attempt` again after UNAVAILABLE while attempts and the deadline allow. */
  async #withRetries<T>(
    idempotent: boolean,
    options: CallOptions | undefined,
    deadline: number | undefined,
    attempt: () => Promise<T>,
  ): Promise<T> {
    const policy = this.#retryPolicy(options, idempotent)
    let backoff = policy.initialBackoffMs
    for (let attemptNumber = 1; ; attemptNumber++) {
      if (options?.signal?.aborted) throw abortError(options.signal)
      try {
        return await attempt()
      } catch (caught) {
        const error = toMemsvcError(caught)
        const wait = backoff * (1 - JITTER * Math.random())
        const timeLeft = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - Date.now()
        if (error.grpcStatus !== status.UNAVAILABLE || attemptNumber >= policy.maxAttempts || wait >= timeLeft)
          throw error
        await sleep(wait, options?.signal)
        backoff = Math.min(backoff * BACKOFF_MULTIPLIER, policy.maxBackoffMs)
      }
    }
  }

  unary<Request, Response>(
    method: MethodDefinition<Request, Response>,
    request: Partial<Request> | undefined,
    idempotent: boolean,
    options?: CallOptions,
  ): Promise<Response> {
    const message = withDefaults(method, request)
    const deadline = Date.now() + (options?.deadlineMs ?? this.#options.deadlineMs ?? DEFAULT_DEADLINE_MS)
    return this.#withRetries(idempotent, options, deadline, async () => {
      const client = await this.#connect()
      return new Promise<Response>((resolve, reject) => {
        const signal = options?.signal
        const call = client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          message,
          this.#metadata(options),
          { deadline: new Date(deadline) },
          (error, response) => {
            signal?.removeEventListener('abort', onAbort)
            if (error) reject(signal?.aborted ? abortError(signal) : error)
            else resolve(response as Response)
          },
        )
        reportHeaders(call, options)
        const onAbort = () => call.cancel()
        signal?.addEventListener('abort', onAbort, { once: true })
      })
    })
  }

  /**
   * A server-streaming call as an async iterable. An idempotent stream is retried on
   * UNAVAILABLE only while nothing has arrived yet; leaving the loop early (break, an
   * exception, the signal) cancels the call, which cancels the server's work.
   */
  async *stream<Request, Response>(
    method: MethodDefinition<Request, Response>,
    request: Partial<Request> | undefined,
    idempotent: boolean,
    options?: CallOptions,
  ): AsyncGenerator<Response, void, undefined> {
    const message = withDefaults(method, request)
    const deadlineMs = options?.deadlineMs
    const deadline = deadlineMs === undefined ? undefined : Date.now() + deadlineMs
    const signal = options?.signal
    const policy = this.#retryPolicy(options, idempotent)
    let backoff = policy.initialBackoffMs
    for (let attemptNumber = 1; ; attemptNumber++) {
      if (signal?.aborted) throw abortError(signal)
      let received = false
      let client: Client
      try {
        client = await this.#connect()
      } catch (error) {
        throw toMemsvcError(error)
      }
      const call = client.makeServerStreamRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        message,
        this.#metadata(options),
        deadline === undefined ? {} : { deadline: new Date(deadline) },
      )
      reportHeaders(call, options)
      const onAbort = () => call.cancel()
      signal?.addEventListener('abort', onAbort, { once: true })
      try {
        for await (const response of call) {
          received = true
          yield response as Response
        }
        return
      } catch (caught) {
        if (signal?.aborted) throw abortError(signal)
        const error = toMemsvcError(caught)
        const timeLeft = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - Date.now()
        const wait = backoff * (1 - JITTER * Math.random())
        if (
          !isServiceError(caught) ||
          received ||
          error.grpcStatus !== status.UNAVAILABLE ||
          attemptNumber >= policy.maxAttempts ||
          wait >= timeLeft
        )
          throw error
        await sleep(wait, signal)
        backoff = Math.min(backoff * BACKOFF_MULTIPLIER, policy.maxBackoffMs)
      } finally {
        signal?.removeEventListener('abort', onAbort)
        call.cancel()
      }
    }
  }

  /**
   * A client-streaming call: the messages are written as `messages` yields them, each once the
   * previous one has left, so a file read from disk is never held whole.
   * Never retried: the messages already sent cannot be read again. Failing to read `messages`
   * cancels the call and rejects with that error.
   */
  async clientStream<Request, Response>(
    method: MethodDefinition<Request, Response>,
    messages: AsyncIterable<Partial<Request>> | Iterable<Partial<Request>>,
    options?: CallOptions,
  ): Promise<Response> {
    let client: Client
    try {
      client = await this.#connect()
    } catch (error) {
      throw toMemsvcError(error)
    }
    const signal = options?.signal
    if (signal?.aborted) throw abortError(signal)
    const deadlineMs = options?.deadlineMs
    let call: ClientWritableStream<Request> | undefined
    const answered = new Promise<Response>((resolve, reject) => {
      call = client.makeClientStreamRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        this.#metadata(options),
        deadlineMs === undefined ? {} : { deadline: new Date(Date.now() + deadlineMs) },
        (error, response) => {
          if (error) reject(signal?.aborted ? abortError(signal) : toMemsvcError(error))
          else resolve(response as Response)
        },
      )
    })
    const stream = call!
    reportHeaders(stream, options)
    const onAbort = () => stream.cancel()
    signal?.addEventListener('abort', onAbort, { once: true })
    // The answer may come before every message is written (the server refused the header).
    let finished = false
    const settled = () => {
      finished = true
      signal?.removeEventListener('abort', onAbort)
    }
    answered.then(settled, settled)
    try {
      for await (const message of messages) {
        if (finished) break
        await written(stream, withDefaults(method, message), answered)
      }
      if (!finished) stream.end()
    } catch (error) {
      // Reading the messages failed (e.g. the file could not be read): the call is abandoned.
      stream.cancel()
      throw error
    }
    return answered
  }

  close(): void {
    this.#closed = true
    const client = this.#client
    this.#client = undefined
    void client?.then(
      (opened) => opened.close(),
      () => {},
    )
  }
}
