// Every process the harness starts goes through here, so that all of them end with the
// run: on normal exit, on an error, and on SIGINT/SIGTERM. Nothing is left running.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'

/** The load generator runs on this core... */
export const LOAD_CORE = 0
/** ...and the server under test (product or floor) on this one; PostgreSQL floats. */
export const SERVER_CORE = 1
/** After SIGTERM, how long a server may take to stop before it is killed. */
const STOP_GRACE_MS = 10_000
const MS_PER_MINUTE = 60_000
/** Whole-cleanup bound on SIGINT: dropping the database must not hang the terminal. */
const INTERRUPT_CLEANUP_MS = 15_000

export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
}

/** Pinning needs two cores and taskset; otherwise everything shares the machine. */
export const canPin = os.availableParallelism() >= 2 && hasCommand('taskset')

/** `taskset -c CORE command args…` when pinning is possible (taskset execs, so the pid is the command's). */
export function pinned(core: number, command: string, args: string[]): { command: string; args: string[] } {
  return canPin ? { command: 'taskset', args: ['-c', String(core), command, ...args] } : { command, args }
}

const live = new Set<ChildProcess>()
const stopped = new WeakSet<ChildProcess>()

/** Whether the harness itself stopped this process (stopProcess), rather than it ending on its own. */
export const wasStopped = (child: ChildProcess) => stopped.has(child)
const cleanups: Array<() => Promise<void>> = []

export interface TrackedOptions {
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** Killed (SIGKILL) once this has passed: nothing the harness starts runs unbounded. */
  timeoutMs: number
}

export function spawnTracked(command: string, args: string[], options: TrackedOptions): ChildProcess {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  live.add(child)
  const timer = setTimeout(() => {
    // Said out loud: otherwise the run fails later on a refused connection, which reads like a crash.
    console.error(
      `${path.basename(command)} (pid ${child.pid}) ran past the harness's bound of ${Math.round(options.timeoutMs / MS_PER_MINUTE)} min: killed`,
    )
    child.kill('SIGKILL')
  }, options.timeoutMs)
  timer.unref()
  child.on('exit', () => {
    clearTimeout(timer)
    live.delete(child)
  })
  return child
}

export interface Completed {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs a command to its end (or its timeout) and collects its output. */
export function runToCompletion(command: string, args: string[], options: TrackedOptions): Promise<Completed> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(command, args, options)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

/** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. */
export function stopProcess(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  stopped.add(child)
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** Registers work to do at the end of the run (last registered runs first), e.g. dropping the database. */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.unshift(cleanup)
}

let cleaning: Promise<void> | undefined
let interrupted = false

/** True once SIGINT/SIGTERM arrived: the run's failure is then the interruption, not an error. */
export const wasInterrupted = () => interrupted

/**
 * Stops every child and runs the cleanups. Every caller gets the same promise, so a
 * failure unwinding while an interrupt cleans up waits for the same work to finish.
 */
export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...live].map((child) => stopProcess(child)))
    for (const cleanup of cleanups) {
      try {
        await cleanup()
      } catch (error) {
        console.error(`cleanup failed: ${(error as Error).message}`)
      }
    }
  })()
  return cleaning
}

/**
 * SIGINT/SIGTERM: stop the children, drop the database, exit 130. On any exit, kill
 * whatever is still alive (synchronously: nothing async runs in an exit handler).
 */
export function installExitHandlers(): void {
  const interrupt = (signal: NodeJS.Signals) => {
    interrupted = true
    console.error(`\n${signal}: stopping every process the benchmark started…`)
    const hardStop = setTimeout(() => process.exit(130), INTERRUPT_CLEANUP_MS)
    hardStop.unref()
    void cleanUp().finally(() => process.exit(130))
  }
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL')
  })
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
