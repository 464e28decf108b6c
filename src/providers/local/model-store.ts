import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { LocalModelError, type LocalModelFiles } from './model-directory.js'

/**
 * Putting a model into a models directory (`memsvc model add`): from a directory or a
 * .tar.gz of one, only the files the model is made of (an export may carry several
 * variants of the graph, hundreds of MB each), whole or not at all.
 */

export const ARCHIVE_PATTERN = /\.(tar\.gz|tgz)$/i

export interface UnpackedModel {
  /** The model directory inside the unpacked archive. */
  dir: string
  /** The name the archive suggests: its one top-level directory, else the archive's name. */
  suggestedName: string
  remove(): void
}

/** Unpacks an archive into a temporary directory; the model is its top, or its one top-level directory. */
export function unpackModelArchive(archive: string): UnpackedModel {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-model-'))
  const remove = () => fs.rmSync(temp, { recursive: true, force: true })
  try {
    // tar is on every Linux host, air-gapped ones included.
    execFileSync('tar', ['-xzf', archive, '-C', temp, '--no-same-owner', '--no-same-permissions'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
  } catch (error) {
    remove()
    const reason = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message
    throw new LocalModelError(`cannot unpack ${archive}: ${reason}`)
  }
  const entries = fs.readdirSync(temp)
  const only = entries.length === 1 ? path.join(temp, entries[0]!) : undefined
  if (only && fs.statSync(only).isDirectory()) return { dir: only, suggestedName: entries[0]!, remove }
  return { dir: temp, suggestedName: path.basename(archive).replace(ARCHIVE_PATTERN, ''), remove }
}

/**
 * Copies the model's files into `target` (which must not exist unless `replace`): into a
 * temporary directory beside it, then one rename, so a server never finds half a model.
 * Files are readable by all, as the executable is: the service may run as another user.
 */
export function installModelFiles(files: LocalModelFiles, target: string, replace: boolean): void {
  if (fs.existsSync(target) && !replace)
    throw new LocalModelError(`${target} already exists: choose another --name, or --replace it`)
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 })
  const staging = `${target}.adding-${process.pid}`
  fs.rmSync(staging, { recursive: true, force: true })
  try {
    for (const relative of files.files) {
      const destination = path.join(staging, relative)
      fs.mkdirSync(path.dirname(destination), { recursive: true, mode: 0o755 })
      fs.copyFileSync(path.join(files.dir, relative), destination)
      fs.chmodSync(destination, 0o644)
    }
    if (replace) fs.rmSync(target, { recursive: true, force: true })
    fs.renameSync(staging, target)
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true })
    throw new LocalModelError(`cannot copy the model into ${target}: ${(error as Error).message}`)
  }
}

/** Bytes of the model's files, as a model list shows its size. */
export function modelBytes(files: LocalModelFiles): number {
  return files.files.reduce((total, relative) => total + fs.statSync(path.join(files.dir, relative)).size, 0)
}
