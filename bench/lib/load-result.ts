import { cpuSeconds } from './machine.js'

/** What every load run reports, whichever tool produced it. */
export interface LoadResult {
  tool: 'wrk' | 'h2load' | 'postgres.js'
  requests: number
  seconds: number
  /** Successful requests (or calls, or inserts) per second. */
  rate: number
  p50Ms?: number
  p99Ms?: number
  /** Failed requests of any kind: connection, status >= 400, timeout, gRPC status != 0. */
  errors: number
  /** The errors by kind (wrk: connect, read, write, status, timeout), when there were any. */
  errorKinds?: Record<string, number>
  /**
   * CPU time the server under test (or the INSERT floor's client) spent per request
   * during the measured run, in µs. Less sensitive than the rate to other work on the
   * machine, so it says where a ratio comes from.
   */
  cpuUsPerRequest?: number
}

const US_PER_SECOND = 1e6

/** Runs `load` and adds the CPU time process `pid` used per request meanwhile. */
export async function withCpuPerRequest(pid: number, load: () => Promise<LoadResult>): Promise<LoadResult> {
  const before = cpuSeconds(pid)
  const result = await load()
  const after = cpuSeconds(pid)
  if (before === undefined || after === undefined || result.requests === 0) return result
  return { ...result, cpuUsPerRequest: ((after - before) * US_PER_SECOND) / result.requests }
}
