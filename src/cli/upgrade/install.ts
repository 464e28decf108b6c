// Putting a verified executable in place. The new file is written beside the target
// (same filesystem, so rename is atomic), proven to run, then renamed over the old
// one; <name>.old is kept until the new one has run in its final place.
import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { CliError, EXIT_FAILED } from '../exit-codes.js'

const VERSION_TIMEOUT_MS = 30_000
const EXECUTABLE_MODE = 0o755
/** Errors that mean "this directory is not ours to write", as opposed to a real failure. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS'])

/** The second per-user install directory the service specification names, ~/.local/bin. */
export function fallbackInstallDir(): string {
  return path.join(os.homedir(), '.local', 'bin')
}

export interface Staged {
  /** The temp file holding the download. */
  file: string
  /** The directory it will be installed into. */
  dir: string
  /** Set when the install directory was not writable and dir is the fallback. */
  fellBackBecause?: string
  /** A throw-away directory (check/dry-run with nothing writable to stage in). */
  scratchDir?: string
  remove(): void
}

function createTemp(dir: string, name: string): string {
  const file = path.join(dir, `.${name}.upgrade-${crypto.randomBytes(6).toString('hex')}`)
  fs.closeSync(fs.openSync(file, 'wx', EXECUTABLE_MODE))
  return file
}

function isNotWritable(error: unknown): boolean {
  return NOT_WRITABLE.has((error as NodeJS.ErrnoException).code ?? '')
}

/**
 * Creates the temp file in the install directory, or when that is not writable in
 * ~/.local/bin. Writability is tested by writing, not by access(): only the kernel
 * knows (root, ACLs, read-only mounts).
 */
export function stage(installDir: string, name: string, { sideEffectFree }: { sideEffectFree: boolean }): Staged {
  const make = (dir: string, extra: Partial<Staged>): Staged => {
    const file = createTemp(dir, name)
    return { file, dir, ...extra, remove: () => fs.rmSync(extra.scratchDir ?? file, { recursive: true, force: true }) }
  }
  try {
    return make(installDir, {})
  } catch (error) {
    if (!isNotWritable(error))
      throw new CliError(`cannot write in ${installDir}: ${(error as Error).message}`, EXIT_FAILED)
    const reason = `${installDir} is not writable (${(error as NodeJS.ErrnoException).code})`
    const fallback = fallbackInstallDir()
    if (sideEffectFree && !fs.existsSync(fallback)) {
      // --check / --dry-run must not create ~/.local/bin; verify in a scratch directory.
      const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-upgrade-'))
      return { ...make(scratchDir, { fellBackBecause: reason, scratchDir }), dir: fallback }
    }
    try {
      fs.mkdirSync(fallback, { recursive: true, mode: EXECUTABLE_MODE })
      return make(fallback, { fellBackBecause: reason })
    } catch (fallbackError) {
      throw new CliError(`${reason}, and neither is ${fallback}: ${(fallbackError as Error).message}`, EXIT_FAILED)
    }
  }
}

/** Runs `<file> --version` and returns what it printed; throws if it does not run cleanly. */
export function runVersion(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      ['--version'],
      { timeout: VERSION_TIMEOUT_MS, encoding: 'utf8', env: process.env },
      (error, stdout, stderr) => {
        const version = stdout.trim()
        if (error || !version) {
          const why = error
            ? ((error as NodeJS.ErrnoException).code ?? (error as { signal?: string }).signal ?? error.message)
            : 'printed nothing'
          const detail = (stderr.trim().split('\n')[0] ?? '').slice(0, 200)
          reject(
            new CliError(
              `the new executable does not run ("--version": ${why}${detail ? `: ${detail}` : ''}); nothing was changed`,
              EXIT_FAILED,
            ),
          )
        } else resolve(version.split('\n')[0]!)
      },
    )
  })
}

/**
 * Renames the staged file over `target`. The old file is first hard-linked (or
 * copied) to <target>.old; if the new one then fails to run, it is put back.
 */
export async function install(staged: Staged, target: string): Promise<string> {
  fs.chmodSync(staged.file, EXECUTABLE_MODE)
  const backup = `${target}.old`
  const hadOld = fs.existsSync(target)
  if (hadOld) {
    fs.rmSync(backup, { force: true })
    try {
      fs.linkSync(target, backup)
    } catch {
      fs.copyFileSync(target, backup)
      fs.chmodSync(backup, fs.statSync(target).mode & 0o7777)
    }
  }
  fs.renameSync(staged.file, target)
  try {
    const version = await runVersion(target)
    if (hadOld) fs.rmSync(backup, { force: true })
    return version
  } catch (error) {
    if (hadOld) fs.renameSync(backup, target)
    else fs.rmSync(target, { force: true })
    throw new CliError(
      `${(error as Error).message.replace(/; nothing was changed$/, '')} after installing; restored the previous ${target}`,
      EXIT_FAILED,
    )
  }
}

/** Whether `dir` is one of the PATH entries (compared after resolving). */
export function isOnPath(dir: string, envPath = process.env.PATH ?? ''): boolean {
  const wanted = path.resolve(dir)
  return envPath.split(path.delimiter).some((entry) => entry && path.resolve(entry) === wanted)
}

/** fsync so that the rename publishes complete bytes even after a crash. */
export function flush(file: string): void {
  const handle = fs.openSync(file, 'r+')
  try {
    fs.fsyncSync(handle)
  } finally {
    fs.closeSync(handle)
  }
}
