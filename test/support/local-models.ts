import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type TinyModel, writeTinyEmbeddingModel } from './tiny-embedding-model.js'

/**
 * A models directory as a data directory holds it (<data-dir>/models), with one good model
 * and the bad ones the server must refuse by name while it keeps running.
 */
export interface TestModels {
  /** The parent directory: pass it as <data-dir> (the models are under its models/). */
  dataDir: string
  modelsDir: string
  /** Mean pooling, normalised, token_type_ids, onnx/model.onnx, 32 dimensions, 128 tokens. */
  tiny: TinyModel
  /** CLS pooling, not normalised, no token_type_ids input, model.onnx at the top, 48 dimensions. */
  tinyCls: TinyModel
  remove(): void
}

/** Names of the model directories the server must refuse, and why each is bad. */
export const BAD_MODELS = {
  /** model.onnx is not an ONNX graph. */
  corrupt: 'corrupt',
  /** No tokenizer.json. */
  untokenized: 'untokenized',
  /** 1_Pooling/config.json says 384 dimensions; the graph returns 32. */
  mismatched: 'mismatched',
  /** Over the memory bound the tests set (--local-model-memory-mb 1 with 2 threads: 0.5 MB each). */
  oversized: 'oversized',
} as const

/** Flags that make `oversized` too big and keep the rest small. */
export const TEST_MODEL_FLAGS = { 'local-model-memory-mb': 1, 'local-embedder-threads': 2 }

export function writeTestModels(): TestModels {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-models-'))
  const modelsDir = path.join(dataDir, 'models')
  const tiny = writeTinyEmbeddingModel({ dir: path.join(modelsDir, 'tiny') })
  const tinyCls = writeTinyEmbeddingModel({
    dir: path.join(modelsDir, 'tiny-cls'),
    dimensions: 48,
    pooling: 'cls',
    normalize: false,
    tokenTypeIds: false,
    modelFile: 'model.onnx',
    seed: 2,
  })
  const corrupt = writeTinyEmbeddingModel({ dir: path.join(modelsDir, BAD_MODELS.corrupt), modelFile: 'model.onnx' })
  fs.writeFileSync(path.join(corrupt.dir, corrupt.modelFile), 'this is not a protobuf, let alone an ONNX graph\n')
  writeTinyEmbeddingModel({ dir: path.join(modelsDir, BAD_MODELS.untokenized), tokenizer: false })
  writeTinyEmbeddingModel({ dir: path.join(modelsDir, BAD_MODELS.mismatched), declaredDimensions: 384 })
  writeTinyEmbeddingModel({ dir: path.join(modelsDir, BAD_MODELS.oversized), dimensions: 512 })
  return { dataDir, modelsDir, tiny, tinyCls, remove: () => fs.rmSync(dataDir, { recursive: true, force: true }) }
}
