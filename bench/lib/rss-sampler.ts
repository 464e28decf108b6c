// RSS of the server under test, sampled while load runs: the peak is "RSS under load". Given
// a way to read the server's own memory figures, it also reads them each time the RSS reaches
// a new peak, so that the report can say what the peak was made of.
import { type MetricsEndpoint, scrape, sumInScrape } from './counters.js'
import { rssMiB } from './machine.js'

const SAMPLE_MS = 500
/** A new peak is read in detail only when it is this much above the last one read (RSS creeps up by pages). */
const PEAK_READ_STEP_MIB = 1
const BYTES_PER_MIB = 1024 * 1024

/** One moment of a server's memory, in MiB; what its /metrics does not carry is left out. */
export interface MemorySnapshot {
  rssMiB?: number
  heapUsedMiB?: number
  heapTotalMiB?: number
  /** C++ objects bound to JS objects, ArrayBuffers and Buffers among them. */
  externalMiB?: number
  arrayBuffersMiB?: number
}

/** memsvc's memory now: RSS from /proc, the JS heap and external memory from its /metrics. */
export async function readMemory(pid: number, endpoint: MetricsEndpoint): Promise<MemorySnapshot> {
  const text = await scrape(endpoint)
  const mib = (name: string) =>
    text.includes(`\n${name} `) || text.startsWith(`${name} `) ? sumInScrape(text, name) / BYTES_PER_MIB : undefined
  return {
    rssMiB: rssMiB(pid),
    heapUsedMiB: mib('nodejs_heap_size_used_bytes'),
    heapTotalMiB: mib('nodejs_heap_size_total_bytes'),
    externalMiB: mib('nodejs_external_memory_bytes'),
    arrayBuffersMiB: mib('nodejs_array_buffers_bytes'),
  }
}

export class RssSampler {
  #peakMiB = 0
  #timer: NodeJS.Timeout | undefined
  #peakRead: MemorySnapshot | undefined
  #reading = false

  constructor(
    readonly pid: number,
    /** Reads the server's memory at a new peak (memsvc's /metrics); without it only the RSS is kept. */
    readonly read?: () => Promise<MemorySnapshot>,
  ) {}

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

  /** The server's memory read at (or within PEAK_READ_STEP_MIB of) the highest RSS seen. */
  get peakSnapshot(): MemorySnapshot | undefined {
    return this.#peakRead
  }

  #sample(): void {
    const value = rssMiB(this.pid)
    if (value === undefined) return
    this.#peakMiB = Math.max(this.#peakMiB, value)
    if (!this.read || this.#reading || value < (this.#peakRead?.rssMiB ?? 0) + PEAK_READ_STEP_MIB) return
    this.#reading = true
    this.read()
      .then((snapshot) => {
        if ((snapshot.rssMiB ?? 0) >= (this.#peakRead?.rssMiB ?? 0)) this.#peakRead = snapshot
      })
      // A scrape that fails under load leaves the last peak's figures; the RSS peak itself is still kept.
      .catch(() => {})
      .finally(() => {
        this.#reading = false
      })
  }
}
