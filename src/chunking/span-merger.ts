import type { SpanSink } from './text-spans.js'

/** Pieces dropped from the front of the window are reclaimed once there are this many and more than half. */
const COMPACT_AFTER = 4_096

/**
 * Joins consecutive pieces, each at most chunkSize long, into chunks of at most chunkSize;
 * each new chunk starts with the last pieces of the one before, up to chunkOverlap, so
 * context carries across. Pieces come one at a time and chunks leave as soon as they are
 * whole: only the window of pieces that may still be repeated is kept.
 */
export class SpanMerger {
  // The window: pieces [head, starts.length) of two parallel arrays, so that dropping from the front is a step of head.
  #starts: number[] = []
  #ends: number[] = []
  #head = 0

  constructor(
    private readonly chunkSize: number,
    private readonly chunkOverlap: number,
    private readonly emit: SpanSink,
  ) {}

  add(start: number, end: number): void {
    const starts = this.#starts
    const last = starts.length - 1
    if (this.#head <= last && end - starts[this.#head]! > this.chunkSize) {
      const windowEnd = this.#ends[last]!
      this.emit(starts[this.#head]!, windowEnd)
      // Keep a tail no longer than the overlap, and short enough for the next piece to fit.
      while (
        this.#head <= last &&
        (windowEnd - starts[this.#head]! > this.chunkOverlap || end - starts[this.#head]! > this.chunkSize)
      )
        this.#head++
      if (this.#head >= COMPACT_AFTER && this.#head * 2 > starts.length) this.#compact()
    }
    this.#starts.push(start)
    this.#ends.push(end)
  }

  /** Sends what is left as the last chunk; the merger is then empty. */
  flush(): void {
    if (this.#head < this.#starts.length) this.emit(this.#starts[this.#head]!, this.#ends[this.#ends.length - 1]!)
    this.#starts = []
    this.#ends = []
    this.#head = 0
  }

  #compact() {
    this.#starts = this.#starts.slice(this.#head)
    this.#ends = this.#ends.slice(this.#head)
    this.#head = 0
  }
}
