import type { BenchDatabase } from '../lib/database.js'
import type { Fixtures } from '../lib/fixtures.js'
import type { LoadResult } from '../lib/load-result.js'
import type { RunningServer, Sandbox } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import type { ReportRow } from '../lib/report.js'
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
  /** With --cpu-prof: where memsvc's profiles go (the soak adds its first and last window's). */
  profileDir?: string
}

/** One row of the table: the product divided by its floor, measured in the same run. */
export interface Comparison {
  id: string
  measure: string
  floor: string
  /** Absent for a ratio reported beside another floor's, without a target of its own. */
  target?: number
  product: LoadResult
  floorResult: LoadResult
  ratio: number
  /** Every run of the product and of this floor, in the order they ran; the best of each side is what counts. */
  rounds: Array<{ side: 'product' | 'floor'; floor?: string; result: LoadResult }>
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
   * This interval's CPU per request divided by the first one's: above 1 when each request
   * costs more (what a degrading queue does); less sensitive than the rate to other work on
   * the machine, as long as the server kept its core busy (see coreShare).
   */
  cpuGrowth: number
  /**
   * The server's CPU seconds per second in the interval (1 = its whole core). Below about
   * 0.8 something else (wrk, PostgreSQL) limited the rate, and the CPU per request then
   * rises with fewer requests handled per event-loop wake-up, not with more work each.
   */
  coreShare: number
  /** CPU time of the database's own PostgreSQL backends per request in the interval. */
  databaseCpuUsPerRequest: number
  /** Share of the interval memsvc spent in garbage collection, and its JS heap in use at the sample (memsvc only). */
  gcShare?: number
  heapUsedMiB?: number
  /** The lowest JS heap in use read during the interval (memsvc only; read every 2 s besides the sample). */
  heapLowMiB?: number
  /** The machine's 1-minute load average at the sample. */
  loadavg1: number
  rssMiB?: number
}

/** A series' least-squares line over a soak (bench/lib/trend.ts). */
export interface SoakLineTrend {
  slopePerSecond: number
  slopeStandardError: number
  mean: number
  /** The line's change over 10 minutes as a fraction of the series' mean (+0.05: +5 % per 10 minutes). */
  changePer10Min: number
  /** The most changePer10Min may be. */
  target: number
}

/**
 * What the soak is judged by: trends over the whole run, where one interval's worst value
 * mostly says what else the machine was doing (bench/README.md, "The soak's trend").
 */
export interface SoakTrends {
  /** CPU µs per request of the server under test. */
  cpu?: SoakLineTrend
  /** RSS of the server under test. */
  rss?: SoakLineTrend
  /** JS heap in use (memsvc only): the lowest reading of the last third against the first third's. */
  heap?: { firstLowestMiB: number; lastLowestMiB: number; riseMiB: number; targetMiB: number }
}

export interface SoakResult {
  id: string
  measure: string
  sampleSeconds: number
  samples: SoakSample[]
  /** The lowest sample ratio (the first sample excluded: it is 1 by definition). Reported, not judged. */
  minRatio: number
  /** The highest cpuGrowth (the first sample excluded). Reported, not judged. */
  maxCpuGrowth: number
  trends: SoakTrends
  /** The trends' targets are for soaks of 10 minutes or more (--long); a shorter soak's are reported unjudged. */
  judged: boolean
  /** wrk's whole-run result (rate and latency over the soak). */
  load: LoadResult
  notes: string[]
}

/** What a separate benchmark mode (--scale, --processes) gets from the run; it starts its own servers. */
export interface ModeContext {
  options: BenchOptions
  /** dist/memsvc. */
  executable: string
  database: BenchDatabase
  sandbox: Sandbox
  /** Scratch directory of this run. */
  workDir: string
  log(line: string): void
}

/** Filled in as the mode goes, so that a run failing part-way still reports what it measured. */
export interface ModeReport {
  rows: ReportRow[]
  /** Markdown paragraphs after the table: the mode's own detailed tables and notes. */
  extra: string[]
}

export interface BenchMode {
  /** Report file prefix, e.g. `scale-` for results/scale-latest.md. */
  prefix: string
  /** The run's mode line (what was run, how long, which pools). */
  describe(options: BenchOptions): string
  /** Which process ran on which core. */
  pinning: string
  /** It loads the server with wrk (and so needs wrk and h2load installed). */
  usesWrk: boolean
  run(context: ModeContext, report: ModeReport): Promise<void>
}
