import http2 from 'node:http2'
import { performance } from 'node:perf_hooks'
import type * as grpc from '@grpc/grpc-js'
import type { AbortableWaits } from '../abortable-waits.js'

/**
 * Writes a server-streaming call's messages so that what waits for a slow client stays
 * bounded in bytes. grpc-js's own signal (write() returning false, then 'drain') counts
 * messages, sixteen of them, whatever their size: sixteen memories of 4 MiB were 64 MiB
 * queued for a client that does not read. Here each message's bytes count as in flight
 * until grpc-js has handed them to HTTP/2 (which sends only as far as the client's flow
 * control windows let it), and the writer waits while more than GRPC_HIGH_WATER_BYTES are.
 *
 * A stream whose client has taken nothing, on this stream or any other of its connection,
 * for IDLE_CLIENT_MS plus a second per MIN_READ_BYTES_PER_SECOND in flight is reset
 * (RST_STREAM ENHANCE_YOUR_CALM, which clients report as RESOURCE_EXHAUSTED), which cancels
 * the call as a client's cancel does: a client that stopped reading does not hold its
 * answer's memory for ever. The connection counts because HTTP/2 shares it: a stream may wait
 * its turn for a long time behind its siblings while the client reads as fast as it can.
 */

/** Bytes a stream may have waiting for its client before the writer waits too: about one batch of the REST writer. */
export const GRPC_HIGH_WATER_BYTES = 64 * 1024
/** How long a client may take nothing, before the allowance for the size of what waits: uWS's idle timeout for HTTP. */
export const IDLE_CLIENT_MS = 10_000
/** The slowest reading allowed for a large message: uWS asks the same of request bodies. */
export const MIN_READ_BYTES_PER_SECOND = 16 * 1024
const MS_PER_SECOND = 1_000

export type WriteOutcome = 'written' | 'cancelled'

/** When each HTTP/2 connection (its session) last delivered a message, of any of its streams. */
const connectionProgress = new WeakMap<object, number>()

export class GrpcStreamWriter {
  readonly #call: grpc.ServerWritableStream<unknown, unknown>
  readonly #waits: AbortableWaits
  readonly #stream: Partial<http2.ServerHttp2Stream> | undefined
  #inFlightBytes = 0
  /** When this stream last delivered a message, or began to wait with nothing in flight. */
  #progressAt = performance.now()
  /** Called when a message has left, so a wait can look again. */
  #onProgress: (() => void) | undefined

  /** `waits` are aborted when the client cancels or the stream is reset. */
  constructor(call: grpc.ServerWritableStream<unknown, unknown>, waits: AbortableWaits) {
    this.#call = call
    this.#waits = waits
    this.#stream = http2StreamOf(call)
  }

  /** Writes one encoded message; resolves once no more than the high-water mark is in flight. */
  write(message: Buffer): Promise<WriteOutcome> {
    if (this.#inFlightBytes === 0) this.#progressAt = performance.now()
    this.#inFlightBytes += message.length
    this.#call.write(message, () => {
      this.#inFlightBytes -= message.length
      this.#progressAt = performance.now()
      const session = this.#stream?.session
      if (session) connectionProgress.set(session, this.#progressAt)
      this.#onProgress?.()
    })
    return this.#waitUntilInFlight(GRPC_HIGH_WATER_BYTES)
  }

  /** Resolves once the client has taken every message (or the call is cancelled). */
  flushed(): Promise<WriteOutcome> {
    return this.#waitUntilInFlight(0)
  }

  async #waitUntilInFlight(limit: number): Promise<WriteOutcome> {
    while (this.#inFlightBytes > limit) {
      if (this.#call.cancelled || this.#waits.aborted) return 'cancelled'
      const allowanceMs = IDLE_CLIENT_MS + (this.#inFlightBytes / MIN_READ_BYTES_PER_SECOND) * MS_PER_SECOND
      const idleMs = performance.now() - this.#lastProgressAt()
      if (idleMs >= allowanceMs && this.#stream) {
        // The reset emits the call's 'cancelled', which ends the call as a client's cancel does.
        resetStream(this.#stream)
        return 'cancelled'
      }
      let timer: NodeJS.Timeout | undefined
      const progress = new Promise<'progress'>((resolve) => {
        this.#onProgress = () => resolve('progress')
        // Without the stream (another grpc-js) there is nothing to reset: the call waits for its client.
        if (this.#stream) timer = setTimeout(resolve, allowanceMs - idleMs, 'progress')
      })
      try {
        if ((await this.#waits.wait(progress)) === 'aborted') return 'cancelled'
      } finally {
        clearTimeout(timer)
        this.#onProgress = undefined
      }
    }
    return this.#call.cancelled ? 'cancelled' : 'written'
  }

  #lastProgressAt(): number {
    const session = this.#stream?.session
    return Math.max(this.#progressAt, (session && connectionProgress.get(session)) ?? 0)
  }
}

/**
 * The HTTP/2 stream grpc-js serves the call on. grpc-js has no way for a handler to reset
 * its stream or see its connection, so this reaches them (grpc-js 1.14, pinned:
 * ServerWritableStreamImpl.call is the BaseServerInterceptingCall, whose `stream` is the
 * Http2Stream, when no interceptor is configured, and memsvc configures none).
 */
function http2StreamOf(
  call: grpc.ServerWritableStream<unknown, unknown>,
): Partial<http2.ServerHttp2Stream> | undefined {
  const stream = (call as unknown as { call?: { stream?: Partial<http2.ServerHttp2Stream> } }).call?.stream
  return typeof stream?.close === 'function' && 'rstCode' in stream ? stream : undefined
}

function resetStream(stream: Partial<http2.ServerHttp2Stream>): void {
  if (!stream.destroyed) stream.close?.(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM)
}
