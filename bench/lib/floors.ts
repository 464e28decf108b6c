// Starts the floor programs in bench/floors/ with the same node that built memsvc (Node
// 20) through tsx, pinned to the server core like the product.
import type { ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LoadResult } from './load-result.js'
import { pinned, runToCompletion, SERVER_CORE, sleep, spawnTracked, stopProcess } from './processes.js'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const FLOORS_DIR = path.join(REPO_ROOT, 'bench', 'floors')
const LISTENING_LINE = /^BENCH_FLOOR_LISTENING port=(\d+)$/m
const RESULT_LINE = /^BENCH_RESULT (\{.*\})$/m
const START_TIMEOUT_MS = 30_000
const START_POLL_MS = 10
const SERVER_LIFETIME_MS = 60 * 60 * 1000
const CLIENT_OVERRUN_MS = 30_000
const MS_PER_SECOND = 1000

export type FloorServerName = 'uws-auth-lookup' | 'uws-fixed-json' | 'grpc-unary' | 'grpc-auth-lookup'

export interface FloorServer {
  name: FloorServerName
  child: ChildProcess
  pid: number
  port: number
  stop(): Promise<void>
}

function nodeCommand(script: string, args: string[], profileDir?: string): { command: string; args: string[] } {
  // A directory per floor: tsx's loader thread writes a profile of its own beside the main thread's.
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, script)}`] : []
  return pinned(SERVER_CORE, process.execPath, [
    ...profile,
    '--import',
    'tsx',
    path.join(FLOORS_DIR, `${script}.ts`),
    ...args,
  ])
}

export async function startFloor(
  name: FloorServerName,
  args: Record<string, string>,
  profileDir?: string,
): Promise<FloorServer> {
  const { command, args: argv } = nodeCommand(
    name,
    Object.entries(args).flatMap(([flag, value]) => [`--${flag}`, value]),
    profileDir,
  )
  // No NODE_OPTIONS from the harness's own runner (vitest, a profiler) leaks into a floor.
  const env = { ...process.env, NODE_OPTIONS: '' }
  const child = spawnTracked(command, argv, { env, cwd: REPO_ROOT, timeoutMs: SERVER_LIFETIME_MS })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const deadline = Date.now() + START_TIMEOUT_MS
  let match = LISTENING_LINE.exec(stdout)
  while (!match) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`floor ${name} exited before listening:\n${stderr}`)
    if (Date.now() > deadline) throw new Error(`floor ${name} did not listen within ${START_TIMEOUT_MS} ms:\n${stderr}`)
    await sleep(START_POLL_MS)
    match = LISTENING_LINE.exec(stdout)
  }
  return { name, child, pid: child.pid!, port: Number(match[1]), stop: () => stopProcess(child) }
}

/** Floors that run to completion in a process of their own and print one BENCH_RESULT line. */
export type FloorClientName = 'pdfjs-text' | 'tesseract-ocr'

/** Runs a client floor (pinned like the product) with `--flag value` arguments; its BENCH_RESULT, parsed. */
export async function runClientFloor<T>(
  name: FloorClientName,
  args: Record<string, string>,
  timeoutMs: number,
): Promise<T> {
  const { command, args: argv } = nodeCommand(
    name,
    Object.entries(args).flatMap(([flag, value]) => [`--${flag}`, value]),
  )
  const result = await runToCompletion(command, argv, {
    env: { ...process.env, NODE_OPTIONS: '' },
    cwd: REPO_ROOT,
    timeoutMs,
  })
  const match = RESULT_LINE.exec(result.stdout)
  if (result.code !== 0 || !match)
    throw new Error(`floor ${name} failed (exit ${result.code ?? result.signal}): ${result.stderr.trim().slice(-4000)}`)
  return JSON.parse(match[1]!) as T
}

/** The INSERT floor is a client: it runs for warm-up + measurement and reports. */
export async function runInsertFloor(options: {
  dbUrl: string
  userId: string
  seconds: number
  warmupSeconds: number
  concurrency: number
  poolMax: number
}): Promise<LoadResult> {
  const { command, args } = nodeCommand('pg-insert', [
    '--db-url',
    options.dbUrl,
    '--user-id',
    options.userId,
    '--seconds',
    String(options.seconds),
    '--warmup-seconds',
    String(options.warmupSeconds),
    '--concurrency',
    String(options.concurrency),
    '--pool-max',
    String(options.poolMax),
  ])
  const result = await runToCompletion(command, args, {
    env: { ...process.env, NODE_OPTIONS: '' },
    cwd: REPO_ROOT,
    timeoutMs: (options.seconds + options.warmupSeconds) * MS_PER_SECOND + CLIENT_OVERRUN_MS,
  })
  const match = RESULT_LINE.exec(result.stdout)
  if (result.code !== 0 || !match)
    throw new Error(`insert floor failed (exit ${result.code ?? result.signal}): ${result.stderr.trim()}`)
  const report = JSON.parse(match[1]!) as {
    requests: number
    seconds: number
    p50Ms?: number
    p99Ms?: number
    cpuUsPerRequest?: number
  }
  return {
    tool: 'postgres.js',
    requests: report.requests,
    seconds: report.seconds,
    rate: report.requests / report.seconds,
    p50Ms: report.p50Ms,
    p99Ms: report.p99Ms,
    errors: 0,
    cpuUsPerRequest: report.cpuUsPerRequest,
  }
}
