// `memsvc upgrade --from memsvc-<version>-linux-x64.tar.gz`: the executable AND its
// licences from a release bundle. In an installed layout (system install: releases/ and
// a `current` symlink) the new release becomes current with one rename and the old one
// stays for rollback. A bare copy with licenses/ beside it gets the executable renamed
// over (old kept as memsvc.old) and licenses/ swapped right after (old kept as licenses.old).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  activateRelease,
  EXECUTABLE_NAME,
  installedPrefixOf,
  LICENSES_DIR,
  MODELS_DIR,
  type ReleaseFiles,
} from '../../install/releases.js'
import { CliError, EXIT_FAILED } from '../exit-codes.js'
import { runVersion } from './install.js'

export interface Unpacked {
  files: ReleaseFiles
  version: string
  /** Removes the temporary directory. */
  remove(): void
}

/** Unpacks a verified bundle into a temp directory and proves its executable runs. */
export async function unpackBundle(tarball: string): Promise<Unpacked> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bundle-'))
  const remove = () => fs.rmSync(dir, { recursive: true, force: true })
  try {
    // tar is on every Linux host; the bundle was checked against its SHA-256 before this.
    execFileSync('tar', ['-xzf', tarball, '-C', dir, '--no-same-owner'], { stdio: ['ignore', 'ignore', 'pipe'] })
    const [top, ...others] = fs.readdirSync(dir)
    const models = top ? path.join(dir, top, MODELS_DIR) : undefined
    const files =
      top && others.length === 0
        ? {
            executable: path.join(dir, top, EXECUTABLE_NAME),
            licenses: path.join(dir, top, LICENSES_DIR),
            models: models && fs.existsSync(models) ? models : undefined,
          }
        : undefined
    if (!files || !fs.existsSync(files.executable) || !fs.existsSync(files.licenses)) {
      throw new CliError(
        `${tarball} is not a memsvc release bundle (one directory holding memsvc and licenses/)`,
        EXIT_FAILED,
      )
    }
    return { files, version: await runVersion(files.executable), remove }
  } catch (error) {
    remove()
    if (error instanceof CliError) throw error
    throw new CliError(
      `cannot unpack ${tarball}: ${(error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message}`,
      EXIT_FAILED,
    )
  }
}

export interface Swapped {
  layout: 'release' | 'flat'
  /** Where the new executable now is. */
  target: string
  /** How to go back to the old version. */
  rollback: string
}

function replaceWithBackup(source: string, target: string, copy: (from: string, to: string) => void): void {
  const staged = `${target}.new`
  const backup = `${target}.old`
  fs.rmSync(staged, { recursive: true, force: true })
  copy(source, staged)
  fs.rmSync(backup, { recursive: true, force: true })
  if (fs.existsSync(target)) fs.renameSync(target, backup)
  fs.renameSync(staged, target)
}

/** Puts the unpacked release in place of the running executable (see the file comment). */
export function swapInBundle(current: string, unpacked: Unpacked): Swapped {
  const prefix = installedPrefixOf(current)
  if (prefix) {
    const activated = activateRelease(prefix, unpacked.version, unpacked.files)
    const back = activated.previous ? path.relative(prefix, activated.previous) : undefined
    return {
      layout: 'release',
      target: path.join(activated.release, EXECUTABLE_NAME),
      rollback: back ? `ln -sfn ${back} ${path.join(prefix, 'current')}` : 'nothing to roll back to (same release)',
    }
  }
  const dir = path.dirname(fs.realpathSync(current))
  const target = path.join(dir, path.basename(current))
  replaceWithBackup(unpacked.files.executable, target, (from, to) => {
    fs.copyFileSync(from, to)
    fs.chmodSync(to, 0o755)
  })
  replaceWithBackup(unpacked.files.licenses, path.join(dir, LICENSES_DIR), (from, to) =>
    fs.cpSync(from, to, { recursive: true }),
  )
  return {
    layout: 'flat',
    target,
    rollback: `mv ${target}.old ${target} && rm -r ${dir}/${LICENSES_DIR} && mv ${dir}/${LICENSES_DIR}.old ${dir}/${LICENSES_DIR}`,
  }
}
