import fs from 'node:fs'
import { isStandalone } from './environment.js'

/**
 * The embedded server is the one meant for small hosts, and two settings of the process
 * itself decide much of what it keeps when idle. Both are read when the process starts, so
 * `memsvc serve` without --db-url replaces itself (execve: same pid, same systemd unit)
 * with a copy that has them, before any other module of the executable runs:
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
 * A value the operator set for either is kept as it is. The server with --db-url runs with
 * Node's defaults, which its request rate benefits from.
 */
const MMAP_THRESHOLD_BYTES = 128 * 1024
const SEMI_SPACE_MB = 1

/** Set in the replacement: when the first process started (epoch ms), and that it must not replace itself again. */
export const REEXEC_ORIGIN_ENV = 'MEMSVC_REEXEC_ORIGIN_MS'

/** `memsvc serve` on the embedded database, as far as the command line and environment tell before parsing. */
export function servesEmbedded(args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const command = args.find((arg) => !arg.startsWith('-'))
  if (command !== 'serve') return false
  if (env.DB_URL) return false
  return !args.some(
    (arg) => arg === '--help' || arg === '-h' || arg === '--version' || /^--(db-url|dbUrl)(=|$)/.test(arg),
  )
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

/**
 * Milliseconds from the first process's start to this one's (0 when this is the first): the
 * start-up timeline counts from the first, so that READY's startupMs includes the replacement.
 */
export function reexecOffsetMs(env: NodeJS.ProcessEnv = process.env): number {
  const origin = Number(env[REEXEC_ORIGIN_ENV])
  return Number.isFinite(origin) && origin > 0 ? Math.max(0, performance.timeOrigin - origin) : 0
}

// Only the executable: from source (tsx, the tests) execPath is Node with the source's own arguments.
if (isStandalone && typeof process.execve === 'function' && servesEmbedded(process.argv.slice(2), process.env)) {
  const replacement = smallHostEnvironment(process.env, performance.timeOrigin)
  // A standalone executable's argv repeats its path (argv[1]) for Node's sake; the OS passed it once.
  // Node 24 aborts the process when execve(2) itself fails (it throws only for bad arguments),
  // so what can be checked beforehand is: only memory is at stake, and the server runs on.
  if (replacement && canExecute(process.execPath)) {
    try {
      process.execve(process.execPath, [process.execPath, ...process.argv.slice(2)], replacement)
    } catch (error) {
      process.stderr.write(
        `memsvc: could not restart with the small-host memory settings (${(error as Error).message}); continuing without them\n`,
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
