import path from 'node:path'
import { isMainThread, workerData } from 'node:worker_threads'
import { env, Tensor } from 'onnxruntime-common'
import type { InferenceWorkerData } from './inference-messages.js'

/**
 * Stands in for onnxruntime-node's dist/binding.js in the standalone executable's
 * inference-thread bundle (scripts/build/bundle.ts, ONNX_BINDING_SUBSTITUTE). The original
 * requires the addon by a fixed path under node_modules, which a SEA does not have. Here the
 * addon is loaded from the directory the server's thread extracted it to, beside the
 * onnxruntime library it links (src/runtime/onnxruntime-addon.ts). The exports and
 * initOrt() are the original's, so the rest of onnxruntime-node runs unchanged.
 */

const { onnxRuntimeDir } = (workerData ?? {}) as InferenceWorkerData
if (!onnxRuntimeDir) throw new Error('the inference thread was started without the onnxruntime directory')

/** What this file uses of the addon; onnxruntime-node's backend reads the rest (InferenceSession, …). */
interface OnnxRuntimeAddon {
  initOrtOnce(logLevel: number, tensorConstructor: unknown, isMainThread: boolean): void
  [name: string]: unknown
}

const addon = { exports: {} as OnnxRuntimeAddon }
const addonFile = path.join(onnxRuntimeDir, 'onnxruntime_binding.node')
try {
  process.dlopen(addon, addonFile)
} catch (error) {
  throw new Error(`cannot load the onnxruntime addon from ${addonFile}: ${(error as Error).message}`, { cause: error })
}

export const binding = addon.exports

/** onnxruntime-common's log level names, as binding.js maps them to onnxruntime's severities. */
const LOG_LEVELS: Record<string, number> = { verbose: 0, info: 1, warning: 2, error: 3, fatal: 4 }
const DEFAULT_LOG_LEVEL = LOG_LEVELS.warning!

let initialised = false

export function initOrt(): void {
  if (initialised) return
  initialised = true
  const level = env.logLevel ? LOG_LEVELS[env.logLevel] : DEFAULT_LOG_LEVEL
  if (level === undefined) throw new Error(`Unsupported log level: ${env.logLevel}`)
  binding.initOrtOnce(level, Tensor, isMainThread)
}
