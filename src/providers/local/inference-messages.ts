import type { LocalModelSettings } from './model-directory.js'

/**
 * What the server's thread and an inference thread (inference-worker.ts) say to each other.
 * Plain data only: structured clone carries it, and the vectors travel as transferred
 * buffers rather than copies.
 */

/** What an inference thread is started with (its workerData). */
export interface InferenceWorkerData {
  /**
   * In the standalone executable: the directory the onnxruntime addon and its library were
   * extracted to (src/runtime/onnxruntime-addon.ts), which the bundled addon loader reads.
   * From source, onnxruntime-node loads them from node_modules and this is absent.
   */
  onnxRuntimeDir?: string
}

export type InferenceRequest =
  /** Vectors for `texts` from `model`, which the thread loads on first use and keeps; at most `maxTokens` per text. */
  | { kind: 'embed'; id: number; model: LocalModelSettings; texts: string[]; maxTokens?: number }
  /** Forget one model (by its revision), to make room for another. */
  | { kind: 'unload'; revision: string }
  /** Release every model, then end. */
  | { kind: 'close' }

export type InferenceReply =
  | {
      kind: 'embedded'
      id: number
      vectors: Float32Array
      dimensions: number
      tokenCounts: Int32Array
      keptTokenCounts: Int32Array
    }
  | {
      kind: 'failed'
      id: number
      message: string
      /** The model itself is at fault (a LocalModelError): the same request would fail again. */
      modelProblem: boolean
    }
  | { kind: 'closed' }
