// Helpers for the command-line end-to-end tests: a new user (fresh HOME) running the
// built executable against a `memsvc serve` started from the same executable.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { expect } from 'vitest'
import { type CliResult, killAllProcesses, runCli, type Sandbox, ServerProcess } from './executable.js'

export const EXIT = { OK: 0, FAILED: 1, BAD_INPUT: 2, UNREACHABLE: 3 } as const
/** A full raw API key (msk_ + 43 + 6 base62 characters). */
export const RAW_KEY_PATTERN = /msk_[0-9A-Za-z]{49}/
/** The first start of an embedded server runs initdb (about 5 s; over a minute seen on a loaded two-core machine). */
export const SERVER_START_TIMEOUT_MS = 120_000
const CLI_TIMEOUT_MS = 30_000

export interface CliRun extends CliResult {
  args: string[]
  /** stdout parsed as exactly one JSON document. */
  json<T = Record<string, unknown>>(): T
}

function withJson(args: string[], result: CliResult): CliRun {
  return {
    ...result,
    args,
    json<T>() {
      try {
        return JSON.parse(result.stdout) as T
      } catch (error) {
        throw new Error(
          `memsvc ${args.join(' ')}: stdout is not one JSON document (${(error as Error).message}):\n${result.stdout}\nstderr:\n${result.stderr}`,
        )
      }
    },
  }
}

/** Every run is kept so that a test can check, at the end, where the raw keys appeared. */
export class CliUser {
  readonly runs: CliRun[] = []

  constructor(readonly sandbox: Sandbox) {}

  get configFile(): string {
    return path.join(this.sandbox.env.XDG_CONFIG_HOME!, 'memsvc', 'config.json')
  }

  readConfig(): Record<string, string> {
    return JSON.parse(fs.readFileSync(this.configFile, 'utf8')) as Record<string, string>
  }

  async run(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = CLI_TIMEOUT_MS, stdin?: string): Promise<CliRun> {
    const result = withJson(args, await runCli(this.sandbox, args, { env, timeoutMs, stdin }))
    this.runs.push(result)
    return result
  }

  /** Runs and insists on exit code 0, showing stderr otherwise. */
  async ok(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
    const result = await this.run(args, env)
    expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: expect.any(String) })
    return result
  }
}

/**
 * The failure shape every command must have: the exit code, nothing on stdout, and
 * exactly one "error: …" line on stderr (no stack trace).
 */
export function expectError(result: CliRun, code: number, pattern: RegExp): void {
  expect({ args: result.args, code: result.code, stdout: result.stdout }).toEqual({
    args: result.args,
    code,
    stdout: '',
  })
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^error: /)
  expect(lines[0]).toMatch(pattern)
  expect(result.stderr).not.toMatch(/\n\s+at /)
}

/** A port nothing listens on right now (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

export interface RunningServer {
  process: ServerProcess
  grpcPort: number
  /** The --server value for it. */
  address: string
  dataDir: string
}

export interface ServerOptions {
  tls: boolean
  dataDir: string
  /** A fixed gRPC port, so that a restarted server keeps its address (and its pin). */
  grpcPort?: number
  env?: NodeJS.ProcessEnv
}

export async function startServer(sandbox: Sandbox, options: ServerOptions): Promise<RunningServer> {
  const flags = [
    '--rest-port',
    '0',
    '--grpc-port',
    String(options.grpcPort ?? 0),
    '--bind-address',
    '127.0.0.1',
    '--data-dir',
    options.dataDir,
  ]
  if (!options.tls) flags.push('--tls-disabled')
  const process = ServerProcess.start(sandbox, flags, options.env)
  await process.waitForReady(SERVER_START_TIMEOUT_MS)
  const { grpcPort } = await process.listening()
  return {
    process,
    grpcPort,
    address: `${options.tls ? 'https' : 'http'}://127.0.0.1:${grpcPort}`,
    dataDir: options.dataDir,
  }
}

/** SHA-256 of the server's self-signed certificate, as the CLI prints and pins it. */
export function certificateFingerprint(dataDir: string): string {
  return new crypto.X509Certificate(fs.readFileSync(path.join(dataDir, 'tls', 'server.crt'))).fingerprint256
}

/** Stops what a test file started; the sandbox goes last so no process holds it. */
export async function cleanUp(servers: Array<RunningServer | undefined>, sandbox: Sandbox | undefined): Promise<void> {
  await Promise.all(servers.map((server) => server?.process.stop('SIGTERM')))
  killAllProcesses()
  sandbox?.remove()
}

export interface AsUserResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs the executable as another (unprivileged) user. Root ignores directory
 * permissions, so "the install directory is not writable" can only be shown for real
 * by dropping to a user for whom it is not; setpriv does that without a shell.
 */
export function runAsUser(
  uid: number,
  gid: number,
  executable: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs = CLI_TIMEOUT_MS,
): Promise<AsUserResult> {
  const command = process.getuid?.() === 0 ? 'setpriv' : executable
  const commandArgs =
    process.getuid?.() === 0 ? [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', executable, ...args] : args
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** `memsvc embedder create` for a fake embedding server (TEI protocol, no credentials); its id. */
export async function createFakeEmbedderWithCli(
  run: (args: string[]) => Promise<CliRun>,
  embedder: { url: string; dimensions: number },
): Promise<string> {
  const created = await run([
    'embedder',
    'create',
    '--display-name',
    'local',
    '--provider-type',
    'TEI',
    '--endpoint-url',
    embedder.url,
    '--model-identifier',
    'hashed-bow',
    '--dimensionality',
    String(embedder.dimensions),
    '--no-credentials',
    '-o',
    'json',
  ])
  return created.json<{ embedderId: string }>().embedderId
}
