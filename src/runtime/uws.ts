import type * as UwsTypes from 'uWebSockets.js'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { readAsset } from './assets.js'
import { cacheDir } from './paths.js'

export type Uws = typeof UwsTypes

/** Node 24's module ABI; the embedded addon is compiled against exactly this one (scripts/build/uws-addon.ts). */
const SUPPORTED_NODE_ABI = '137'

let loaded: Uws | undefined

/**
 * Loads the native uWebSockets.js addon, which the build compiles from the sources in
 * third_party/uWebSockets.js. It is loaded directly, never through a package's entry
 * point (those silently fall back to a slow pure-JS server), and a failure is fatal.
 * The addon is extracted once per content hash into the per-user cache, then dlopen'ed.
 */
export function loadUws(): Uws {
  if (loaded) return loaded
  if (process.platform !== 'linux' || process.arch !== 'x64' || process.versions.modules !== SUPPORTED_NODE_ABI) {
    throw new Error(
      `the embedded HTTP addon supports linux-x64 with Node ABI ${SUPPORTED_NODE_ABI}; ` +
        `this is ${process.platform}-${process.arch} ABI ${process.versions.modules}`,
    )
  }
  const binary = readAsset('uws.node')
  const digest = crypto.createHash('sha256').update(binary).digest('hex').slice(0, 16)
  const target = path.join(cacheDir(), `uws-${digest}.node`)
  if (!fs.existsSync(target)) {
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
    // Write to a private temp name and rename, so concurrent starts never dlopen a partial file.
    const partial = `${target}.${process.pid}.tmp`
    fs.writeFileSync(partial, binary, { mode: 0o500 })
    fs.renameSync(partial, target)
  }
  const module = { exports: {} as Uws }
  try {
    process.dlopen(module, target)
  } catch (error) {
    throw new Error(`cannot load the native HTTP addon from ${target}: ${(error as Error).message}`, { cause: error })
  }
  if (typeof module.exports.App !== 'function') throw new Error(`native HTTP addon at ${target} has no App export`)
  loaded = module.exports
  return loaded
}
