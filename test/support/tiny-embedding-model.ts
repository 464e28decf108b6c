import fs from 'node:fs'
import path from 'node:path'
import {
  ONNX_FLOAT,
  ONNX_INT64,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValue,
  onnxModelBytes,
} from '../../scripts/default-model/onnx-writer.js'
import { seededRandom } from './seeded-random.js'

/**
 * A small sentence-embedding model in the sentence-transformers ONNX layout, written by the
 * tests themselves: no MiniLM-class weights are reachable from the project's machines.
 *
 * The graph is BERT-shaped (input_ids and attention_mask in, optionally token_type_ids;
 * last_hidden_state [batch, sequence, dimensions] out) but has no attention: each token's
 * state is tanh(E[token] (+ T[type]) · W + b) with random E, T, W and b. Mean pooling over
 * it is then a hashed bag of words, so texts that share words really are close, and
 * semantic quality is nothing to measure. The tokenizer is a WordPiece over a vocabulary
 * written here (every lower-case ASCII word tokenizes, letter by letter at worst).
 */

export const TINY_MODEL_WORDS = [
  'the',
  'a',
  'of',
  'in',
  'is',
  'and',
  'to',
  'which',
  'what',
  'where',
  'tower',
  'paris',
  'eiffel',
  'iron',
  'france',
  'city',
  'river',
  'seine',
  'rose',
  'roses',
  'garden',
  'prune',
  'pruning',
  'spring',
  'flower',
  'water',
  'cat',
  'dog',
  'sleeps',
  'sofa',
  'moon',
  'europa',
  'jupiter',
  'ice',
  'ocean',
  'planet',
  'memory',
  'note',
  'coffee',
  'tea',
  'morning',
  'bread',
  'bake',
  'oven',
  'train',
  'station',
  'ticket',
  'music',
  'piano',
  'song',
]
const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('')
const PUNCTUATION = ['.', ',', '?', '!', "'", '-', ':', ';', '(', ')']
const SUFFIXES = ['##s', '##ing', '##ed', '##er']
/** A feed-forward block widens the state this many times, as BERT's intermediate layer does. */
const FEED_FORWARD_WIDENING = 4

export interface TinyModelOptions {
  /** Written into this directory (created). */
  dir: string
  dimensions?: number
  /** sentence_bert_config.json max_seq_length: the model's token limit. */
  maxTokens?: number
  pooling?: 'mean' | 'cls' | 'max'
  /** modules.json with a Normalize module: the model's vectors are unit length. */
  normalize?: boolean
  /** The graph takes token_type_ids, as BERT exports do (MiniLM, bge); others (e5-mistral, gte) may not. */
  tokenTypeIds?: boolean
  /** Where the graph goes: model.onnx, onnx/model.onnx, or model_quantized.onnx. */
  modelFile?: 'model.onnx' | 'onnx/model.onnx' | 'model_quantized.onnx'
  /** Random weights from this seed: two models of one seed are the same model. */
  seed?: number
  /** false: no tokenizer.json (a broken model directory). */
  tokenizer?: boolean
  /** 1_Pooling/config.json's word_embedding_dimension; defaults to the real one. */
  declaredDimensions?: number
  /**
   * Feed-forward blocks after the projection (state + tanh(state · W1) · W2, W1 widening 4×),
   * for the compute of a real encoder: 6 blocks at 384 dimensions cost about what
   * all-MiniLM-L6-v2 does per token. None by default: tests want a small, fast model.
   */
  feedForwardLayers?: number
}

export interface TinyModel {
  dir: string
  modelFile: string
  dimensions: number
  maxTokens: number
  vocabulary: string[]
}

function randomTensor(name: string, dims: number[], random: () => number, scale: number): OnnxTensor {
  const values = new Float32Array(dims.reduce((product, dim) => product * dim, 1))
  for (let index = 0; index < values.length; index++) values[index] = (random() * 2 - 1) * scale
  return { name, dims, values }
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

function tokenizerJson(vocabulary: string[]) {
  const id = (token: string) => vocabulary.indexOf(token)
  const special = (token: string) => ({
    id: id(token),
    content: token,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  })
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(
        ['[CLS]', '[SEP]'].map((token) => [token, { id: token, ids: [id(token)], tokens: [token] }]),
      ),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocabulary.map((token, index) => [token, index])),
    },
  }
}

/** Writes the model directory and answers what it holds. */
export function writeTinyEmbeddingModel(options: TinyModelOptions): TinyModel {
  const dimensions = options.dimensions ?? 32
  const maxTokens = options.maxTokens ?? 128
  const modelFile = options.modelFile ?? 'onnx/model.onnx'
  const random = seededRandom(options.seed ?? 1)
  const vocabulary = [
    ...SPECIAL_TOKENS,
    ...TINY_MODEL_WORDS,
    ...LETTERS,
    ...LETTERS.map((letter) => `##${letter}`),
    ...SUFFIXES,
    ...PUNCTUATION,
  ]
  const batchBySequence = ['batch', 'sequence']
  const nodes: OnnxNode[] = [{ opType: 'Gather', inputs: ['word_embeddings', 'input_ids'], outputs: ['words'] }]
  const initializers = [randomTensor('word_embeddings', [vocabulary.length, dimensions], random, 1)]
  let embedded = 'words'
  if (options.tokenTypeIds !== false) {
    initializers.push(randomTensor('token_type_embeddings', [2, dimensions], random, 0.1))
    nodes.push(
      { opType: 'Gather', inputs: ['token_type_embeddings', 'token_type_ids'], outputs: ['types'] },
      { opType: 'Add', inputs: ['words', 'types'], outputs: ['embedded'] },
    )
    embedded = 'embedded'
  }
  initializers.push(
    randomTensor('dense_weight', [dimensions, dimensions], random, 1 / Math.sqrt(dimensions)),
    randomTensor('dense_bias', [dimensions], random, 0.01),
  )
  const layers = options.feedForwardLayers ?? 0
  nodes.push(
    { opType: 'MatMul', inputs: [embedded, 'dense_weight'], outputs: ['projected'] },
    { opType: 'Add', inputs: ['projected', 'dense_bias'], outputs: ['biased'] },
    { opType: 'Tanh', inputs: ['biased'], outputs: [layers === 0 ? 'last_hidden_state' : 'layer_0'] },
  )
  const widened = dimensions * FEED_FORWARD_WIDENING
  for (let layer = 0; layer < layers; layer++) {
    const [input, output] = [`layer_${layer}`, layer === layers - 1 ? 'last_hidden_state' : `layer_${layer + 1}`]
    initializers.push(
      randomTensor(`ff_${layer}_in`, [dimensions, widened], random, 1 / Math.sqrt(dimensions)),
      randomTensor(`ff_${layer}_out`, [widened, dimensions], random, 1 / Math.sqrt(widened)),
    )
    nodes.push(
      { opType: 'MatMul', inputs: [input, `ff_${layer}_in`], outputs: [`ff_${layer}_wide`] },
      { opType: 'Tanh', inputs: [`ff_${layer}_wide`], outputs: [`ff_${layer}_active`] },
      { opType: 'MatMul', inputs: [`ff_${layer}_active`, `ff_${layer}_out`], outputs: [`ff_${layer}_narrow`] },
      { opType: 'Add', inputs: [input, `ff_${layer}_narrow`], outputs: [output] },
    )
  }
  const inputNames = ['input_ids', 'attention_mask', ...(options.tokenTypeIds !== false ? ['token_type_ids'] : [])]
  const bytes = onnxModelBytes({
    name: 'tiny_sentence_encoder',
    nodes,
    initializers,
    inputs: inputNames.map((name): OnnxValue => ({ name, elementType: ONNX_INT64, shape: batchBySequence })),
    outputs: [{ name: 'last_hidden_state', elementType: ONNX_FLOAT, shape: [...batchBySequence, dimensions] }],
  })
  fs.mkdirSync(path.join(options.dir, path.dirname(modelFile)), { recursive: true })
  fs.writeFileSync(path.join(options.dir, modelFile), bytes)

  if (options.tokenizer !== false) {
    writeJson(path.join(options.dir, 'tokenizer.json'), tokenizerJson(vocabulary))
    writeJson(path.join(options.dir, 'tokenizer_config.json'), {
      do_lower_case: true,
      model_max_length: 512,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
      tokenizer_class: 'BertTokenizer',
    })
  }
  writeJson(path.join(options.dir, 'config.json'), {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: dimensions,
    max_position_embeddings: 512,
    vocab_size: vocabulary.length,
  })
  writeJson(path.join(options.dir, 'sentence_bert_config.json'), { max_seq_length: maxTokens, do_lower_case: false })
  const pooling = options.pooling ?? 'mean'
  writeJson(path.join(options.dir, '1_Pooling', 'config.json'), {
    word_embedding_dimension: options.declaredDimensions ?? dimensions,
    pooling_mode_cls_token: pooling === 'cls',
    pooling_mode_mean_tokens: pooling === 'mean',
    pooling_mode_max_tokens: pooling === 'max',
    pooling_mode_mean_sqrt_len_tokens: false,
  })
  writeJson(path.join(options.dir, 'modules.json'), [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    ...(options.normalize !== false
      ? [{ idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' }]
      : []),
  ])
  return { dir: options.dir, modelFile, dimensions, maxTokens, vocabulary }
}
