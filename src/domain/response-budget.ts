import v8 from 'node:v8'

/**
 * The memory the server's streamed answers may hold at once, shared by every retrieval in
 * the process. Each retrieval reserves what it will hold while it streams (its chunk texts,
 * and a working set for the long texts it loads as it goes: domain/retrieval.ts) before its
 * first byte; one that does not fit is refused with a time to come back, so a burst of
 * large answers is turned away instead of running the heap out. A reservation is released
 * when its stream ends, however it ends.
 */

/**
 * The budget's share of V8's heap limit. The rest stays for everything else the process
 * holds (connections, caches, request bodies, the database client's buffers) and for the
 * collector's headroom: a heap near its limit spends its time collecting.
 */
export const HEAP_SHARE = 1 / 8
/** How long a refused caller is told to wait: streams typically finish, and free their share, within a second. */
export const RETRY_AFTER_SECONDS = 1

/** A share of the budget, held until `release` (which may be called more than once). */
export interface Reservation {
  readonly bytes: number
  release(): void
}

export class ResponseBudget {
  #reservedBytes = 0
  #reservations = 0

  /** `limitBytes`: by default HEAP_SHARE of the heap limit (--max-old-space-size moves both). */
  constructor(public limitBytes: number = Math.floor(v8.getHeapStatistics().heap_size_limit * HEAP_SHARE)) {}

  /** What the streams running now have reserved. */
  get reservedBytes(): number {
    return this.#reservedBytes
  }

  /** How many reservations are held. */
  get reservations(): number {
    return this.#reservations
  }

  /** Whether `bytes` more would fit now (a cheap check before work that would be refused anyway). */
  fits(bytes: number): boolean {
    // With nothing reserved anything fits: an answer larger than the whole budget is served alone, not never.
    return this.#reservations === 0 || this.#reservedBytes + bytes <= this.limitBytes
  }

  /** Reserves `bytes`, or answers undefined when they do not fit beside what is reserved. */
  tryReserve(bytes: number): Reservation | undefined {
    if (!this.fits(bytes)) return undefined
    this.#reservedBytes += bytes
    this.#reservations++
    let held = true
    return {
      bytes,
      release: () => {
        if (!held) return
        held = false
        this.#reservedBytes -= bytes
        this.#reservations--
      },
    }
  }
}
