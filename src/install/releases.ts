// How an install keeps versions: <prefix>/releases/<version>/{memsvc,licenses/} and a
// symlink <prefix>/current -> releases/<version>. Switching versions is one rename of a
// new symlink over `current` (atomic: a reader sees the old pair or the new pair, never
// a new binary with old licences), and the previous release stays on disk so going back
// is one command. The server finds its licences beside its real path (/proc/self/exe
// resolves the symlink), i.e. inside its own release directory.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export const EXECUTABLE_NAME = 'memsvc'
export const LICENSES_DIR = 'licenses'
/** Embedding models bundled with a release (`npm run release -- --model DIR`), found beside the executable. */
export const MODELS_DIR = 'models'
const EXECUTABLE_MODE = 0o755

export interface ReleaseFiles {
  executable: string
  licenses: string
  /** The bundled models directory, when the release has one. */
  models?: string
}

export interface Activated {
  release: string
  previous?: string
  /** The release was already there with the same executable: nothing was copied. */
  unchanged: boolean
}

export function currentLink(prefix: string): string {
  return path.join(prefix, 'current')
}

export function releasesDir(prefix: string): string {
  return path.join(prefix, 'releases')
}

/** The prefix of an installed layout holding this executable (its real path), or undefined. */
export function installedPrefixOf(executable: string): string | undefined {
  const releaseDir = path.dirname(fs.realpathSync(executable))
  const prefix = path.dirname(path.dirname(releaseDir))
  if (path.basename(path.dirname(releaseDir)) !== 'releases') return undefined
  try {
    return fs.realpathSync(currentLink(prefix)) === releaseDir ? prefix : undefined
  } catch {
    return undefined
  }
}

export function sha256File(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')
}

const randomSuffix = () => crypto.randomBytes(6).toString('hex')
/** A version may carry build metadata ("0.1.0+abc1234"); only path separators are a problem. */
const releaseName = (version: string) => version.replace(/[/\\]/g, '_')

function copyRelease(files: ReleaseFiles, dir: string): void {
  fs.mkdirSync(dir, { mode: EXECUTABLE_MODE })
  const executable = path.join(dir, EXECUTABLE_NAME)
  fs.copyFileSync(files.executable, executable)
  fs.chmodSync(executable, EXECUTABLE_MODE)
  fs.cpSync(files.licenses, path.join(dir, LICENSES_DIR), { recursive: true })
  if (files.models) fs.cpSync(files.models, path.join(dir, MODELS_DIR), { recursive: true })
  const handle = fs.openSync(executable, 'r')
  try {
    fs.fsyncSync(handle)
  } finally {
    fs.closeSync(handle)
  }
}

/** Points <prefix>/current at a release directory with one rename. */
export function pointCurrentAt(prefix: string, release: string): void {
  const temporary = path.join(prefix, `.current-${randomSuffix()}`)
  fs.symlinkSync(path.relative(prefix, release), temporary)
  fs.renameSync(temporary, currentLink(prefix))
}

/** The release `current` points at, if any. */
export function currentRelease(prefix: string): string | undefined {
  try {
    return fs.realpathSync(currentLink(prefix))
  } catch {
    return undefined
  }
}

/**
 * Copies the files into releases/<version> (staged under a temp name first), makes it
 * current, and deletes every release but the new and the previous one.
 */
export function activateRelease(prefix: string, version: string, files: ReleaseFiles): Activated {
  const releases = releasesDir(prefix)
  fs.mkdirSync(releases, { recursive: true, mode: EXECUTABLE_MODE })
  const release = path.join(releases, releaseName(version))
  const previous = currentRelease(prefix)
  const unchanged =
    fs.existsSync(path.join(release, EXECUTABLE_NAME)) &&
    sha256File(path.join(release, EXECUTABLE_NAME)) === sha256File(files.executable)
  if (!unchanged) {
    const staging = path.join(releases, `.staging-${randomSuffix()}`)
    try {
      copyRelease(files, staging)
      if (fs.existsSync(release)) {
        // Same version, different bytes (a rebuild): the old directory goes aside, then away.
        const aside = path.join(releases, `.replaced-${randomSuffix()}`)
        fs.renameSync(release, aside)
        fs.renameSync(staging, release)
        fs.rmSync(aside, { recursive: true, force: true })
      } else {
        fs.renameSync(staging, release)
      }
    } finally {
      fs.rmSync(staging, { recursive: true, force: true })
    }
  }
  if (previous === release) return { release, unchanged } // a reinstall: the rollback release stays as it was
  pointCurrentAt(prefix, release)
  for (const name of fs.readdirSync(releases)) {
    const dir = path.join(releases, name)
    if (dir !== release && dir !== previous) fs.rmSync(dir, { recursive: true, force: true })
  }
  return { release, previous, unchanged }
}
