import fs from 'node:fs'
import path from 'node:path'
import type { Logger } from '../observability/logger.js'

/**
 * The data directory holds the database files, the TLS private key and the encryption
 * key: nothing in it is for other users. A umask as well as a mode per write, because
 * the embedded database (PGlite through Emscripten's file system) creates its files
 * with 0666 and directories with 0777 and takes no mode from us.
 */
const PRIVATE_UMASK = 0o077
const PRIVATE_DIR_MODE = 0o700
const OWNER_BITS = 0o700
const GROUP_OR_OTHER_BITS = 0o077
const GROUP_OR_OTHER_WRITE = 0o022

/** A data directory memsvc refuses to use; the serve command exits 2 with its message. */
export class DataDirPermissionError extends Error {}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/**
 * Chmods everything under `dir` that others could read, write or enter, and counts it:
 * what an earlier version (or a copy) left open, which the umask cannot reach, and what
 * the embedded database's initdb chmods to 0666 explicitly. Returns how many it changed.
 */
export function makeOwnerOnly(dir: string): number {
  let changed = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    if (entry.isSymbolicLink()) continue // chmod would follow it out of the directory
    const mode = fs.lstatSync(file).mode
    if (mode & GROUP_OR_OTHER_BITS) {
      fs.chmodSync(file, entry.isDirectory() ? PRIVATE_DIR_MODE : mode & OWNER_BITS)
      changed++
    }
    if (entry.isDirectory()) changed += makeOwnerOnly(file)
  }
  return changed
}

/**
 * Runs before the server writes anything: from here on every file this process creates
 * is owner-only. A directory others can write is refused, not fixed: whoever could
 * write there may already have planted a file or a link, and a chmod would hide that.
 */
export function preparePrivateDataDir(dataDir: string, log: Logger): void {
  process.umask(PRIVATE_UMASK)
  fs.mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE })
  const stat = fs.statSync(dataDir)
  if (!stat.isDirectory()) throw new DataDirPermissionError(`data directory ${dataDir} is not a directory`)
  if (stat.mode & GROUP_OR_OTHER_WRITE) {
    throw new DataDirPermissionError(
      `data directory ${dataDir} is writable by other users (mode ${octal(stat.mode)}); check its contents, then run: chmod 700 ${dataDir}`,
    )
  }
  if (stat.mode & GROUP_OR_OTHER_BITS) fs.chmodSync(dataDir, PRIVATE_DIR_MODE)
  const changed = makeOwnerOnly(dataDir) + (stat.mode & GROUP_OR_OTHER_BITS ? 1 : 0)
  if (changed > 0)
    log.info('made the data directory private to its owner', { dataDir, was: octal(stat.mode), filesChanged: changed })
}
