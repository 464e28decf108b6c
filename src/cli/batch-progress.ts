// Progress of `memsvc memory create-batch`, one line per file, on stderr (stdout keeps the
// summary table or the JSON). On a terminal the lines of the files still under way are
// redrawn in place below the finished ones; anywhere else (a pipe, a log, CI) a line is
// printed when a file's stage changes, and within a stage at most every LINE_INTERVAL_MS,
// so a log shows every step without a line per megabyte.
import { fitToWidth } from './table.js'

/** How often the terminal is redrawn at most: smooth enough, and no flicker. */
const REDRAW_INTERVAL_MS = 100
/** Without a terminal, a stage's progress (e.g. "OCR page 2/3") is repeated at most this often. */
const LINE_INTERVAL_MS = 2_000
/** Lines of the terminal kept free below the live lines (the prompt, a line being wrapped). */
const SPARE_ROWS = 2
const MIN_LIVE_ROWS = 3
const CURSOR_UP_TO_LINE_START = (lines: number) => `\u001b[${lines}F`
const CLEAR_TO_END_OF_SCREEN = '\u001b[0J'

/**
 * One step of a file: `stage` names it (uploading, extracting, ocr, embedding, done…), `text`
 * says it for people ("OCR page 2/3"). `final` marks the last: the line stops changing.
 */
export interface FileProgress {
  stage: string
  text: string
  final?: boolean
}

interface FileLine {
  file: string
  current?: FileProgress
  printedStage?: string
  printedAt: number
}

export interface ProgressOutput {
  write(text: string): void
  isTTY?: boolean
  columns?: number
  rows?: number
}

export class BatchProgress {
  readonly #output: ProgressOutput
  readonly #lines = new Map<string, FileLine>()
  readonly #live: boolean
  /** Files finished but not yet printed above the live lines (terminal only). */
  #finishedToPrint: string[] = []
  #drawnLines = 0
  #redrawTimer: NodeJS.Timeout | undefined

  constructor(files: string[], output: ProgressOutput = process.stderr) {
    this.#output = output
    this.#live = output.isTTY === true
    for (const file of files) this.#lines.set(file, { file, printedAt: 0 })
  }

  update(file: string, progress: FileProgress): void {
    const line = this.#lines.get(file)
    if (!line || line.current?.final) return
    line.current = progress
    if (this.#live) {
      if (progress.final) this.#finishedToPrint.push(file)
      this.#scheduleRedraw()
      return
    }
    const now = Date.now()
    if (line.printedStage === progress.stage && !progress.final && now - line.printedAt < LINE_INTERVAL_MS) return
    line.printedStage = progress.stage
    line.printedAt = now
    this.#output.write(`${file}: ${progress.text}\n`)
  }

  /** The last redraw: every finished line printed, the live lines gone. */
  finish(): void {
    if (this.#redrawTimer) clearTimeout(this.#redrawTimer)
    this.#redrawTimer = undefined
    if (this.#live) this.#redraw(true)
  }

  #scheduleRedraw(): void {
    this.#redrawTimer ??= setTimeout(() => {
      this.#redrawTimer = undefined
      this.#redraw(false)
    }, REDRAW_INTERVAL_MS)
  }

  #redraw(last: boolean): void {
    const width = Math.max(1, (this.#output.columns ?? Number.POSITIVE_INFINITY) - 1)
    // A line longer than the terminal would wrap and throw the count of lines to move up off.
    const toWidth = (text: string) => (Number.isFinite(width) ? fitToWidth(text, width).trimEnd() : text)
    let text = this.#drawnLines > 0 ? CURSOR_UP_TO_LINE_START(this.#drawnLines) + CLEAR_TO_END_OF_SCREEN : ''
    for (const file of this.#finishedToPrint) text += `${toWidth(`${file}: ${this.#lines.get(file)!.current!.text}`)}\n`
    this.#finishedToPrint = []
    const live = last ? [] : this.#liveLines().map(toWidth)
    for (const line of live) text += `${line}\n`
    this.#drawnLines = live.length
    this.#output.write(text)
  }

  /** The files under way (started, not finished), as many as the terminal has rows for. */
  #liveLines(): string[] {
    const active = [...this.#lines.values()].filter((line) => line.current && !line.current.final)
    const rows = Math.max(MIN_LIVE_ROWS, (this.#output.rows ?? Number.POSITIVE_INFINITY) - SPARE_ROWS)
    const shown = active.length > rows ? active.slice(0, rows - 1) : active
    const lines = shown.map((line) => `${line.file}: ${line.current!.text}`)
    if (shown.length < active.length) lines.push(`… and ${active.length - shown.length} more under way`)
    return lines
  }
}
