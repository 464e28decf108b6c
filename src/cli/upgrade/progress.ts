// The download progress line on stderr. On a terminal it redraws one line; in a log
// (no TTY) it writes a line at each quarter so that logs stay short.
const KB = 1024
const MB = KB * KB
const REDRAW_INTERVAL_MS = 100
const LOG_STEPS = 4

const megabytes = (bytes: number) => (bytes >= MB ? `${(bytes / MB).toFixed(1)} MB` : `${(bytes / KB).toFixed(1)} kB`)

export class Progress {
  readonly #started = Date.now()
  readonly #tty: boolean
  #lastDraw = 0
  #lastStep = -1
  #drawn = false

  constructor(
    readonly what: string,
    readonly total: number | undefined,
    readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.#tty = stream.isTTY === true
    stream.write(`downloading ${what}${total === undefined ? '' : ` (${megabytes(total)})`}\n`)
  }

  #line(bytes: number): string {
    const percent = this.total ? ` ${Math.floor((bytes / this.total) * 100)}%` : ''
    return `  ${megabytes(bytes)}${this.total ? ` of ${megabytes(this.total)}` : ''}${percent}`
  }

  update(bytes: number): void {
    if (this.#tty) {
      const now = Date.now()
      if (now - this.#lastDraw < REDRAW_INTERVAL_MS) return
      this.#lastDraw = now
      this.stream.write(`\r${this.#line(bytes)}\u001b[K`)
      this.#drawn = true
      return
    }
    if (!this.total) return
    const step = Math.floor((bytes / this.total) * LOG_STEPS)
    if (step > this.#lastStep && step < LOG_STEPS) {
      this.#lastStep = step
      this.stream.write(`${this.#line(bytes)}\n`)
    }
  }

  done(bytes: number): void {
    if (this.#drawn) this.stream.write('\r\u001b[K')
    const seconds = ((Date.now() - this.#started) / 1000).toFixed(1)
    this.stream.write(`downloaded ${megabytes(bytes)} in ${seconds} s\n`)
  }

  abort(): void {
    if (this.#drawn) this.stream.write('\n')
  }
}
