// USE-lite's tokenizer as a Hugging Face tokenizer.json, so that memsvc's LOCAL embedder
// (@huggingface/tokenizers) reads it like any sentence-transformers export. USE-lite ships
// a SentencePiece unigram vocabulary and tokenises in JavaScript (tfjs-models'
// universal-sentence-encoder Tokenizer): NFKC, spaces to "▁", one "▁" in front of a
// non-empty text, then the most probable segmentation (Viterbi) over the vocabulary. Here
// that is a normaliser sequence and a Unigram model over the same pieces and scores.
// test/integration/default-model.test.ts checks that both give the same ids.
import type { Vocabulary } from './use-lite-package.js'

/** SentencePiece's word-boundary mark, U+2581 LOWER ONE EIGHTH BLOCK. */
const WORD_BOUNDARY = '\u2581'
/** Id 0 is the unknown piece; every character no piece covers becomes it (consecutive ones merged). */
const UNKNOWN_ID = 0
/**
 * Ids 1-5 (<s>, </s>, extra_token_id_1..3) are control symbols USE-lite's tokenizer never
 * produces: it leaves them out of its search. A Unigram model searches every piece, so they
 * get a score no segmentation would pick.
 */
const FIRST_ORDINARY_ID = 6
const NEVER_CHOSEN_SCORE = -1e9

/** The tokenizer.json (format 1.0) that tokenises as USE-lite does. */
export function useLiteTokenizerJson(vocabulary: Vocabulary): Record<string, unknown> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'NFKC' },
        { type: 'Replace', pattern: { String: ' ' }, content: WORD_BOUNDARY },
        // Only a non-empty text gets it, as in USE-lite: the tokenizers skip an empty text
        // before normalising (@huggingface/tokenizers) or prepend to none (Rust).
        { type: 'Prepend', prepend: WORD_BOUNDARY },
      ],
    },
    pre_tokenizer: null,
    // No [CLS]/[SEP]: USE-lite reads the text's pieces alone.
    post_processor: null,
    decoder: { type: 'Metaspace', replacement: WORD_BOUNDARY, prepend_scheme: 'always', split: false },
    model: {
      type: 'Unigram',
      unk_id: UNKNOWN_ID,
      byte_fallback: false,
      vocab: vocabulary.map(([piece, score], id) => [
        piece,
        id !== UNKNOWN_ID && id < FIRST_ORDINARY_ID ? NEVER_CHOSEN_SCORE : score,
      ]),
    },
  }
}
