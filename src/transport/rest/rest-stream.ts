import type { HttpResponse } from 'uWebSockets.js'
import type { AppError } from '../../errors/app-error.js'
import { AbortableWaits } from '../abortable-waits.js'
import type { RestStream } from './rest-messages.js'

/**
 * Writes a streamed answer (RestStream) on a uWS response whose status and headers have
 * gone out, keeping uWS's rules for a long answer:
 * - pieces go out as soon as they arrive, but those that arrive together (without the
 *   source waiting on I/O, up to BATCH_LIMIT_BYTES) share one cork, so one write: a
 *   retrieval's items are all known at once, and a write per item was a system call each;
 *   the end of the answer shares the last pieces' cork;
 * - a piece is handed to uWS in slices of at most WRITE_SLICE_CHARS, and when uWS reports
 *   backpressure (write() returns false) nothing more is written, nor pulled from the
 *   source, until onWritable says the socket drained: uWS holds at most about one slice of
 *   an answer its client reads slowly, and the source (which loads long texts as it is
 *   pulled) waits with it, instead of the answer piling up in the server;
 * - a client that takes nothing is disconnected by uWS 10 s after a write it could not take
 *   (its idle timeout); one that reads so slowly that a slice stays undelivered for
 *   STALLED_WRITE_MS is disconnected here, so a reader that trickles cannot hold its answer's
 *   memory for ever;
 * - a heartbeat goes out when nothing else has for HEARTBEAT_MS, so a client or proxy with
 *   an idle timeout keeps a connection open that is waiting for a slow LLM answer;
 * - when the client goes away, or the answer cannot be written, the pieces stop being pulled
 *   (their source's `return()` runs, which cancels whatever work feeds them and gives back
 *   what they hold).
 * The owner (RestExchange) registers onAborted and tells the writer through `abort()`.
 */

/** Well under the 10 s idle timeouts of uWS and of common proxies and clients. */
export const HEARTBEAT_MS = 5_000
/** Pieces held for one write are sent once they reach this size, whatever comes next. */
export const BATCH_LIMIT_BYTES = 64 * 1024
/**
 * The most of a piece handed to uWS at once (a memory's content is one piece of up to 4 MiB):
 * the high-water mark of what uWS buffers for a client that reads slowly, 64 KiB of ASCII.
 */
export const WRITE_SLICE_CHARS = 64 * 1024
/** A slice the client has not taken in this long ends the answer: below about 2 KiB/s, the reader is not keeping up. */
export const STALLED_WRITE_MS = 30_000
/**
 * What onWritable writes of a piece while uWS may still hold part of the slice before it: a
 * write is the only way to flush uWS's buffer, and a whole slice each time the socket took a
 * little would let the buffer grow past the high-water mark. Once uWS takes this at once, its
 * buffer is empty and the piece goes on slice by slice.
 */
const FLUSH_WRITE_CHARS = 256

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

/** Where the slice from `start` ends: `size` characters on, but never between the two halves of a surrogate pair. */
function sliceEnd(piece: string, start: number, size: number): number {
  const end = start + size
  if (end >= piece.length) return piece.length
  const last = piece.charCodeAt(end - 1)
  return last >= 0xd800 && last <= 0xdbff ? end - 1 : end
}

/** A piece being handed to uWS slice by slice. */
interface PendingPiece {
  piece: string
  offset: number
  /** Writes the status line and headers before the first slice. */
  before?: () => void
}

export class RestStreamWriter {
  readonly #res: HttpResponse
  readonly #stream: RestStream
  #aborted = false
  #lastWriteAt = Date.now()
  /** Set while a write is held back by backpressure; resolves once the socket drains or the client leaves. */
  #drained: Deferred<void> | undefined
  /** The rest of a piece that uWS has not been given yet, while it waits for the socket. */
  #pending: PendingPiece | undefined
  /** Ends the answer when the socket stays full for STALLED_WRITE_MS. */
  #stallTimer: NodeJS.Timeout | undefined
  /** The waits for the source, ended when the client leaves. */
  readonly #waits = new AbortableWaits()

  constructor(res: HttpResponse, stream: RestStream) {
    this.#res = res
    this.#stream = stream
    res.onWritable(() => this.#onWritable())
  }

  /** The client went away: the response may no longer be touched. */
  abort(): void {
    this.#aborted = true
    this.#pending = undefined
    clearTimeout(this.#stallTimer)
    this.#drained?.resolve()
    this.#waits.abort()
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
    let sourceEnded = false
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
          result = await Promise.race([this.#waits.wait(next), turn])
          if (result === 'turn') {
            // The source is waiting on I/O: what it gave so far goes out now.
            await flush()
            turn = nextTurn()
            result = await this.#waits.wait(next)
          }
        } catch (error) {
          sourceEnded = true
          if (this.#aborted) return 'aborted'
          held += this.#stream.failurePiece(onInternalError(error))
          break
        }
        if (result === 'aborted' || this.#aborted) return 'aborted'
        if (result.done) {
          sourceEnded = true
          break
        }
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
      clearTimeout(this.#stallTimer)
      // Stops the source (and the work behind it) when the loop left early: the client left, or a write threw.
      if (!sourceEnded) void this.#stream.pieces.return?.().catch(() => {})
    }
  }

  /** Writes a piece once any earlier backpressure has drained, and waits for its own to. */
  async #send(piece: string, before?: () => void): Promise<void> {
    if (this.#drained) await this.#drained.promise
    this.#pending = { piece, offset: 0, before }
    if (!this.#pump()) await this.#waitForDrain()
  }

  /** Hands uWS the pending piece's slices while it takes them whole; false when it buffered one (backpressure). */
  #pump(): boolean {
    while (this.#pending && !this.#aborted) if (!this.#writeSlice(this.#pending, WRITE_SLICE_CHARS)) return false
    return true
  }

  /** The next `size` characters of the pending piece; false when uWS buffered part of what it holds. */
  #writeSlice(pending: PendingPiece, size: number): boolean {
    const end = sliceEnd(pending.piece, pending.offset, size)
    const whole = pending.offset === 0 && end === pending.piece.length
    const slice = whole ? pending.piece : pending.piece.slice(pending.offset, end)
    const before = pending.before
    pending.before = undefined
    pending.offset = end
    if (end === pending.piece.length) this.#pending = undefined
    return this.#write(slice, before)
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
    this.#armStallTimer()
    return this.#drained.promise
  }

  /** (Re)starts the wait for the slice just buffered. */
  #armStallTimer(): void {
    clearTimeout(this.#stallTimer)
    this.#stallTimer = setTimeout(() => this.#closeStalled(), STALLED_WRITE_MS)
  }

  /** The client has not taken a slice in STALLED_WRITE_MS: the connection goes, and uWS's onAborted ends the answer. */
  #closeStalled(): void {
    if (this.#aborted || !this.#drained) return
    try {
      this.#res.close()
    } catch {
      // Already closed by uWS: onAborted has run or is about to.
    }
  }

  /**
   * uWS calls this once the socket can take more. What it buffered is only sent on the next
   * write: the rest of a piece goes out here, or a heartbeat between pieces, to flush it
   * (without it, items written just before a long wait would sit in the buffer until the
   * wait ends).
   */
  #onWritable(): boolean {
    if (this.#aborted || !this.#drained) return true
    if (this.#pending) {
      if (!this.#writeSlice(this.#pending, FLUSH_WRITE_CHARS)) return false
      // uWS's buffer is empty: the slice that waited has been delivered, the next one gets its own time.
      if (!this.#pump()) {
        this.#armStallTimer()
        return false
      }
    } else if (!this.#write(this.#stream.heartbeat)) return false
    clearTimeout(this.#stallTimer)
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
