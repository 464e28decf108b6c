import type { HttpResponse } from 'uWebSockets.js'

/**
 * Writes bytes (a document as it was uploaded) on a uWS response whose status and headers
 * have gone out, slice by slice: when uWS reports backpressure nothing more is written, nor
 * read from the source, until onWritable says the socket drained, so a client that reads
 * slowly holds one slice in uWS and one stored part here, never the whole file. A client
 * that takes nothing for STALLED_BINARY_WRITE_MS is disconnected.
 */

/** The most handed to uWS at once. */
const BINARY_SLICE_BYTES = 64 * 1024
const STALLED_BINARY_WRITE_MS = 30_000

export class BinaryStreamWriter {
  readonly #res: HttpResponse
  #aborted = false
  #drained: (() => void) | undefined

  constructor(res: HttpResponse) {
    this.#res = res
    res.onWritable(() => {
      const drained = this.#drained
      this.#drained = undefined
      drained?.()
      return true
    })
  }

  /** The client went away: the response may no longer be touched. */
  abort(): void {
    this.#aborted = true
    this.#drained?.()
  }

  /** Writes every part, then ends the response; 'aborted' when the client left (or stalled) first. */
  async run(writeHead: () => void, parts: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<'ended' | 'aborted'> {
    let head: (() => void) | undefined = writeHead
    for await (const part of parts) {
      for (let offset = 0; offset < part.length; offset += BINARY_SLICE_BYTES) {
        if (this.#aborted) return 'aborted'
        const slice = part.subarray(offset, offset + BINARY_SLICE_BYTES)
        let accepted = true
        this.#res.cork(() => {
          head?.()
          head = undefined
          accepted = this.#res.write(slice)
        })
        if (!accepted && !(await this.#drain())) return 'aborted'
      }
    }
    if (this.#aborted) return 'aborted'
    this.#res.cork(() => {
      head?.()
      this.#res.end()
    })
    return 'ended'
  }

  /** Waits for the socket to take what uWS holds; false when the client left or stalled. */
  async #drain(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const drained = await new Promise<boolean>((resolve) => {
      this.#drained = () => resolve(!this.#aborted)
      timer = setTimeout(() => resolve(false), STALLED_BINARY_WRITE_MS)
    })
    clearTimeout(timer)
    if (!drained && !this.#aborted) {
      this.#aborted = true
      this.#res.close()
    }
    return drained
  }
}
