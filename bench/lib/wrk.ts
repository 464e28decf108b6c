// HTTP load from wrk (one thread on the load core: on two cores a second thread only
// competes with the first), with the harness's Lua script for method, body and p99.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LoadResult } from './load-result.js'
import { LOAD_CORE, pinned, runToCompletion } from './processes.js'

const LUA_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lua', 'report.lua')
/** A request slower than this counts as a timeout error rather than stalling the run. */
const REQUEST_TIMEOUT_SECONDS = 5
/** wrk is killed if it outlives its duration by this much (it never should). */
const OVERRUN_MS = 20_000
const RESULT_LINE = /^BENCH_RESULT (\{.*\})$/m
const US_PER_MS = 1000
const US_PER_SECOND = 1e6

export interface HttpLoad {
  url: string
  connections: number
  seconds: number
  headers?: Record<string, string>
  method?: 'GET' | 'POST'
  /** File holding the request body (sent with content-type application/json). */
  bodyFile?: string
  /** Let wrk run on any core (the processes benchmark: its servers share both cores too). */
  unpinned?: boolean
}

interface WrkReport {
  requests: number
  durationUs: number
  connectErrors: number
  readErrors: number
  writeErrors: number
  statusErrors: number
  timeouts: number
  p50Us: number
  p99Us: number
}

export async function runWrk(load: HttpLoad): Promise<LoadResult> {
  const headerArgs = Object.entries(load.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`])
  const wrkArgs = [
    '-t1',
    `-c${load.connections}`,
    `-d${load.seconds}s`,
    '--timeout',
    `${REQUEST_TIMEOUT_SECONDS}s`,
    '-s',
    LUA_SCRIPT,
    ...headerArgs,
    load.url,
  ]
  const { command, args } = load.unpinned ? { command: 'wrk', args: wrkArgs } : pinned(LOAD_CORE, 'wrk', wrkArgs)
  const result = await runToCompletion(command, args, {
    env: { ...process.env, BENCH_METHOD: load.method ?? 'GET', BENCH_BODY_FILE: load.bodyFile ?? '' },
    timeoutMs: load.seconds * 1000 + OVERRUN_MS,
  })
  const match = RESULT_LINE.exec(result.stdout)
  if (result.code !== 0 || !match) {
    throw new Error(
      `wrk failed (exit ${result.code ?? result.signal}): ${result.stderr.trim() || result.stdout.trim()}`,
    )
  }
  const report = JSON.parse(match[1]!) as WrkReport
  const seconds = report.durationUs / US_PER_SECOND
  // wrk counts a response with status >= 400 as a request and as a status error.
  const failed = report.statusErrors + report.timeouts
  const errors = failed + report.connectErrors + report.readErrors + report.writeErrors
  return {
    tool: 'wrk',
    requests: report.requests,
    seconds,
    rate: (report.requests - failed) / seconds,
    p50Ms: report.p50Us / US_PER_MS,
    p99Ms: report.p99Us / US_PER_MS,
    errors,
    errorKinds:
      errors > 0
        ? {
            connect: report.connectErrors,
            read: report.readErrors,
            write: report.writeErrors,
            status: report.statusErrors,
            timeout: report.timeouts,
          }
        : undefined,
  }
}
