import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { threadId } from 'node:worker_threads'
import { cacheDir } from './paths.js'

/**
 * Files of the standalone executable that something outside JavaScript must read from disk
 * (a native addon for dlopen, data a library opens by path), written into the per-user cache:
 * one directory per content, named by a digest of it, so that a new version never meets an
 * old file and a second start writes nothing.
 */

/**
 * Writes `name` into `dir` unless a file of that size is there: a private temp name, then a
 * rename, so a reader never sees half a file. The temp name holds the thread too: the server's
 * thread and an extraction thread of one process may extract the same file at once.
 */
export function writeOnce(dir: string, name: string, content: Buffer, mode = 0o500): void {
  const target = path.join(dir, name)
  if (fs.existsSync(target) && fs.statSync(target).size === content.length) return
  const partial = `${target}.${process.pid}-${threadId}.tmp`
  fs.writeFileSync(partial, content, { mode })
  fs.renameSync(partial, target)
}

/** Length of the hex digest in a cache directory's name: enough to never meet another content. */
const DIGEST_CHARS = 16

/**
 * Writes `files` (name → content) into `<cache>/<prefix>-<digest of names and contents>` and
 * returns that directory. Subdirectories in names ("fonts/a.pfb") are made as needed.
 */
export function extractToCache(prefix: string, files: Array<readonly [name: string, content: Buffer]>): string {
  const digest = crypto.createHash('sha256')
  for (const [name, content] of files) digest.update(name).update('\0').update(content)
  const dir = path.join(cacheDir(), `${prefix}-${digest.digest('hex').slice(0, DIGEST_CHARS)}`)
  for (const [name, content] of files) {
    const target = path.join(dir, name)
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
    writeOnce(path.dirname(target), path.basename(target), content)
  }
  return dir
}
