// Runs the built executable (dist/memsvc) the way a user would: copied into a fresh
// directory with no node_modules, with HOME and the XDG directories pointing at temp
// dirs, and with a clean environment (no NODE_OPTIONS or other settings leaking in
// from the test runner, which a SEA would otherwise honour).
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { StopWaiting, waitFor } from './wait.js'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const BUILT_EXECUTABLE = path.join(REPO_ROOT, 'dist', 'memsvc')
export const BUILT_LICENSES = path.join(REPO_ROOT, 'dist', 'licenses')

const DEFAULT_CLI_TIMEOUT_MS = 20_000
const DEFAULT_WAIT_TIMEOUT_MS = 30_000
const POLL_INTERVAL_MS = 50
const STOP_TIMEOUT_MS = 15_000
const REQUEST_TIMEOUT_MS = 5_000
const KB = 1024

/** `... INFO  listening rest=http://127.0.0.1:PORT/v1 grpc=127.0.0.1:PORT ...` */
const LISTENING_LINE = /\blistening rest=(https?):\/\/\S*:(\d+)\/v1 grpc=\S*:(\d+)/

export interface Sandbox {
  dir: string
  executable: string
  home: string
  /** A clean environment: PATH, HOME and XDG dirs only. */
  env: NodeJS.ProcessEnv
  /** A fresh directory inside the sandbox, e.g. for --data-dir. */
  makeDir(name: string): string
  remove(): void
}

/**
 * A clean environment whose HOME and XDG directories live under `home` (created here), so
 * a run neither reads nor writes the user's files. The bench uses it too.
 */
export function isolatedUserEnvironment(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    LANG: 'C.UTF-8',
  }
  for (const variable of ['XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_CONFIG_HOME'] as const)
    fs.mkdirSync(env[variable]!, { recursive: true })
  return env
}

export function assertExecutableBuilt(): void {
  if (!fs.existsSync(BUILT_EXECUTABLE)) throw new Error(`${BUILT_EXECUTABLE} does not exist: run "npm run build" first`)
}

/** Copies the executable and its licences into a new temp dir with its own HOME. */
export function createSandbox(): Sandbox {
  assertExecutableBuilt()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-e2e-'))
  const executable = path.join(dir, 'memsvc')
  fs.copyFileSync(BUILT_EXECUTABLE, executable)
  fs.chmodSync(executable, 0o755)
  if (fs.existsSync(BUILT_LICENSES)) fs.cpSync(BUILT_LICENSES, path.join(dir, 'licenses'), { recursive: true })
  const home = path.join(dir, 'home')
  const env = isolatedUserEnvironment(home)
  return {
    dir,
    executable,
    home,
    env,
    makeDir(name) {
      const made = path.join(dir, name)
      fs.mkdirSync(made, { recursive: true })
      return made
    },
    remove() {
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs one command to completion (killed after timeoutMs), from inside the sandbox. */
/** `stdin`, when given, is written to the command's standard input, which then ends. */
export function runCli(
  sandbox: Sandbox,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; stdin?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(sandbox.executable, args, {
      cwd: sandbox.dir,
      env: { ...sandbox.env, ...options.env },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    live.add(child)
    if (options.stdin !== undefined) child.stdin!.end(options.stdin)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? DEFAULT_CLI_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      live.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Every process started here that has not exited yet; killAllProcesses() ends them. */
const live = new Set<ChildProcess>()

export function killAllProcesses(): void {
  for (const child of live) child.kill('SIGKILL')
  live.clear()
}

/** waitFor with this file's defaults: process start-up can take a while on a loaded machine. */
export function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = DEFAULT_WAIT_TIMEOUT_MS,
): Promise<T> {
  return waitFor(what, probe, { timeoutMs, intervalMs: POLL_INTERVAL_MS })
}

export interface Listening {
  scheme: 'http' | 'https'
  restPort: number
  grpcPort: number
}

export interface HttpResult {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** One GET or POST without keep-alive; TLS certificates are not verified (tests inspect them separately). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpResult> {
  const client = url.startsWith('https:') ? https : http
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
        rejectUnauthorized: false,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)))
    req.on('error', reject)
    req.end(options.body)
  })
}

/** A `memsvc serve` process whose stderr log lines are collected. */
export class ServerProcess {
  readonly logs: string[] = []
  readonly startedAt = performance.now()
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Milliseconds from spawn until /readyz first answered 200 (set by waitForReady). */
  readyAfterMs: number | undefined
  #listening: Listening | undefined
  #partial = ''

  private constructor(readonly child: ChildProcess) {
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (chunk: string) => this.#collect(chunk))
    child.stdout!.resume()
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        live.delete(child)
        resolve({ code, signal })
      }),
    )
  }

  static start(sandbox: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): ServerProcess {
    const child = spawn(sandbox.executable, ['serve', ...args], {
      cwd: sandbox.dir,
      env: { ...sandbox.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    live.add(child)
    return new ServerProcess(child)
  }

  get pid(): number {
    return this.child.pid!
  }

  #collect(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n')
    this.#partial = lines.pop()!
    for (const line of lines) {
      this.logs.push(line)
      if (process.env.MEMSVC_E2E_VERBOSE) process.stderr.write(`[memsvc ${this.pid}] ${line}\n`)
      const match = LISTENING_LINE.exec(line)
      if (match)
        this.#listening = {
          scheme: match[1] as Listening['scheme'],
          restPort: Number(match[2]),
          grpcPort: Number(match[3]),
        }
    }
  }

  #throwIfExited(): void {
    const { exitCode, signalCode } = this.child
    if (exitCode !== null || signalCode !== null)
      throw new StopWaiting(`memsvc exited (${exitCode ?? signalCode}):\n${this.logs.join('\n')}`)
  }

  hasLogged(pattern: RegExp): boolean {
    return this.logs.some((line) => pattern.test(line))
  }

  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string> {
    return waitUntil(
      `log line ${pattern}`,
      () => {
        this.#throwIfExited()
        return this.logs.find((line) => pattern.test(line))
      },
      timeoutMs,
    )
  }

  /** Resolves with the ports parsed from the "listening" log line. */
  listening(timeoutMs?: number): Promise<Listening> {
    return waitUntil(
      'the "listening" log line',
      () => {
        this.#throwIfExited()
        return this.#listening
      },
      timeoutMs,
    )
  }

  /** Base URL of the REST listener (the probes live at its root). */
  get restBase(): string {
    if (!this.#listening) throw new Error('not listening yet')
    return `${this.#listening.scheme}://127.0.0.1:${this.#listening.restPort}`
  }

  get(pathname: string, headers?: Record<string, string>): Promise<HttpResult> {
    return request(`${this.restBase}${pathname}`, { headers })
  }

  async waitForReady(timeoutMs?: number): Promise<void> {
    await this.listening(timeoutMs)
    await waitUntil(
      '/readyz 200',
      async () => {
        this.#throwIfExited()
        return (await this.get('/readyz')).status === 200
      },
      timeoutMs,
    )
    this.readyAfterMs ??= performance.now() - this.startedAt
  }

  /** Resident set size from /proc (Linux), in kB. */
  rssKb(): number {
    const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8')
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
    if (!match) throw new Error(`no VmRSS in /proc/${this.pid}/status`)
    return Number(match[1])
  }

  /** Sends a signal and waits for the exit; SIGKILLs after the timeout. */
  async stop(
    signal: NodeJS.Signals = 'SIGTERM',
    timeoutMs = STOP_TIMEOUT_MS,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal)
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs)
    try {
      return await this.exited
    } finally {
      clearTimeout(timer)
    }
  }
}

export function formatRss(kb: number): string {
  return `${(kb / KB).toFixed(1)} MB`
}

/** `memsvc serve` in plaintext on ephemeral loopback ports over a PostgreSQL database, once /readyz answers 200. */
export async function servePlaintextOnPostgres(sandbox: Sandbox, jdbcUrl: string): Promise<ServerProcess> {
  const server = ServerProcess.start(sandbox, [
    '--tls-disabled',
    '--rest-port=0',
    '--grpc-port=0',
    '--bind-address=127.0.0.1',
    `--db-url=${jdbcUrl}`,
    `--data-dir=${sandbox.makeDir('data')}`,
  ])
  await server.waitForReady()
  return server
}

/** `memsvc serve` in plaintext on ephemeral loopback ports over its embedded database, once /readyz answers 200. */
export async function servePlaintextEmbedded(sandbox: Sandbox, timeoutMs?: number): Promise<ServerProcess> {
  const server = ServerProcess.start(sandbox, [
    '--rest-port',
    '0',
    '--grpc-port',
    '0',
    '--bind-address',
    '127.0.0.1',
    '--data-dir',
    sandbox.makeDir('data'),
    '--tls-disabled',
  ])
  await server.waitForReady(timeoutMs)
  return server
}
