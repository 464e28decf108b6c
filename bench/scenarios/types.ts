import type { BenchDatabase } from '../lib/database.js'
import type { Fixtures } from '../lib/fixtures.js'
import type { LoadResult } from '../lib/load-result.js'
import type { RunningServer } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import type { RssSampler } from '../lib/rss-sampler.js'

/** Everything a scenario needs from the run. */
export interface BenchContext {
  options: BenchOptions
  server: RunningServer
  metricsSecret: string
  fixtures: Fixtures
  database: BenchDatabase
  /** Scratch directory of this run (request bodies, frames). */
  workDir: string
  rss: RssSampler
  /** With --cpu-prof: floors write their profiles here too, to compare with memsvc's. */
  floorProfileDir?: string
}

/** One row of the table: the product divided by its floor, measured in the same run. */
export interface Comparison {
  id: string
  measure: string
  floor: string
  target: number
  product: LoadResult
  floorResult: LoadResult
  ratio: number
  /** Every round, in the order they ran; the best of each side is what counts. */
  rounds: Array<{ side: 'product' | 'floor'; result: LoadResult }>
  notes: string[]
}

export interface SoakSample {
  /** Seconds since the soak's first sample. */
  atSeconds: number
  rate: number
  /** rate divided by the first sample's rate. */
  ratio: number
  /** CPU time of the server per request in this interval. */
  cpuUsPerRequest: number
  /**
   * The first interval's CPU per request divided by this one's: below 1 when each
   * request costs more (what a degrading queue does), and much less sensitive than the
   * rate to other work on the machine.
   */
  cpuRatio: number
  /** The machine's 1-minute load average at the sample. */
  loadavg1: number
  rssMiB?: number
}

export interface SoakResult {
  id: string
  measure: string
  target: number
  sampleSeconds: number
  samples: SoakSample[]
  /** The lowest sample ratio (the first sample excluded: it is 1 by definition). */
  minRatio: number
  /** The lowest cpuRatio, likewise. */
  minCpuRatio: number
  /** wrk's whole-run result (rate and latency over the soak). */
  load: LoadResult
  notes: string[]
}
