import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { type AssetName, ONNX_RUNTIME_ASSETS } from './asset-manifest.js'
import { readAsset } from './assets.js'
import { cacheDir } from './paths.js'

/**
 * onnxruntime-node's native addon and the onnxruntime library it links (46 MB), for the
 * standalone executable: a SEA holds them as assets, and a shared library can only be
 * loaded from a file. They are written once per content into one directory of the per-user
 * cache, beside each other, because the addon finds the library through its RUNPATH
 * ($ORIGIN). The inference threads then load the addon from there with process.dlopen
 * (scripts/build/onnxruntime-binding.cjs, which the build puts in place of
 * onnxruntime-node's own loader). From source, onnxruntime-node loads them from node_modules.
 */

/** Writes `name` into `dir` unless a file of that content is there: a private temp name, then a rename. */
function writeOnce(dir: string, name: AssetName, content: Buffer): void {
  const target = path.join(dir, name)
  if (fs.existsSync(target) && fs.statSync(target).size === content.length) return
  const partial = `${target}.${process.pid}.tmp`
  fs.writeFileSync(partial, content, { mode: 0o500 })
  fs.renameSync(partial, target)
}

let extracted: string | undefined

/** The directory holding the addon and its library, extracted on first call (a few hundred ms, once per version). */
export function extractOnnxRuntime(): string {
  if (extracted) return extracted
  const contents = ONNX_RUNTIME_ASSETS.map((name) => [name, readAsset(name)] as const)
  const digest = crypto.createHash('sha256')
  for (const [, content] of contents) digest.update(content)
  const dir = path.join(cacheDir(), `onnxruntime-${digest.digest('hex').slice(0, 16)}`)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  for (const [name, content] of contents) writeOnce(dir, name, content)
  extracted = dir
  return dir
}
