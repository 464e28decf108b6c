// RSS of the server under test, sampled while load runs: the peak is "RSS under load".
import { rssMiB } from './machine.js'

const SAMPLE_MS = 500

export class RssSampler {
  #peakMiB = 0
  #timer: NodeJS.Timeout | undefined

  constructor(readonly pid: number) {}

  /** Samples while `work` runs. */
  during<T>(work: Promise<T>): Promise<T> {
    this.#sample()
    this.#timer ??= setInterval(() => this.#sample(), SAMPLE_MS)
    return work.finally(() => {
      this.#sample()
      clearInterval(this.#timer)
      this.#timer = undefined
    })
  }

  now(): number | undefined {
    return rssMiB(this.pid)
  }

  get peakMiB(): number {
    return this.#peakMiB
  }

  #sample(): void {
    const value = rssMiB(this.pid)
    if (value !== undefined) this.#peakMiB = Math.max(this.#peakMiB, value)
  }
}
