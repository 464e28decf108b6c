import fs from 'node:fs'
import { Tokenizer } from '@huggingface/tokenizers'
import { LocalModelError } from './model-directory.js'

/**
 * A model's tokenizer (@huggingface/tokenizers: pure JavaScript, reads tokenizer.json and
 * tokenizer_config.json) with the model's token limit applied. That library has no
 * truncation of its own, so a text is encoded without special tokens, its tokens cut to
 * what fits, and the special tokens the tokenizer's post-processor puts around one text
 * ([CLS] … [SEP] for BERT, <s> … </s> for RoBERTa) added back: the same ids as the Rust
 * tokenizers' `truncation` gives.
 */

export interface TokenizedText {
  /** Token ids, special tokens included, at most maxTokens of them. */
  ids: number[]
  /** How many tokens the whole text had, special tokens included: more than ids.length when it was cut. */
  tokenCount: number
}

/** A text the post-processor wraps: any word-piece the vocabulary knows will do, to find what it adds around it. */
const FRAMING_PROBE = 'a'

export class ModelTokenizer {
  readonly #tokenizer: Tokenizer
  readonly #prefix: number[]
  readonly #suffix: number[]
  /** The id padding uses: the tokenizer config's pad token, else 0 (BERT's [PAD]). */
  readonly padId: number

  private constructor(
    tokenizer: Tokenizer,
    readonly maxTokens: number,
    padToken: string | undefined,
  ) {
    this.#tokenizer = tokenizer
    const framed = tokenizer.encode(FRAMING_PROBE).ids
    const bare = tokenizer.encode(FRAMING_PROBE, { add_special_tokens: false }).ids
    const start = framed.findIndex((_: number, index: number) =>
      bare.every((id: number, offset: number) => framed[index + offset] === id),
    )
    this.#prefix = start < 0 ? [] : framed.slice(0, start)
    this.#suffix = start < 0 ? [] : framed.slice(start + bare.length)
    if (this.#prefix.length + this.#suffix.length >= maxTokens)
      throw new LocalModelError(`the token limit ${maxTokens} leaves no room for text between the special tokens`)
    this.padId = (padToken === undefined ? undefined : tokenizer.token_to_id(padToken)) ?? 0
  }

  static fromFiles(tokenizerFile: string, tokenizerConfigFile: string | undefined, maxTokens: number): ModelTokenizer {
    const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
    let tokenizer: Tokenizer
    let config: Record<string, unknown> = {}
    try {
      config = tokenizerConfigFile ? read(tokenizerConfigFile) : {}
      tokenizer = new Tokenizer(read(tokenizerFile), config)
    } catch (error) {
      throw new LocalModelError(`cannot read the tokenizer ${tokenizerFile}: ${(error as Error).message}`)
    }
    const padToken = padTokenOf(config.pad_token)
    return new ModelTokenizer(tokenizer, maxTokens, padToken)
  }

  /**
   * The text's ids, cut to `limit` (special tokens kept) when it is longer. The limit is the
   * model's unless a registration asks for fewer tokens (its maxSequenceLength).
   */
  tokenize(text: string, limit = this.maxTokens): TokenizedText {
    const content = this.#tokenizer.encode(text, { add_special_tokens: false }).ids
    const room = Math.max(1, Math.min(limit, this.maxTokens) - this.#prefix.length - this.#suffix.length)
    const tokenCount = content.length + this.#prefix.length + this.#suffix.length
    const kept = content.length > room ? content.slice(0, room) : content
    return { ids: [...this.#prefix, ...kept, ...this.#suffix], tokenCount }
  }
}

/** tokenizer_config.json names the pad token as text or as an AddedToken object. */
function padTokenOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  const content = (value as { content?: unknown } | null)?.content
  return typeof content === 'string' ? content : undefined
}
