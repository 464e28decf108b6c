// Starts dist/memsvc the way a user would (clean environment, private HOME), pinned to
// the server core, and measures spawn → READY.
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { isolatedUserEnvironment } from '../../test/support/executable.js'
import { pinned, SERVER_CORE, sleep, spawnTracked, stopProcess, wasStopped } from './processes.js'

/** `... INFO  listening rest=http://127.0.0.1:PORT/v1 grpc=127.0.0.1:PORT ...` */
const LISTENING_LINE = /\blistening rest=(https?):\/\/\S*:(\d+)\/v1 grpc=\S*:(\d+)/
/** Polling /readyz this often bounds the READY timing error. */
const READY_POLL_MS = 5
/** Embedded first start runs initdb (about 5 s on these machines); leave room for a loaded machine. */
const READY_TIMEOUT_MS = 90_000
/** The server is stopped by the harness long before this; it only bounds a stuck run (StartOptions.lifetimeMs). */
const SERVER_LIFETIME_MS = 60 * 60 * 1000

export interface Sandbox {
  dir: string
  env: NodeJS.ProcessEnv
  remove(): void
}

/** A private HOME and XDG dirs, so the run neither reads nor writes the user's files. */
export function createSandbox(): Sandbox {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-'))
  const env = isolatedUserEnvironment(path.join(dir, 'home'))
  return { dir, env, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

export interface RunningServer {
  child: ChildProcess
  pid: number
  restUrl: string
  grpcAddress: string
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readyMs: number
  /** Everything the server wrote to stderr so far (its log). */
  log(): string
  stop(): Promise<void>
}

export interface StartOptions {
  executable: string
  /** Arguments before `serve`: e.g. node's own flags and the bundle, when profiling. */
  executableArgs?: string[]
  args: string[]
  sandbox: Sandbox
  env?: NodeJS.ProcessEnv
  /** Let memsvc run on any core (the processes benchmark runs several of them). */
  unpinned?: boolean
  /** Killed after this, a bound for a stuck run: a run that is meant to take longer says so (default an hour). */
  lifetimeMs?: number
}

export async function startMemsvc(options: StartOptions): Promise<RunningServer> {
  const serveArgs = [...(options.executableArgs ?? []), 'serve', ...options.args]
  const { command, args } = options.unpinned
    ? { command: options.executable, args: serveArgs }
    : pinned(SERVER_CORE, options.executable, serveArgs)
  const started = performance.now()
  const child = spawnTracked(command, args, {
    env: { ...options.sandbox.env, ...options.env },
    cwd: options.sandbox.dir,
    timeoutMs: options.lifetimeMs ?? SERVER_LIFETIME_MS,
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout!.resume()
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`memsvc exited (${code ?? signal}) before READY:\n${stderr.slice(-4000)}`)),
    ),
  )
  exited.catch(() => {})

  const deadline = started + READY_TIMEOUT_MS
  let listening = LISTENING_LINE.exec(stderr)
  while (!listening) {
    if (performance.now() > deadline)
      throw new Error(`memsvc did not log its ports within ${READY_TIMEOUT_MS} ms:\n${stderr.slice(-4000)}`)
    await Promise.race([sleep(READY_POLL_MS), exited])
    listening = LISTENING_LINE.exec(stderr)
  }
  const [, scheme, restPort, grpcPort] = listening
  const restUrl = `${scheme}://127.0.0.1:${restPort}`
  for (;;) {
    const ready = await Promise.race([
      fetch(`${restUrl}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      ),
      exited,
    ])
    if (ready) break
    if (performance.now() > deadline)
      throw new Error(`memsvc not READY within ${READY_TIMEOUT_MS} ms:\n${stderr.slice(-4000)}`)
    await sleep(READY_POLL_MS)
  }
  const readyMs = performance.now() - started
  // A server that ends before the harness stops it: its exit and last log lines, where the
  // run's own error will only say that a request failed.
  child.once('exit', (code, signal) => {
    if (!wasStopped(child))
      console.error(`memsvc (pid ${child.pid}) exited (${code ?? signal}) during the run:\n${stderr.slice(-4000)}`)
  })
  return {
    child,
    pid: child.pid!,
    restUrl,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    readyMs,
    log: () => stderr,
    stop: () => stopProcess(child),
  }
}
