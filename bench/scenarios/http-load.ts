// Warm-up then measurement with wrk: the warm-up lets JIT, connection pools and
// prepared statements settle, and is thrown away.
import { type LoadResult, withCpuPerRequest } from '../lib/load-result.js'
import type { BenchOptions } from '../lib/options.js'
import { type HttpLoad, runWrk } from '../lib/wrk.js'

/** wrk -c64, as the project's floors (uWS alone, uWS + sha256 + postgres lookup) were first measured. */
export const READ_CONNECTIONS = 64

/**
 * `serverPid`: the process whose CPU time per request is reported (the server under test).
 * `beforeMeasuring`: runs between the warm-up and the measured run (e.g. to read other counters).
 */
export async function warmAndRunWrk(
  options: BenchOptions,
  serverPid: number,
  load: Omit<HttpLoad, 'seconds'>,
  beforeMeasuring?: () => Promise<void>,
): Promise<LoadResult> {
  if (options.warmupSeconds > 0) await runWrk({ ...load, seconds: options.warmupSeconds })
  await beforeMeasuring?.()
  return withCpuPerRequest(serverPid, () => runWrk({ ...load, seconds: options.seconds }))
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
