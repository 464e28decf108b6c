// The settings files of the default model's directory, in the sentence-transformers layout
// memsvc's loader reads (src/providers/local/model-directory.ts):
//   - config.json, tokenizer_config.json: the token limit, 128. USE-lite's graph reads the
//     first 128 tokens of a text and drops the rest (its ClipToMaxLength), so the loader
//     cuts there too, and records the cut on the chunk.
//   - 1_Pooling/config.json: mean pooling of 512 dimensions. The graph already pools (mean
//     over the tokens, then a tanh layer) and gives one vector per text; its 2-D output is
//     used as it is, and the loader checks the dimension against word_embedding_dimension.
//   - modules.json: a Normalize module, which says the vectors are unit length; the graph
//     already L2-normalises them, so normalising again changes nothing.
import { EMBEDDING_DIMENSIONS } from './convert-use-lite.js'
import { USE_LITE_PACKAGE, type UseLitePackage } from './use-lite-package.js'

/** The most tokens USE-lite reads of a text: its graph keeps positions below this. */
export const MAX_TOKENS = 128
export const POOLING_DIR = '1_Pooling'

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/** Settings files by path relative to the model directory. */
export function modelSettingsFiles(source: UseLitePackage): Record<string, string> {
  return {
    'config.json': json({
      model_type: 'universal-sentence-encoder-lite',
      hidden_size: EMBEDDING_DIMENSIONS,
      max_position_embeddings: MAX_TOKENS,
      vocab_size: source.vocabulary.length,
      converted_from: `${USE_LITE_PACKAGE}@${source.version}`,
    }),
    'tokenizer_config.json': json({
      tokenizer_class: 'PreTrainedTokenizerFast',
      model_max_length: MAX_TOKENS,
      // Ids are all memsvc takes from the tokenizer; decoding is left as the pieces say.
      clean_up_tokenization_spaces: false,
    }),
    [`${POOLING_DIR}/config.json`]: json({
      word_embedding_dimension: EMBEDDING_DIMENSIONS,
      pooling_mode_cls_token: false,
      pooling_mode_mean_tokens: true,
      pooling_mode_max_tokens: false,
      pooling_mode_mean_sqrt_len_tokens: false,
    }),
    'modules.json': json([
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: POOLING_DIR, type: 'sentence_transformers.models.Pooling' },
      { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
    ]),
  }
}
