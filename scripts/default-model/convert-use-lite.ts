// Universal Sentence Encoder lite as an ONNX graph with the interface of a
// sentence-transformers export: input_ids and attention_mask (int64, [batch, sequence],
// right-padded) in, sentence_embedding (float, [batch, 512], unit length) out. memsvc's
// LOCAL embedder (src/providers/local/sentence-encoder.ts) feeds and reads such a graph as it is.
//
// USE-lite itself takes a sparse batch: `indices` ([tokens, 2] of (row, position)) and
// `values` (the token ids). Its transformer, the mean over the tokens, a tanh layer and the
// L2 normalisation are all inside the graph, so no pooling is left to do outside.

import { OnnxGraphBuilder } from './onnx-graph-builder.js'
import { ONNX_BOOL, ONNX_FLOAT, ONNX_INT32, ONNX_INT64, onnxModelBytes } from './onnx-writer.js'
import { ONNX_OPSET, TfGraphTranslator } from './tf-graph-translator.js'
import type { UseLitePackage } from './use-lite-package.js'

export const INPUT_IDS = 'input_ids'
export const ATTENTION_MASK = 'attention_mask'
export const SENTENCE_EMBEDDING = 'sentence_embedding'
export const EMBEDDING_DIMENSIONS = 512

/** USE-lite's sparse inputs, fed from the dense ones. */
const SPARSE_INDICES = 'indices'
const SPARSE_VALUES = 'values'
/**
 * Where USE-lite computes its dense batch's shape: [last row that has a token + 1, last
 * position + 1], at least [0, 0]. A batch whose last texts have no token would give fewer
 * rows than texts; the converted graph raises the shape to at least [batch, 0].
 */
const DENSE_SHAPE_NODE = 'module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Maximum'
/** The weights of the last layer: their second dimension is the vectors' length. */
const OUTPUT_LAYER_WEIGHTS = 'module/Encoder_en/hidden_layers/tanh_layer_0/weights'
const PRODUCER = 'memsvc scripts/default-model'

/**
 * The sparse inputs from the dense ones: the (row, position) of every token the attention
 * mask keeps, in row-major order as USE's own tokenizer lists them, and its id. The mask
 * must be a run of ones from the start of each row, as right padding makes it. Returns the
 * floor of the dense shape, [batch, 0], so that every row of the batch gets a vector.
 */
function feedSparseInputs(builder: OnnxGraphBuilder): { batchFloor: string } {
  const kept = builder.temporary('Cast', [ATTENTION_MASK], { intAttributes: { to: ONNX_BOOL } })
  const coordinates = builder.temporary('Transpose', [builder.temporary('NonZero', [kept])], {
    intListAttributes: { perm: [1, 0] },
  })
  builder.node('Cast', [coordinates], [SPARSE_INDICES], { intAttributes: { to: ONNX_INT32 } })
  builder.node('Cast', [builder.temporary('GatherND', [INPUT_IDS, coordinates])], [SPARSE_VALUES], {
    intAttributes: { to: ONNX_INT32 },
  })
  const batchSize = builder.temporary('Shape', [INPUT_IDS], { intAttributes: { start: 0, end: 1 } })
  const batch = builder.temporary('Cast', [batchSize], { intAttributes: { to: ONNX_INT32 } })
  const zero = builder.initializer({ name: 'dense_shape_floor_positions', dims: [1], values: new Int32Array([0]) })
  return { batchFloor: builder.temporary('Concat', [batch, zero], { intAttributes: { axis: 0 } }) }
}

/** The serialised ONNX model of USE-lite, with the sentence-transformers interface. */
export function convertUseLite(source: UseLitePackage): Uint8Array {
  const outputWeights = source.weights.get(OUTPUT_LAYER_WEIGHTS)
  if (outputWeights?.shape[1] !== EMBEDDING_DIMENSIONS)
    throw new Error(
      `${source.dir}: expected the last layer ${OUTPUT_LAYER_WEIGHTS} to give ${EMBEDDING_DIMENSIONS} dimensions`,
    )
  const builder = new OnnxGraphBuilder()
  const { batchFloor } = feedSparseInputs(builder)
  const fed = () => {}
  const translator = new TfGraphTranslator(builder, source.nodes, source.weights, {
    [SPARSE_INDICES]: fed,
    [SPARSE_VALUES]: fed,
    // ONNX Max takes any number of operands: the graph's own two, and the floor.
    [DENSE_SHAPE_NODE]: (node, self) =>
      builder.node('Max', [self.input(node, 0), self.input(node, 1), batchFloor], [node.name]),
  })
  translator.translate()
  const outputs = translator.outputNodes()
  if (outputs.length !== 1)
    throw new Error(`${source.dir}: expected one output, found ${outputs.map((node) => node.name).join(', ')}`)
  builder.node('Identity', [outputs[0]!.name], [SENTENCE_EMBEDDING])
  const tokens = ['batch', 'sequence']
  const graph = builder.graph(
    'universal_sentence_encoder_lite',
    [
      { name: INPUT_IDS, elementType: ONNX_INT64, shape: tokens },
      { name: ATTENTION_MASK, elementType: ONNX_INT64, shape: tokens },
    ],
    [{ name: SENTENCE_EMBEDDING, elementType: ONNX_FLOAT, shape: ['batch', EMBEDDING_DIMENSIONS] }],
  )
  return onnxModelBytes(graph, { producer: PRODUCER, opsetVersion: ONNX_OPSET })
}
