import type { HttpResponse } from 'uWebSockets.js'
import { AppError } from '../../errors/app-error.js'

/**
 * A request body handed to the handler as it arrives (uploads), instead of read whole first.
 * uWS delivers it through onData, registered at once; the socket is paused whenever more than
 * HIGH_WATER_BYTES wait for the handler, and resumed when it has taken them down to
 * LOW_WATER_BYTES, so a large upload holds at most about that much here, whatever its size.
 * Past `maxBytes` the iteration fails with 413; when the client goes away, with UNAVAILABLE.
 */

const HIGH_WATER_BYTES = 4 * 1024 * 1024
const LOW_WATER_BYTES = 1024 * 1024

export class StreamedBody implements AsyncIterable<Buffer> {
  readonly #res: HttpResponse
  readonly #maxBytes: number
  readonly #queue: Buffer[] = []
  #queuedBytes = 0
  #received = 0
  #ended = false
  #error: AppError | undefined
  #paused = false
  #wake: (() => void) | undefined
  /** Told when the last byte has arrived (the exchange may then answer without closing the connection). */
  onEnd: () => void = () => {}

  constructor(res: HttpResponse, maxBytes: number) {
    this.#res = res
    this.#maxBytes = maxBytes
    res.onData((chunk, isLast) => this.#take(chunk, isLast))
  }

  /** Holds the socket until the handler starts reading (the API key is checked first). */
  pause(): void {
    if (this.#paused) return
    this.#paused = true
    this.#res.pause()
  }

  /**
   * The answer is about to be written: a paused socket is resumed, so that the connection
   * reads its next request (or, when the answer closes it, drains what the client still sends).
   * uWS resets a connection whose socket is resumed while not paused: only a paused one is.
   */
  release(): void {
    if (!this.#paused) return
    this.#paused = false
    this.#res.resume()
  }

  /** The client went away. */
  abort(): void {
    this.#error ??= new AppError('UNAVAILABLE', 'the client disconnected before the body was complete')
    this.#notify()
  }

  #take(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.#error) return
    this.#received += chunk.byteLength
    if (this.#received > this.#maxBytes) {
      this.#error = new AppError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${this.#maxBytes} bytes`)
    } else {
      // uWS reuses the chunk's memory after this callback returns: copy it.
      if (chunk.byteLength > 0) this.#queue.push(Buffer.from(new Uint8Array(chunk)))
      this.#queuedBytes += chunk.byteLength
      // A paused socket still delivers the rest of uSockets' current read loop (up to a few MiB), and
      // uWS re-arms its 10 s idle timeout for each such chunk: pausing again disarms it, or a
      // handler slower than that to take the queue down (an import) would have the connection closed.
      if (this.#paused) this.#res.pause()
      else if (this.#queuedBytes > HIGH_WATER_BYTES) this.pause()
      if (isLast) {
        this.#ended = true
        this.onEnd()
      }
    }
    this.#notify()
  }

  #notify(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      const chunk = this.#queue.shift()
      if (chunk) {
        this.#queuedBytes -= chunk.length
        // Not once the last byte is in: uWS's resume() arms its 10 s idle timeout, and with nothing
        // left to arrive, a handler still working through the queue (an import) would be cut off.
        if (this.#paused && this.#queuedBytes <= LOW_WATER_BYTES && !this.#error && !this.#ended) {
          this.#paused = false
          this.#res.resume()
        }
        yield chunk
        continue
      }
      if (this.#error) throw this.#error
      if (this.#ended) return
      if (this.#paused) {
        this.#paused = false
        this.#res.resume()
      }
      await new Promise<void>((resolve) => (this.#wake = resolve))
    }
  }
}
