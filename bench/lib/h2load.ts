// gRPC load from h2load: a grpc-js load client saturates near 5k calls/s on the project's
// two-core machines, far below the server. h2load sends a pre-encoded gRPC frame
// (-d) with the headers gRPC needs; it sees only HTTP status, so the caller checks the
// gRPC status separately (a pre-flight call, and the server's own counters).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { LoadResult } from './load-result.js'
import { LOAD_CORE, pinned, runToCompletion } from './processes.js'
import { latencySummary } from './stats.js'

const OVERRUN_MS = 20_000
const FINISHED_LINE = /finished in ([\d.]+)(m?s), ([\d.]+) req\/s/
const REQUESTS_LINE =
  /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/
const MS_PER_SECOND = 1000

export interface GrpcLoad {
  /** http://host:port/package.Service/Method */
  url: string
  /** The complete request body: gRPC frame header plus the encoded message. */
  frameFile: string
  connections: number
  /** Concurrent streams per connection. */
  streams: number
  seconds: number
  headers?: Record<string, string>
}

export async function runH2load(load: GrpcLoad): Promise<LoadResult> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-h2load-'))
  const logFile = path.join(logDir, 'requests.tsv')
  try {
    const headers = { 'content-type': 'application/grpc', te: 'trailers', ...load.headers }
    const { command, args } = pinned(LOAD_CORE, 'h2load', [
      '-c',
      String(load.connections),
      '-m',
      String(load.streams),
      '-D',
      String(load.seconds),
      '-d',
      load.frameFile,
      ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
      `--log-file=${logFile}`,
      load.url,
    ])
    const result = await runToCompletion(command, args, { timeoutMs: load.seconds * MS_PER_SECOND + OVERRUN_MS })
    const finished = FINISHED_LINE.exec(result.stdout)
    const requests = REQUESTS_LINE.exec(result.stdout)
    if (result.code !== 0 || !finished || !requests) {
      throw new Error(
        `h2load failed (exit ${result.code ?? result.signal}): ${result.stderr.trim() || result.stdout.trim()}`,
      )
    }
    const seconds = Number(finished[1]) / (finished[2] === 'ms' ? MS_PER_SECOND : 1)
    const succeeded = Number(requests[4])
    const failed = Number(requests[5]) + Number(requests[6]) + Number(requests[7])
    // Columns: start time (µs since epoch), HTTP status, µs until the end of the response.
    const latenciesUs = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => Number(line.split('\t')[2]))
      .filter((value) => Number.isFinite(value))
    return {
      tool: 'h2load',
      requests: succeeded + failed,
      seconds,
      rate: succeeded / seconds,
      ...latencySummary(latenciesUs),
      errors: failed,
    }
  } finally {
    fs.rmSync(logDir, { recursive: true, force: true })
  }
}
