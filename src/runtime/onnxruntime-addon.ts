import { ONNX_RUNTIME_ASSETS } from './asset-manifest.js'
import { readAsset } from './assets.js'
import { extractToCache } from './cache-files.js'

/**
 * onnxruntime-node's native addon and the onnxruntime library it links (46 MB), for the
 * standalone executable: a SEA holds them as assets, and a shared library can only be
 * loaded from a file. They are written once per content into one directory of the per-user
 * cache, beside each other, because the addon finds the library through its RUNPATH
 * ($ORIGIN). The inference threads then load the addon from there with process.dlopen
 * (scripts/build/onnxruntime-binding.cjs, which the build puts in place of
 * onnxruntime-node's own loader). From source, onnxruntime-node loads them from node_modules.
 */

let extracted: string | undefined

/** The directory holding the addon and its library, extracted on first call (a few hundred ms, once per version). */
export function extractOnnxRuntime(): string {
  extracted ??= extractToCache(
    'onnxruntime',
    ONNX_RUNTIME_ASSETS.map((name) => [name, readAsset(name)] as const),
  )
  return extracted
}
