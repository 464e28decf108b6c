import fs from 'node:fs'
import { BinaryReader } from '@bufbuild/protobuf/wire'
import * as grpc from '@grpc/grpc-js'
import type { CallContext } from '../../domain/call-context.js'
import { AppError } from '../../errors/app-error.js'
import type { Lifecycle } from '../../lifecycle/lifecycle.js'
import type { Logger } from '../../observability/logger.js'
import type { ServerMetrics } from '../../observability/metrics.js'
import type { HistogramSeries } from '../../observability/series-histogram.js'
import { NODE_TLS_OPTIONS } from '../../tls/cipher-policy.js'
import { DEFAULT_REQUEST_BYTES } from '../../validation/request-limits.js'
import { AbortableWaits } from '../abortable-waits.js'
import { type CallRoute, type DrainExemption, RequestPipeline } from '../request-pipeline.js'
import { GrpcStreamWriter } from './grpc-stream.js'
import { addHealthService } from './health-service.js'
import { asciiMetadataValue, wellFormedText } from './metadata-text.js'
import { addReflectionService } from './reflection-service.js'

export interface GrpcServerOptions {
  tls?: { certFile: string; keyFile: string }
  maxMessageBytes: number
  lifecycle: Lifecycle
  metrics: ServerMetrics
  log: Logger
}

type UnaryImplementation<Request, Response> = (request: Request, context: CallContext) => Promise<Response>

/**
 * A server-streaming method: `open` checks the request and returns the messages to send;
 * what it throws is the call's status. A failure after messages went out is sent as the
 * message `failureMessage` makes, and the call then ends OK (the client keeps what it got).
 */
export interface StreamingImplementation<Request, Response> {
  open(request: Request, context: CallContext): Promise<AsyncIterable<Response>>
  failureMessage(error: AppError): Response
}

/**
 * A client-streaming method: the messages as they arrive, pulled at the implementation's pace
 * (grpc-js stops reading the stream while it does not pull); one the wrapper refuses (too
 * large, undecodable) ends the iteration with that error, and so does the client's cancel.
 */
export interface ClientStreamingImplementation<Request, Response> {
  receive(messages: AsyncIterable<Request>, context: CallContext): Promise<Response>
}

type Implementation =
  | UnaryImplementation<unknown, unknown>
  | StreamingImplementation<unknown, unknown>
  | ClientStreamingImplementation<unknown, unknown>

/**
 * Trailers are HTTP/2 headers: clients refuse a header block beyond a few kilobytes per
 * value and a bounded number of CONTINUATION frames, which would turn an answer into a
 * client-side INTERNAL. The message and each field are cut, and the fields counted.
 */
const MAX_TRAILER_VALUE_LENGTH = 1024
const MAX_ERROR_FIELDS = 20
const MS_PER_SECOND = 1_000

/**
 * What a request deserialiser returns for bytes it will not decode: more than the method takes,
 * or not the method's message. grpc-js answers a deserialiser's throw with INTERNAL itself, before
 * any handler runs; the wrapper answers this marker's error instead, as the client is at fault.
 */
class RefusedRequest {
  constructor(readonly error: AppError) {}
}

/** proto3 strings are UTF-8: refused when they are not, where the generated decoders would store U+FFFD in place of what was sent. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const decodeStrictUtf8 = (bytes: Uint8Array) => STRICT_UTF8.decode(bytes)

function tolerantDeserialize<Request>(
  deserialize: grpc.deserialize<Request>,
  path: string,
  maxBytes: number,
): grpc.deserialize<Request | RefusedRequest> {
  const messageName = `${splitPath(path).method} request message`
  return (bytes) => {
    if (bytes.length > maxBytes)
      return new RefusedRequest(
        new AppError(
          'PAYLOAD_TOO_LARGE',
          `the ${messageName} of ${bytes.length} bytes exceeds the limit of ${maxBytes} bytes`,
        ),
      )
    try {
      // The generated decode() takes a reader as well as bytes.
      return deserialize(new BinaryReader(bytes, decodeStrictUtf8) as unknown as Buffer)
    } catch (error) {
      const reason = (error as Error)?.message ?? String(error)
      return new RefusedRequest(
        new AppError('INVALID_ARGUMENT', `the request is not a valid ${messageName}: ${reason}`),
      )
    }
  }
}

/** Responses reach grpc-js already encoded by the wrapper (see #serve), so an encoding failure is answered with the request id. */
const passEncoded: grpc.serialize<unknown> = (bytes) => bytes as Buffer

/**
 * createSsl() offers OpenSSL's default suites (CBC-SHA1, CCM, ARIA among them) unless
 * GRPC_SSL_CIPHER_SUITES is set; its options go to http2.createSecureServer, so the
 * policy is added there.
 */
function withModernCiphers(credentials: grpc.ServerCredentials): grpc.ServerCredentials {
  const constructorOptions = credentials._getConstructorOptions.bind(credentials)
  credentials._getConstructorOptions = () => ({ ...constructorOptions(), ...NODE_TLS_OPTIONS })
  return credentials
}

/** A client stream's messages; a refused one, or the client's cancel, ends the iteration with its error. */
async function* receivedMessages(call: grpc.ServerReadableStream<unknown, unknown>): AsyncGenerator<unknown> {
  const cancelledError = () => new AppError('UNAVAILABLE', 'the client cancelled the call before its last message')
  const cancelled = new Promise<never>((_resolve, reject) => {
    call.once('cancelled', () => reject(cancelledError()))
  })
  cancelled.catch(() => {})
  const iterator = call[Symbol.asyncIterator]()
  for (;;) {
    const next = await Promise.race([iterator.next(), cancelled])
    // A cancelled call's stream ends too: its end is not the client's last message.
    if (next.done) {
      // grpc-js may end the stream before it tells of the cancel: a turn later, it has.
      await new Promise((resolve) => setImmediate(resolve))
      if (call.cancelled) throw cancelledError()
      return
    }
    if (next.value instanceof RefusedRequest) throw next.value.error
    yield next.value
  }
}

/** Splits "/pkg.Service/Method" into the metric labels. */
function splitPath(path: string): { service: string; method: string } {
  const [, service = 'unknown', method = 'unknown'] = path.split('/')
  return { service, method }
}

/** A method as the wrapper serves it: resolved once, when its service is added. */
interface ServedMethod extends CallRoute {
  implementation: Implementation
  encodeResponse: grpc.serialize<unknown>
  /** The duration series of one status code; grpc_server_handled_total reads the same series' counts. */
  duration(code: grpc.status): HistogramSeries
}

export interface RegisteredMethod {
  /** "/pkg.Service/Method" */
  path: string
  drainExempt?: DrainExemption
}

export class GrpcServer {
  readonly server: grpc.Server
  readonly #options: GrpcServerOptions
  readonly #pipeline: RequestPipeline
  readonly #serviceNames: string[] = []
  readonly #methods: RegisteredMethod[] = []

  constructor(options: GrpcServerOptions) {
    this.#options = options
    this.#pipeline = new RequestPipeline(options.lifecycle, options.log)
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.max_send_message_length': options.maxMessageBytes,
    })
  }

  /**
   * Registers a service whose every method runs `implementation` through the shared pipeline
   * (request-pipeline.ts): a unary call, or a StreamingImplementation for a server-streaming
   * one. Every method is work unless `drainExempt` names why it is not.
   */
  addService<Definition extends grpc.ServiceDefinition>(
    definition: Definition,
    implementation: {
      [Method in keyof Definition]: Definition[Method] extends grpc.MethodDefinition<infer Request, infer Response>
        ? Definition[Method]['responseStream'] extends true
          ? StreamingImplementation<Request, Response>
          : Definition[Method]['requestStream'] extends true
            ? ClientStreamingImplementation<Request, Response>
            : UnaryImplementation<Request, Response>
        : never
    },
    options: {
      drainExempt?: { [Method in keyof Definition]?: DrainExemption }
      /** The largest request message a method takes, before the server's own cap; DEFAULT_REQUEST_BYTES unless given. */
      maxRequestBytes?: { [Method in keyof Definition]?: number }
    } = {},
  ): void {
    const handlers: grpc.UntypedServiceImplementation = {}
    const guarded: Record<string, grpc.MethodDefinition<unknown, unknown>> = {}
    let serviceName = ''
    for (const [key, method] of Object.entries(definition)) {
      serviceName = splitPath(method.path).service
      const drainExempt = options.drainExempt?.[key as keyof Definition]
      const served = this.#servedMethod(method, implementation[key as keyof Definition] as Implementation, drainExempt)
      this.#methods.push({ path: method.path, drainExempt })
      guarded[key] = {
        ...method,
        requestDeserialize: tolerantDeserialize(
          method.requestDeserialize,
          method.path,
          Math.min(
            options.maxRequestBytes?.[key as keyof Definition] ?? DEFAULT_REQUEST_BYTES,
            this.#options.maxMessageBytes,
          ),
        ),
        responseSerialize: passEncoded,
      }
      handlers[key] = method.responseStream
        ? (call: grpc.ServerWritableStream<unknown, unknown>) => void this.#serveStream(served, call)
        : method.requestStream
          ? (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) =>
              this.#serve(served, call, callback)
          : (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) =>
              this.#serve(served, call, callback)
    }
    this.#serviceNames.push(serviceName)
    this.server.addService(guarded, handlers)
  }

  /**
   * Every method added through addService, in order (tests walk them all).
   * Health and reflection (addStandardServices) bypass the pipeline and are never work.
   */
  get methods(): readonly RegisteredMethod[] {
    return this.#methods
  }

  /** Health and reflection know every service; call after addService. Reflection reads the descriptor set when first asked. */
  addStandardServices(loadDescriptorSet: () => Buffer): void {
    addHealthService(this.server, this.#options.lifecycle, this.#serviceNames)
    addReflectionService(this.server, loadDescriptorSet, this.#serviceNames)
  }

  #servedMethod(
    method: grpc.MethodDefinition<unknown, unknown>,
    implementation: Implementation,
    drainExempt: DrainExemption | undefined,
  ): ServedMethod {
    const { service, method: methodName } = splitPath(method.path)
    const durationByCode = new Map<grpc.status, HistogramSeries>()
    const duration = (code: grpc.status) => {
      let series = durationByCode.get(code)
      if (!series) {
        series = this.#options.metrics.grpcDuration.series({
          grpc_service: service,
          grpc_method: methodName,
          grpc_code: grpc.status[code] ?? String(code),
        })
        durationByCode.set(code, series)
      }
      return series
    }
    return {
      transport: 'grpc',
      name: method.path,
      drainExempt,
      implementation,
      encodeResponse: method.responseSerialize,
      duration,
    }
  }

  /**
   * One call. Nothing it does may end the process: a synchronous throw, a rejected promise, a
   * response that does not encode and an error whose trailer cannot be built all end as a
   * status with the request id (INTERNAL when it is not the client's fault).
   */
  #serve(
    method: ServedMethod,
    call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerReadableStream<unknown, unknown>,
    callback: grpc.sendUnaryData<unknown>,
  ): void {
    const tracked = this.#pipeline.begin(method)
    const requestId = tracked.identify(call.metadata.get('x-request-id')[0])
    const answerFailure = (error: unknown) => {
      const appError = tracked.failure(error)
      tracked.finish(method.duration(appError.grpcStatus))
      callback({
        code: appError.grpcStatus,
        details: wellFormedText(appError.message).slice(0, MAX_TRAILER_VALUE_LENGTH),
        metadata: errorTrailer(requestId, appError),
      })
    }
    try {
      if ('request' in call && call.request instanceof RefusedRequest) throw call.request.error
      tracked.admit()
    } catch (error) {
      answerFailure(error)
      return
    }
    // new Promise() turns a synchronous throw of the implementation into a rejection.
    const run = () => {
      if ('request' in call)
        return (method.implementation as UnaryImplementation<unknown, unknown>)(
          call.request,
          callContext(call, requestId),
        )
      const cancellation = new AbortController()
      call.once('cancelled', () => cancellation.abort())
      return (method.implementation as ClientStreamingImplementation<unknown, unknown>).receive(
        receivedMessages(call),
        {
          ...callContext(call, requestId),
          signal: cancellation.signal,
        },
      )
    }
    new Promise((resolve) => resolve(run()))
      .then((response) => method.encodeResponse(response))
      .then((encoded) => {
        tracked.finish(method.duration(grpc.status.OK))
        callback(null, encoded)
      }, answerFailure)
      .catch((error: unknown) => {
        // Only reached when answering itself threw: log it; the call may stay unanswered, the process stays up.
        this.#options.log.error('rpc could not be answered', {
          requestId,
          rpc: method.name,
          error: error as Error,
          stack: (error as Error)?.stack,
        })
      })
  }

  /**
   * One server-streaming call, through the same pipeline as a unary one. Messages go out as
   * the implementation yields them, the next one pulled only once the client has taken all
   * but GRPC_HIGH_WATER_BYTES (grpc-stream.ts, which also resets a stream whose client stopped
   * reading); a client cancel aborts the call's signal and stops the iteration (its
   * `return()` cancels the work behind it). The call is work for the drain until its stream ends.
   */
  async #serveStream(method: ServedMethod, call: grpc.ServerWritableStream<unknown, unknown>): Promise<void> {
    const implementation = method.implementation as StreamingImplementation<unknown, unknown>
    const tracked = this.#pipeline.begin(method)
    const requestId = tracked.identify(call.metadata.get('x-request-id')[0])
    const cancellation = new AbortController()
    const waits = new AbortableWaits()
    call.once('cancelled', () => {
      cancellation.abort()
      tracked.endWork()
      waits.abort()
    })
    let iterator: AsyncIterator<unknown> | undefined
    let sourceEnded = false
    let sent = 0
    try {
      if (call.request instanceof RefusedRequest) throw call.request.error
      tracked.admit()
      const events = await implementation.open(call.request, {
        ...callContext(call, requestId),
        signal: cancellation.signal,
      })
      iterator = events[Symbol.asyncIterator]()
      const writer = new GrpcStreamWriter(call, waits)
      for (;;) {
        let next: IteratorResult<unknown> | 'aborted'
        try {
          next = await waits.wait(iterator.next())
        } catch (error) {
          sourceEnded = true
          throw error
        }
        if (next === 'aborted' || call.cancelled) return
        if (next.done) {
          sourceEnded = true
          break
        }
        if ((await writer.write(method.encodeResponse(next.value))) === 'cancelled') return
        sent++
      }
      tracked.finish(method.duration(grpc.status.OK))
      call.end(requestIdTrailer(requestId))
      // Watched until the client has taken the last messages: one that stops reading now is reset too.
      await writer.flushed()
    } catch (error) {
      if (call.cancelled) return
      const appError = tracked.failure(error)
      if (sent > 0) {
        // The client has items already: the failure is the last message, and the call ends OK.
        tracked.finish(method.duration(grpc.status.OK))
        try {
          call.write(method.encodeResponse(implementation.failureMessage(appError)))
        } catch (encodingError) {
          tracked.internal(encodingError)
        }
        call.end(requestIdTrailer(requestId))
        return
      }
      tracked.finish(method.duration(appError.grpcStatus))
      call.emit('error', {
        code: appError.grpcStatus,
        details: wellFormedText(appError.message).slice(0, MAX_TRAILER_VALUE_LENGTH),
        metadata: errorTrailer(requestId, appError),
      })
    } finally {
      // Stops the work behind the messages (and gives back what it holds) whenever the loop left before the end.
      if (!sourceEnded) void iterator?.return?.().catch(() => {})
    }
  }

  bind(host: string, port: number): Promise<number> {
    const tls = this.#options.tls
    const credentials = tls
      ? withModernCiphers(
          grpc.ServerCredentials.createSsl(
            null,
            [{ cert_chain: fs.readFileSync(tls.certFile), private_key: fs.readFileSync(tls.keyFile) }],
            false,
          ),
        )
      : grpc.ServerCredentials.createInsecure()
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, credentials, (error, boundPort) => (error ? reject(error) : resolve(boundPort)))
    })
  }

  /** Stops accepting calls and waits for running ones, then cancels whatever is left after graceMs. */
  async shutdown(graceMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown()
        resolve()
      }, graceMs)
      this.server.tryShutdown(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

/**
 * x-request-id, x-error-status and one x-error-field per field at fault. Field names can
 * carry client text (a label key such as "é"), which ASCII metadata cannot hold: they are
 * percent-encoded. If the trailer still cannot be built, the request id alone goes out.
 */

function requestIdTrailer(requestId: string): grpc.Metadata {
  const trailer = new grpc.Metadata()
  trailer.set('x-request-id', requestId)
  return trailer
}

function callContext(
  call:
    | grpc.ServerUnaryCall<unknown, unknown>
    | grpc.ServerWritableStream<unknown, unknown>
    | grpc.ServerReadableStream<unknown, unknown>,
  requestId: string,
): CallContext {
  const authorization = call.metadata.get('authorization')[0]
  return { requestId, transport: 'grpc', authorization: typeof authorization === 'string' ? authorization : undefined }
}

function errorTrailer(requestId: string, appError: AppError): grpc.Metadata {
  const trailer = new grpc.Metadata()
  trailer.set('x-request-id', requestId)
  try {
    trailer.set('x-error-status', appError.code)
    if (appError.retryAfterSeconds !== undefined) {
      trailer.set('retry-after', String(appError.retryAfterSeconds))
      // What grpc-js and other clients' retry policies read as the server's pushback.
      trailer.set('grpc-retry-pushback-ms', String(appError.retryAfterSeconds * MS_PER_SECOND))
    }
    for (const detail of appError.details.slice(0, MAX_ERROR_FIELDS))
      trailer.add('x-error-field', asciiMetadataValue(detail.field).slice(0, MAX_TRAILER_VALUE_LENGTH))
    return trailer
  } catch {
    const minimal = new grpc.Metadata()
    minimal.set('x-request-id', requestId)
    minimal.set('x-error-status', 'INTERNAL')
    return minimal
  }
}
