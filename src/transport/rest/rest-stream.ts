import type { HttpResponse } from 'uWebSockets.js'
import type { AppError } from '../../errors/app-error.js'
import type { RestStream } from './rest-messages.js'

/**
 * Writes a streamed answer (RestStream) on a uWS response whose status and headers have
 * gone out, keeping uWS's rules for a long answer:
 * - pieces go out as soon as they arrive, but those that arrive together (without the
 *   source waiting on I/O, up to BATCH_LIMIT_BYTES) share one cork, so one write: a
 *   retrieval's items are all known at once, and a write per item was a system call each;
 *   the end of the answer shares the last pieces' cork;
 * - when uWS reports backpressure (write() returns false) nothing more is written until
 *   onWritable says the socket drained;
 * - a heartbeat goes out when nothing else has for HEARTBEAT_MS, so a client or proxy with
 *   an idle timeout keeps a connection open that is waiting for a slow LLM answer;
 * - when the client goes away the pieces stop being pulled (their source's `return()` runs,
 *   which cancels whatever work feeds them).
 * The owner (RestExchange) registers onAborted and tells the writer through `abort()`.
 */

/** Well under the 10 s idle timeouts of uWS and of common proxies and clients. */
export const HEARTBEAT_MS = 5_000
/** Pieces held for one write are sent once they reach this size, whatever comes next. */
export const BATCH_LIMIT_BYTES = 64 * 1024

/** Resolves once the event loop has run everything already queued (after microtasks and pending I/O callbacks). */
const nextTurn = () => new Promise<'turn'>((resolve) => setImmediate(resolve, 'turn'))

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((settle) => (resolve = settle))
  return { promise, resolve }
}

export class RestStreamWriter {
  readonly #res: HttpResponse
  readonly #stream: RestStream
  #aborted = false
  #lastWriteAt = Date.now()
  /** Set while a write is held back by backpressure; resolves once the socket drains or the client leaves. */
  #drained: Deferred<void> | undefined
  readonly #abortedSignal = deferred<'aborted'>()

  constructor(res: HttpResponse, stream: RestStream) {
    this.#res = res
    this.#stream = stream
    res.onWritable(() => this.#onWritable())
  }

  /** The client went away: the response may no longer be touched. */
  abort(): void {
    this.#aborted = true
    this.#drained?.resolve()
    this.#abortedSignal.resolve('aborted')
  }

  /**
   * Writes `first` (already pulled, with the status line and headers in `writeHead`) and
   * then every further piece; resolves when the answer has ended or the client left.
   * `onInternalError` logs an unexpected failure and gives the error to report in-band.
   */
  async run(
    writeHead: () => void,
    first: string,
    onInternalError: (error: unknown) => AppError,
  ): Promise<'ended' | 'aborted'> {
    const heartbeat = setInterval(() => this.#beat(), HEARTBEAT_MS)
    let held = first
    let head: (() => void) | undefined = writeHead
    const flush = async () => {
      const piece = held
      held = ''
      const before = head
      head = undefined
      if (piece !== '' || before) await this.#send(piece, before)
    }
    try {
      let turn = nextTurn()
      for (;;) {
        if (this.#aborted) return 'aborted'
        const next = this.#stream.pieces.next()
        let result: IteratorResult<string> | 'aborted' | 'turn'
        try {
          result = await Promise.race([next, this.#abortedSignal.promise, turn])
          if (result === 'turn') {
            // The source is waiting on I/O: what it gave so far goes out now.
            await flush()
            turn = nextTurn()
            result = await Promise.race([next, this.#abortedSignal.promise])
          }
        } catch (error) {
          if (this.#aborted) return 'aborted'
          held += this.#stream.failurePiece(onInternalError(error))
          break
        }
        if (result === 'aborted' || this.#aborted) return 'aborted'
        if (result.done) break
        held += result.value
        if (held.length >= BATCH_LIMIT_BYTES) await flush()
      }
      if (this.#aborted) return 'aborted'
      if (this.#drained) await this.#drained.promise
      if (this.#aborted) return 'aborted'
      this.#lastWriteAt = Date.now()
      this.#res.cork(() => {
        head?.()
        if (held !== '') this.#res.write(held)
        this.#res.end()
      })
      return 'ended'
    } finally {
      clearInterval(heartbeat)
      // Stops the source (and the work behind it) when the loop left early; a finished source ignores it.
      if (this.#aborted) void this.#stream.pieces.return?.().catch(() => {})
    }
  }

  /** Writes a piece once any earlier backpressure has drained, and waits for its own to. */
  async #send(piece: string, before?: () => void): Promise<void> {
    if (this.#drained) await this.#drained.promise
    if (!this.#write(piece, before)) await this.#waitForDrain()
  }

  /** One piece in one cork; false when uWS buffered part of it (backpressure). */
  #write(piece: string, before?: () => void): boolean {
    if (this.#aborted) return true
    this.#lastWriteAt = Date.now()
    let written = true
    this.#res.cork(() => {
      before?.()
      written = this.#res.write(piece)
    })
    return written
  }

  #waitForDrain(): Promise<void> {
    if (this.#aborted) return Promise.resolve()
    this.#drained ??= deferred<void>()
    return this.#drained.promise
  }

  /**
   * uWS calls this once the socket can take more. What it buffered is only sent on the next
   * write, so a heartbeat is written here to flush it (without it, items written just before
   * a long wait would sit in the buffer until the wait ends).
   */
  #onWritable(): boolean {
    if (this.#aborted || !this.#drained) return true
    if (!this.#write(this.#stream.heartbeat)) return false
    const drained = this.#drained
    this.#drained = undefined
    drained.resolve()
    return true
  }

  #beat(): void {
    if (this.#aborted || this.#drained || Date.now() - this.#lastWriteAt < HEARTBEAT_MS) return
    if (!this.#write(this.#stream.heartbeat)) void this.#waitForDrain()
  }
}
