// Progress of one long transfer (space export and import) as a single line on stderr, so that
// stdout keeps the data or the summary. On a terminal the line is redrawn in place; anywhere
// else (a pipe, a log, CI) a new line is written at most every LINE_INTERVAL_MS, and one for
// every notice (a resume), so a log tells what happened without a line per megabyte.
import type { ProgressOutput } from './batch-progress.js'
import { fitToWidth } from './table.js'

/** How often the terminal line is redrawn at most. */
const REDRAW_INTERVAL_MS = 100
/** Without a terminal, a progress line at most this often. */
const LINE_INTERVAL_MS = 2_000
const CARRIAGE_RETURN_CLEAR_LINE = '\r\u001b[2K'

export class TransferProgress {
  readonly #output: ProgressOutput
  readonly #live: boolean
  #lastWrittenAt = 0
  #pending: string | undefined
  #onScreen = false

  constructor(output: ProgressOutput = process.stderr) {
    this.#output = output
    this.#live = output.isTTY === true
  }

  /** The current state ("exported 1,200 memories, 48.3 MB"); written now or soon, never faster than the interval. */
  update(text: string): void {
    const now = Date.now()
    const interval = this.#live ? REDRAW_INTERVAL_MS : LINE_INTERVAL_MS
    if (now - this.#lastWrittenAt < interval) {
      this.#pending = text
      return
    }
    this.#write(text)
    this.#lastWrittenAt = now
    this.#pending = undefined
  }

  /** A line that stays (a resume, a warning), above the live line on a terminal. */
  notice(text: string): void {
    this.#clear()
    this.#output.write(`${text}\n`)
  }

  /** The last state, written whatever the interval, and the live line ended so the next output starts clean. */
  finish(text?: string): void {
    const last = text ?? this.#pending
    if (last !== undefined) this.#write(last)
    if (this.#live && this.#onScreen) this.#output.write('\n')
    this.#onScreen = false
    this.#pending = undefined
  }

  #write(text: string): void {
    if (!this.#live) {
      this.#output.write(`${text}\n`)
      return
    }
    const width = Math.max(1, (this.#output.columns ?? Number.POSITIVE_INFINITY) - 1)
    const line = Number.isFinite(width) ? fitToWidth(text, width).trimEnd() : text
    this.#output.write(`${CARRIAGE_RETURN_CLEAR_LINE}${line}`)
    this.#onScreen = true
  }

  #clear(): void {
    if (this.#live && this.#onScreen) this.#output.write(CARRIAGE_RETURN_CLEAR_LINE)
    this.#onScreen = false
  }
}
