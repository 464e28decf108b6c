import fs from 'node:fs'
import { isStandalone } from './environment.js'

/**
 * Settings of the process itself that decide much of what a server keeps in memory. They are
 * read when the process starts, so `memsvc serve` replaces itself (execve: same pid, same
 * systemd unit) with a copy that has them, before any other module of the executable runs.
 *
 * The embedded server is the one meant for small hosts; it gets two:
 *
 * - glibc raises its mmap threshold each time a large block is freed, up to 32 MB, and
 *   then serves later large blocks from its heaps, which it seldom gives back. The
 *   optimising compiler's scratch memory at start-up (16 MB blocks) stayed in the process
 *   that way for good: about 30 MiB of an idle embedded server. A fixed threshold
 *   (MALLOC_MMAP_THRESHOLD_) keeps such blocks in their own mappings, returned when freed.
 * - V8 lets its young generation grow to 16 MB per semi-space, and keeps it at that size;
 *   the embedded database, not the heap, bounds this server's throughput.
 *
 * Measured on the same data directory, idle 15 s after READY: 243 MiB without either,
 * 223 MiB with the semi-space alone, 198 MiB with both (bench/README, "Embedded memory").
 *
 * The server on PostgreSQL (--db-url) gets 16 MB semi-spaces instead of Node 24's 64 (a young
 * generation of 32 MiB instead of 128). With 128, once V8 has sized its old generation from
 * what is live (after any collection that reduced memory: V8's own memory reducer on an idle
 * server, or src/runtime/idle-memory.ts) its headroom (some 70 MiB over 20 live) is below
 * the young generation's size, and V8 then starts a full collection every 150 ms under
 * load: 4–5 s of GC in 30 s where there had been under 1, and a quarter of the rate gone. At
 * 32 MiB that does not happen, the rate is the same and the RSS under load is some 100 MiB
 * lower (bench/README, "Memory after load").
 *
 * A value the operator set is kept as it is.
 */
const MMAP_THRESHOLD_BYTES = 128 * 1024
const SEMI_SPACE_MB = 1
const EXTERNAL_SEMI_SPACE_MB = 16

/** Set in the replacement: when the first process started (epoch ms), and that it must not replace itself again. */
export const REEXEC_ORIGIN_ENV = 'MEMSVC_REEXEC_ORIGIN_MS'

/** `memsvc serve` on the embedded database, as far as the command line and environment tell before parsing. */
export function servesEmbedded(args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return runsServer(args) && !env.DB_URL && !args.some(namesDatabaseUrl)
}

/** `memsvc serve` on PostgreSQL (--db-url or DB_URL), as far as the command line and environment tell before parsing. */
export function servesExternal(args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return runsServer(args) && (Boolean(env.DB_URL) || args.some(namesDatabaseUrl))
}

const namesDatabaseUrl = (arg: string) => /^--(db-url|dbUrl)(=|$)/.test(arg)

function runsServer(args: readonly string[]): boolean {
  const command = args.find((arg) => !arg.startsWith('-'))
  return command === 'serve' && !args.some((arg) => arg === '--help' || arg === '-h' || arg === '--version')
}

/** The environment the replacement runs with, or undefined when this process already has it (or must keep its own). */
export function smallHostEnvironment(env: NodeJS.ProcessEnv, startedAtMs: number): NodeJS.ProcessEnv | undefined {
  if (env[REEXEC_ORIGIN_ENV] !== undefined) return undefined
  const needsMalloc = env.MALLOC_MMAP_THRESHOLD_ === undefined
  const needsSemiSpace = !/--max-semi-space-size\b/.test(env.NODE_OPTIONS ?? '')
  if (!needsMalloc && !needsSemiSpace) return undefined
  return {
    ...env,
    ...(needsMalloc ? { MALLOC_MMAP_THRESHOLD_: String(MMAP_THRESHOLD_BYTES) } : {}),
    ...(needsSemiSpace
      ? { NODE_OPTIONS: [env.NODE_OPTIONS, `--max-semi-space-size=${SEMI_SPACE_MB}`].filter(Boolean).join(' ') }
      : {}),
    [REEXEC_ORIGIN_ENV]: String(Math.round(startedAtMs)),
  }
}

/** The same for the server on PostgreSQL: only the young generation's size. */
export function externalServerEnvironment(env: NodeJS.ProcessEnv, startedAtMs: number): NodeJS.ProcessEnv | undefined {
  if (env[REEXEC_ORIGIN_ENV] !== undefined) return undefined
  if (/--max-semi-space-size\b/.test(env.NODE_OPTIONS ?? '')) return undefined
  return {
    ...env,
    NODE_OPTIONS: [env.NODE_OPTIONS, `--max-semi-space-size=${EXTERNAL_SEMI_SPACE_MB}`].filter(Boolean).join(' '),
    [REEXEC_ORIGIN_ENV]: String(Math.round(startedAtMs)),
  }
}

/**
 * Milliseconds from the first process's start to this one's (0 when this is the first): the
 * start-up timeline counts from the first, so that READY's startupMs includes the replacement.
 */
export function reexecOffsetMs(env: NodeJS.ProcessEnv = process.env): number {
  const origin = Number(env[REEXEC_ORIGIN_ENV])
  return Number.isFinite(origin) && origin > 0 ? Math.max(0, performance.timeOrigin - origin) : 0
}

// Only the executable: from source (tsx, the tests) execPath is Node with the source's own arguments.
if (isStandalone && typeof process.execve === 'function') {
  const args = process.argv.slice(2)
  const replacement = servesEmbedded(args, process.env)
    ? smallHostEnvironment(process.env, performance.timeOrigin)
    : servesExternal(args, process.env)
      ? externalServerEnvironment(process.env, performance.timeOrigin)
      : undefined
  // A standalone executable's argv repeats its path (argv[1]) for Node's sake; the OS passed it once.
  // Node 24 aborts the process when execve(2) itself fails (it throws only for bad arguments),
  // so what can be checked beforehand is: only memory is at stake, and the server runs on.
  if (replacement && canExecute(process.execPath)) {
    try {
      process.execve(process.execPath, [process.execPath, ...process.argv.slice(2)], replacement)
    } catch (error) {
      process.stderr.write(
        `memsvc: could not restart with its memory settings (${(error as Error).message}); continuing without them\n`,
      )
    }
  }
}

function canExecute(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}
