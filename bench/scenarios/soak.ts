// Soak: one uninterrupted wrk load on the list endpoint, the server's own request count
// read every sample interval; each interval's rate is divided by the first one's. It is
// judged by its trends over the whole run (CPU per request, RSS, JS heap), not by its worst
// interval, which on a shared machine mostly says what else ran (postgres 3.4.9's unpatched
// queue makes the cost climb; docs/architecture.md).
// `--unpatched-soak` adds the same soak on the auth-lookup floor with the patched and
// with the original queue, to show the patch is what keeps it flat.

import os from 'node:os'
import path from 'node:path'
import { floorCount, routeCountInScrape, scrape, sumInScrape } from '../lib/counters.js'
import { startFloor } from '../lib/floors.js'
import { type LoadResult, withCpuPerRequest } from '../lib/load-result.js'
import { cpuSeconds, rssMiB } from '../lib/machine.js'
import { sleep } from '../lib/processes.js'
import { inspectorUrl, profileWindow } from '../lib/profile-window.js'
import { leastSquares, type Point, thirdsLowest } from '../lib/trend.js'
import { runWrk } from '../lib/wrk.js'
import { bearer, READ_CONNECTIONS } from './http-load.js'
import type { BenchContext, SoakLineTrend, SoakResult, SoakSample, SoakTrends } from './types.js'

/**
 * The targets, for a 10-minute soak. CPU per request: the least-squares line may
 * rise by at most 5 % of the mean over 10 minutes. RSS: by at most 2 % (under steady load it
 * moves by well under 1 MiB between samples, so the line's noise is some 0.1 %, while a leak
 * of 2 % per 10 minutes, 7 MiB on 350, is 1 GiB a day). The JS heap in use is a sawtooth (20
 * to 90 MiB within a minute as garbage piles up and is collected), so its line says little;
 * what a leak raises is its lowest readings, those just after a collection (read every 2 s):
 * the last third's lowest may exceed the first third's by at most 4 MiB.
 */
export const CPU_TREND_TARGET = 0.05
export const RSS_TREND_TARGET = 0.02
export const HEAP_RISE_TARGET_MIB = 4
/** The targets are set for 10 minutes; a 3-minute line's noise alone is about ±12 % per 10 minutes. */
const JUDGED_SOAK_SECONDS = 600
const TEN_MINUTES_S = 600
/**
 * Load runs this long before the first count, so that the interval every other one is
 * divided by is not a warm-up. With 2 s, a 10-minute soak right after rest-create spent 47 µs
 * of main-thread time per request in its first 30 s against 35 in its last 30 s (window
 * profiles), postgres.js's Result construction alone 3.9 against 1.6 µs.
 */
const SETTLE_SECONDS = 10
/** wrk runs past the last sample so that every interval is under full load. */
const TAIL_SECONDS = 2
const MS_PER_SECOND = 1000
const US_PER_SECOND = 1e6
const BYTES_PER_MIB = 1024 * 1024
/** With --cpu-prof the soak's first and last this many seconds are profiled, to compare. */
const PROFILE_WINDOW_SECONDS = 30
/**
 * memsvc's JS heap in use is also read this often between samples, and each interval keeps
 * its lowest reading: one reading every 10 s lands anywhere in the collector's cycle (20 to
 * 90 MiB), five make the interval's low point, what is live, far likelier to be seen. A scrape
 * costs memsvc a millisecond or two of CPU, some 0.1 % of its core at this rate.
 */
const HEAP_LOW_READ_MS = 2_000

/** What the server under test says about itself at a sample. */
interface ServerReading {
  /** Requests served so far. */
  count: number
  /** Time spent in garbage collection so far, and the JS heap in use (memsvc's process metrics; floors have none). */
  gcSeconds?: number
  heapUsedMiB?: number
}

interface SoakPlan {
  id: string
  measure: string
  url: string
  headers: Record<string, string>
  read(): Promise<ServerReading>
  /** The JS heap in use now (memsvc only), read between samples for each interval's lowest. */
  readHeapMiB?(): Promise<number>
  pid: number
  notes?: string[]
  /** With --cpu-prof: the server's inspector, and where the first and last window's profiles go. */
  profile?: { inspectorUrl: string; dir: string }
}

async function soak(context: BenchContext, plan: SoakPlan): Promise<SoakResult> {
  const { soakSeconds, soakSampleSeconds } = context.options
  const samplesWanted = Math.floor(soakSeconds / soakSampleSeconds)
  // A shortened soak (--quick) settles and trails for one interval at most.
  const settleSeconds = Math.min(SETTLE_SECONDS, soakSampleSeconds)
  const tailSeconds = Math.min(TAIL_SECONDS, soakSampleSeconds)
  const load: Promise<LoadResult> = withCpuPerRequest(plan.pid, () =>
    runWrk({
      url: plan.url,
      connections: READ_CONNECTIONS,
      headers: plan.headers,
      seconds: settleSeconds + samplesWanted * soakSampleSeconds + tailSeconds,
    }),
  )
  load.catch(() => {}) // awaited below; a failure must not be unhandled meanwhile
  const backends = await context.database.openBackendMeter()
  const samples: SoakSample[] = []
  try {
    await sleep(settleSeconds * MS_PER_SECOND)
    const start = performance.now()
    const reading = async () => ({
      at: performance.now(),
      server: await plan.read(),
      cpu: cpuSeconds(plan.pid) ?? Number.NaN,
      databaseCpu: await backends.sample(),
    })
    let previous = await reading()
    const heapLow = plan.readHeapMiB ? lowestReadings(plan.readHeapMiB, HEAP_LOW_READ_MS) : undefined
    const profiles = plan.profile ? profileFirstAndLast(plan.profile, samplesWanted * soakSampleSeconds, start) : []
    for (let index = 1; index <= samplesWanted; index++) {
      // Absolute schedule: a slow scrape does not push the later samples back.
      await sleep(Math.max(0, start + index * soakSampleSeconds * MS_PER_SECOND - performance.now()))
      const current = await reading()
      const served = current.server.count - previous.server.count
      const elapsedSeconds = (current.at - previous.at) / MS_PER_SECOND
      const rate = served / elapsedSeconds
      const perRequest = (seconds: number) => (served > 0 ? (seconds * US_PER_SECOND) / served : Number.NaN)
      const cpuUsPerRequest = perRequest(current.cpu - previous.cpu)
      const first = samples[0] ?? { rate, cpuUsPerRequest }
      samples.push({
        atSeconds: (current.at - start) / MS_PER_SECOND,
        rate,
        ratio: rate / first.rate,
        cpuUsPerRequest,
        cpuGrowth: cpuUsPerRequest / first.cpuUsPerRequest,
        coreShare: (current.cpu - previous.cpu) / elapsedSeconds,
        databaseCpuUsPerRequest: perRequest(current.databaseCpu),
        gcShare:
          current.server.gcSeconds === undefined || previous.server.gcSeconds === undefined
            ? undefined
            : (current.server.gcSeconds - previous.server.gcSeconds) / elapsedSeconds,
        heapUsedMiB: current.server.heapUsedMiB,
        heapLowMiB: heapLow?.take(current.server.heapUsedMiB),
        loadavg1: os.loadavg()[0]!,
        rssMiB: rssMiB(plan.pid),
      })
      const sample = samples.at(-1)!
      console.log(
        `  ${plan.id} ${sample.atSeconds.toFixed(0)} s: ${Math.round(rate)}/s (${sample.ratio.toFixed(3)} of the first), ` +
          `${cpuUsPerRequest.toFixed(0)} µs CPU/req (×${sample.cpuGrowth.toFixed(3)}) at ${(sample.coreShare * 100).toFixed(0)} % of its core, ` +
          `PostgreSQL ${sample.databaseCpuUsPerRequest.toFixed(0)} µs/req, ` +
          (sample.gcShare === undefined
            ? ''
            : `GC ${(sample.gcShare * 100).toFixed(1)} %, heap ${sample.heapUsedMiB?.toFixed(0)} MiB, `) +
          `load ${sample.loadavg1.toFixed(1)}`,
      )
      previous = current
    }
    heapLow?.stop()
    for (const file of await Promise.all(profiles)) console.log(`  CPU profile: ${file}`)
  } finally {
    await backends.close()
  }
  const result = await load
  const notes = [...(plan.notes ?? [])]
  if (result.errors > 0) notes.push(`${result.errors} failed requests during the soak`)
  return {
    id: plan.id,
    measure: plan.measure,
    sampleSeconds: soakSampleSeconds,
    samples,
    minRatio: Math.min(...samples.slice(1).map((sample) => sample.ratio), 1),
    // Not floored at 1 like minRatio: the row shows the highest later interval's CPU beside it.
    maxCpuGrowth: samples.length > 1 ? Math.max(...samples.slice(1).map((sample) => sample.cpuGrowth)) : 1,
    trends: soakTrends(samples),
    judged: soakSeconds >= JUDGED_SOAK_SECONDS,
    load: result,
    notes,
  }
}

/** The soak's trends: least-squares lines of CPU per request and RSS over time, and the heap's lowest samples by thirds. */
export function soakTrends(samples: readonly SoakSample[]): SoakTrends {
  const line = (value: (sample: SoakSample) => number | undefined, target: number): SoakLineTrend | undefined => {
    const points: Point[] = samples.map((sample) => ({ x: sample.atSeconds, y: value(sample) ?? Number.NaN }))
    const fit = leastSquares(points)
    if (!fit || fit.meanY <= 0) return undefined
    return {
      slopePerSecond: fit.slope,
      slopeStandardError: fit.slopeStandardError,
      mean: fit.meanY,
      changePer10Min: (fit.slope * TEN_MINUTES_S) / fit.meanY,
      target,
    }
  }
  const heap = thirdsLowest(samples.map((sample) => sample.heapLowMiB ?? sample.heapUsedMiB))
  return {
    cpu: line((sample) => sample.cpuUsPerRequest, CPU_TREND_TARGET),
    rss: line((sample) => sample.rssMiB, RSS_TREND_TARGET),
    heap: heap && {
      firstLowestMiB: heap.first,
      lastLowestMiB: heap.last,
      riseMiB: heap.last - heap.first,
      targetMiB: HEAP_RISE_TARGET_MIB,
    },
  }
}

/** Reads `read` every `everyMs`; `take` gives the lowest reading since the last take (and `also`), and starts afresh. */
function lowestReadings(read: () => Promise<number>, everyMs: number): { take(also?: number): number; stop(): void } {
  let lowest = Number.POSITIVE_INFINITY
  let reading = false
  const timer = setInterval(() => {
    if (reading) return
    reading = true
    read()
      .then((value) => {
        lowest = Math.min(lowest, value)
      })
      // A scrape that fails under load only leaves this interval with fewer readings.
      .catch(() => {})
      .finally(() => {
        reading = false
      })
  }, everyMs)
  return {
    take(also) {
      const taken = Math.min(lowest, also ?? Number.POSITIVE_INFINITY)
      lowest = Number.POSITIVE_INFINITY
      return taken
    },
    stop: () => clearInterval(timer),
  }
}

/** The soak's first and last window (a third of it each, at most PROFILE_WINDOW_SECONDS), profiled through the inspector. */
function profileFirstAndLast(
  target: { inspectorUrl: string; dir: string },
  soakSeconds: number,
  start: number,
): Array<Promise<string>> {
  const window = Math.min(PROFILE_WINDOW_SECONDS, Math.floor(soakSeconds / 3))
  return [
    { name: `soak-first-${window}s`, at: 0 },
    { name: `soak-last-${window}s`, at: soakSeconds - window },
  ].map(async ({ name, at }) => {
    await sleep(Math.max(0, start + at * MS_PER_SECOND - performance.now()))
    const file = path.join(target.dir, `${name}.cpuprofile`)
    await profileWindow(target.inspectorUrl, window, file)
    return file
  })
}

export function soakProduct(context: BenchContext): Promise<SoakResult> {
  const { server, fixtures, metricsSecret, rss } = context
  const endpoint = { restUrl: server.restUrl, secret: metricsSecret }
  const inspector = inspectorUrl(server.log())
  const profile = context.profileDir && inspector ? { inspectorUrl: inspector, dir: context.profileDir } : undefined
  if (context.profileDir && !inspector) console.log("  (no inspector address in memsvc's log: no window profiles)")
  return rss.during(
    soak(context, {
      id: 'soak',
      measure: `soak GET /v1/apikeys (${context.options.soakSeconds} s)`,
      url: `${server.restUrl}/v1/apikeys`,
      headers: bearer(fixtures.reader.key),
      read: async () => {
        const text = await scrape(endpoint)
        return {
          count: routeCountInScrape(text, '/v1/apikeys'),
          gcSeconds: sumInScrape(text, 'nodejs_gc_duration_seconds_sum'),
          heapUsedMiB: sumInScrape(text, 'nodejs_heap_size_used_bytes') / BYTES_PER_MIB,
        }
      },
      readHeapMiB: async () => sumInScrape(await scrape(endpoint), 'nodejs_heap_size_used_bytes') / BYTES_PER_MIB,
      pid: server.pid,
      profile,
    }),
  )
}

/** The auth-lookup floor soaked with postgres.js as built (patched) or as published (unpatched). */
export async function soakFloor(context: BenchContext, variant: 'patched' | 'unpatched'): Promise<SoakResult> {
  const floor = await startFloor('uws-auth-lookup', {
    'db-url': context.database.url,
    postgres: variant,
    'pool-max': String(context.options.poolMax),
  })
  try {
    return await soak(context, {
      id: `soak-floor-${variant}`,
      measure: `soak auth-lookup floor, ${variant} postgres queue (${context.options.soakSeconds} s)`,
      url: `http://127.0.0.1:${floor.port}/v1/apikeys`,
      headers: bearer(context.fixtures.reader.key),
      read: async () => ({ count: await floorCount(floor.port) }),
      pid: floor.pid,
      notes: variant === 'unpatched' ? ['comparison only: postgres 3.4.9 as published, expected to sink'] : [],
    })
  } finally {
    await floor.stop()
  }
}
