// Soak: one uninterrupted wrk load on the list endpoint, the server's own request count
// read every sample interval; each interval's rate is divided by the first one's. It
// must stay flat (postgres 3.4.9's unpatched queue makes it sink; docs/architecture.md).
// `--unpatched-soak` adds the same soak on the auth-lookup floor with the patched and
// with the original queue, to show the patch is what keeps it flat.

import os from 'node:os'
import { floorCount, memsvcRouteCount } from '../lib/counters.js'
import { startFloor } from '../lib/floors.js'
import { type LoadResult, withCpuPerRequest } from '../lib/load-result.js'
import { cpuSeconds, rssMiB } from '../lib/machine.js'
import { sleep } from '../lib/processes.js'
import { runWrk } from '../lib/wrk.js'
import { bearer, READ_CONNECTIONS } from './http-load.js'
import type { BenchContext, SoakResult, SoakSample } from './types.js'

export const TARGET = 0.9
/** Load runs this long before the first count, so the baseline is not a cold start. */
const SETTLE_SECONDS = 2
/** wrk runs past the last sample so that every interval is under full load. */
const TAIL_SECONDS = 2
const MS_PER_SECOND = 1000
const US_PER_SECOND = 1e6

interface SoakPlan {
  id: string
  measure: string
  url: string
  headers: Record<string, string>
  count(): Promise<number>
  pid: number
  notes?: string[]
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
  await sleep(settleSeconds * MS_PER_SECOND)
  const start = performance.now()
  const reading = async () => ({
    at: performance.now(),
    count: await plan.count(),
    cpu: cpuSeconds(plan.pid) ?? Number.NaN,
  })
  let previous = await reading()
  const samples: SoakSample[] = []
  for (let index = 1; index <= samplesWanted; index++) {
    // Absolute schedule: a slow scrape does not push the later samples back.
    await sleep(Math.max(0, start + index * soakSampleSeconds * MS_PER_SECOND - performance.now()))
    const current = await reading()
    const served = current.count - previous.count
    const rate = (served * MS_PER_SECOND) / (current.at - previous.at)
    const cpuUsPerRequest = served > 0 ? ((current.cpu - previous.cpu) * US_PER_SECOND) / served : Number.NaN
    const first = samples[0] ?? { rate, cpuUsPerRequest }
    samples.push({
      atSeconds: (current.at - start) / MS_PER_SECOND,
      rate,
      ratio: rate / first.rate,
      cpuUsPerRequest,
      // Inverted, so that like `ratio` a value below 1 means worse than the first interval.
      cpuRatio: first.cpuUsPerRequest / cpuUsPerRequest,
      loadavg1: os.loadavg()[0]!,
      rssMiB: rssMiB(plan.pid),
    })
    const sample = samples.at(-1)!
    console.log(
      `  ${plan.id} ${sample.atSeconds.toFixed(0)} s: ${Math.round(rate)}/s (${sample.ratio.toFixed(3)} of the first), ` +
        `${cpuUsPerRequest.toFixed(0)} µs CPU/req (${sample.cpuRatio.toFixed(3)}), load ${sample.loadavg1.toFixed(1)}`,
    )
    previous = current
  }
  const result = await load
  const notes = [...(plan.notes ?? [])]
  if (result.errors > 0) notes.push(`${result.errors} failed requests during the soak`)
  return {
    id: plan.id,
    measure: plan.measure,
    target: TARGET,
    sampleSeconds: soakSampleSeconds,
    samples,
    minRatio: Math.min(...samples.slice(1).map((sample) => sample.ratio), 1),
    minCpuRatio: Math.min(...samples.slice(1).map((sample) => sample.cpuRatio), 1),
    load: result,
    notes,
  }
}

export function soakProduct(context: BenchContext): Promise<SoakResult> {
  const { server, fixtures, metricsSecret, rss } = context
  const endpoint = { restUrl: server.restUrl, secret: metricsSecret }
  return rss.during(
    soak(context, {
      id: 'soak',
      measure: `soak GET /v1/apikeys (${context.options.soakSeconds} s)`,
      url: `${server.restUrl}/v1/apikeys`,
      headers: bearer(fixtures.reader.key),
      count: () => memsvcRouteCount(endpoint, '/v1/apikeys'),
      pid: server.pid,
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
      count: () => floorCount(floor.port),
      pid: floor.pid,
      notes: variant === 'unpatched' ? ['comparison only: postgres 3.4.9 as published, expected to sink'] : [],
    })
  } finally {
    await floor.stop()
  }
}
