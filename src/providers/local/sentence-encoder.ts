import * as ort from 'onnxruntime-node'
import { LocalModelError, type LocalModelSettings } from './model-directory.js'
import { ModelTokenizer, type TokenizedText } from './model-tokenizer.js'
import { normaliseRows, poolTokenStates } from './pooling.js'

/**
 * One loaded model: its tokenizer and its onnxruntime session, turning texts into vectors
 * the way sentence-transformers does (tokenise, run the graph, pool, normalise). It runs in
 * an inference thread (inference-worker.ts); each thread loads a model once and keeps it.
 */

/** The graph inputs memsvc knows how to fill; a graph that takes another one is refused at load. */
const INPUT_IDS = 'input_ids'
const ATTENTION_MASK = 'attention_mask'
const TOKEN_TYPE_IDS = 'token_type_ids'
const KNOWN_INPUTS = new Set([INPUT_IDS, ATTENTION_MASK, TOKEN_TYPE_IDS])
/** sentence-transformers exports that pool inside the graph name that output so; others give the token states. */
const POOLED_OUTPUT = 'sentence_embedding'
const TOKEN_STATES_OUTPUT = 'last_hidden_state'

/**
 * Padded tokens one run of the graph takes at most. A batch's texts are sorted by length
 * and run in groups up to this size, so a batch of one long text and many short ones does
 * not compute every short text at the long one's length; large enough that a group of 32
 * texts of 256 tokens (a full ingest batch for MiniLM) is still one run.
 */
export const MAX_PADDED_TOKENS_PER_RUN = 8_192

export interface EncodedTexts {
  /** One vector per text, in input order: [texts, dimensions], row-major. */
  vectors: Float32Array
  dimensions: number
  /** Tokens of each whole text, special tokens included. */
  tokenCounts: Int32Array
  /** Tokens each vector was computed from: fewer than tokenCounts where the text was over the model's limit. */
  keptTokenCounts: Int32Array
}

export class SentenceEncoder {
  private constructor(
    readonly settings: LocalModelSettings,
    readonly tokenizer: ModelTokenizer,
    readonly session: ort.InferenceSession,
    readonly output: string,
  ) {}

  static async load(settings: LocalModelSettings): Promise<SentenceEncoder> {
    const tokenizer = ModelTokenizer.fromFiles(settings.tokenizerFile, settings.tokenizerConfigFile, settings.maxTokens)
    let session: ort.InferenceSession
    try {
      // One thread of onnxruntime per inference thread: the operator's --local-embedder-threads
      // is then exactly the cores inference may take from the server.
      session = await ort.InferenceSession.create(settings.modelFile, {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3,
      })
    } catch (error) {
      throw new LocalModelError(`cannot load the model ${settings.modelFile}: ${(error as Error).message}`)
    }
    const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.has(name))
    if (!session.inputNames.includes(INPUT_IDS) || unknown.length > 0) {
      await session.release()
      throw new LocalModelError(
        `the model ${settings.modelFile} takes the inputs ${session.inputNames.join(', ')}; memsvc fills ` +
          `${[...KNOWN_INPUTS].join(', ')} (input_ids required), as BERT-style sentence-transformers exports take them`,
      )
    }
    const output = [POOLED_OUTPUT, TOKEN_STATES_OUTPUT].find((name) => session.outputNames.includes(name))
    return new SentenceEncoder(settings, tokenizer, session, output ?? session.outputNames[0]!)
  }

  /**
   * Vectors for `texts`, in their order; texts over the token limit (the model's, or a lower
   * `maxTokens`) are cut to it, and keptTokenCounts says so.
   */
  async encode(texts: string[], maxTokens?: number): Promise<EncodedTexts> {
    const tokenized = texts.map((text) => this.tokenizer.tokenize(text, maxTokens))
    const order = texts.map((_, index) => index).sort((a, b) => tokenized[a]!.ids.length - tokenized[b]!.ids.length)
    let vectors: Float32Array | undefined
    let dimensions = 0
    for (let start = 0; start < order.length; ) {
      let end = start + 1
      while (end < order.length && (end - start + 1) * tokenized[order[end]!]!.ids.length <= MAX_PADDED_TOKENS_PER_RUN)
        end++
      const group = order.slice(start, end)
      const pooled = await this.#run(group.map((index) => tokenized[index]!))
      if (!vectors) {
        dimensions = pooled.dimensions
        vectors = new Float32Array(texts.length * dimensions)
      }
      for (const [row, index] of group.entries())
        vectors.set(pooled.vectors.subarray(row * dimensions, (row + 1) * dimensions), index * dimensions)
      start = end
    }
    if (this.settings.normalize && vectors) normaliseRows(vectors, dimensions)
    return {
      vectors: vectors ?? new Float32Array(0),
      dimensions,
      tokenCounts: Int32Array.from(tokenized, (text) => text.tokenCount),
      keptTokenCounts: Int32Array.from(tokenized, (text) => text.ids.length),
    }
  }

  /** One run of the graph over texts padded to the longest, pooled to one vector each. */
  async #run(texts: TokenizedText[]): Promise<{ vectors: Float32Array; dimensions: number }> {
    const length = Math.max(...texts.map((text) => text.ids.length))
    const shape = [texts.length, length]
    const ids = new BigInt64Array(texts.length * length).fill(BigInt(this.tokenizer.padId))
    const mask = new BigInt64Array(texts.length * length)
    const attention = new Uint8Array(texts.length * length)
    for (const [row, text] of texts.entries())
      for (const [column, id] of text.ids.entries()) {
        ids[row * length + column] = BigInt(id)
        mask[row * length + column] = 1n
        attention[row * length + column] = 1
      }
    const feeds: Record<string, ort.Tensor> = { [INPUT_IDS]: new ort.Tensor('int64', ids, shape) }
    const inputs = this.session.inputNames
    if (inputs.includes(ATTENTION_MASK)) feeds[ATTENTION_MASK] = new ort.Tensor('int64', mask, shape)
    // One text per input: every token is of the first segment.
    if (inputs.includes(TOKEN_TYPE_IDS))
      feeds[TOKEN_TYPE_IDS] = new ort.Tensor('int64', new BigInt64Array(ids.length), shape)
    const results = await this.session.run(feeds, [this.output])
    const result = results[this.output]!
    try {
      return this.#pooled(result, texts.length, length, attention)
    } finally {
      result.dispose()
    }
  }

  #pooled(result: ort.Tensor, texts: number, tokens: number, attentionMask: Uint8Array) {
    const dims = result.dims
    if (result.type !== 'float32' || !(result.data instanceof Float32Array))
      throw new LocalModelError(`the model's output ${this.output} is ${result.type}, not float32`)
    if (dims.length === 2 && dims[0] === texts) return { vectors: result.data.slice(), dimensions: dims[1]! }
    if (dims.length !== 3 || dims[0] !== texts || dims[1] !== tokens)
      throw new LocalModelError(
        `the model's output ${this.output} has the shape [${dims.join(', ')}]; expected [texts, tokens, dimensions] ` +
          'or [texts, dimensions]',
      )
    const dimensions = dims[2]!
    const vectors = new Float32Array(texts * dimensions)
    poolTokenStates({ values: result.data, texts, tokens, dimensions, attentionMask }, this.settings.pooling, vectors)
    return { vectors, dimensions }
  }

  async release(): Promise<void> {
    await this.session.release()
  }
}
