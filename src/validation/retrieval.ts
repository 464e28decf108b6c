import * as v from 'valibot'
import { boundedText, choiceOf, filterTextSchema, integerFrom, listOf, numberFrom, uuidSchema } from './common.js'
import { DEFAULT_REQUESTED_SIZE, MAX_MESSAGE_LENGTH, MAX_REQUESTED_SIZE, MAX_TEMPERATURE } from './limits.js'
import { MAX_RETRIEVAL_WEIGHT, MAX_SPACE_EMBEDDERS } from './memory.js'

export const RETRIEVAL_MODES = ['HYBRID', 'VECTOR', 'KEYWORD'] as const
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number]

/** Defined in limits.ts, which the console shares; the server's code reads them from here as well. */
export { DEFAULT_REQUESTED_SIZE, MAX_MESSAGE_LENGTH, MAX_REQUESTED_SIZE }
export const MAX_SPACE_KEYS = 20
/** pgvector takes ef_search from 1 to 1,000. */
export const MAX_EF_SEARCH = 1_000
export const MAX_SYSTEM_PROMPT_LENGTH = 20_000

export const embedderWeightSchema = v.strictObject({
  embedderId: uuidSchema,
  weight: numberFrom(0, MAX_RETRIEVAL_WEIGHT),
})

export const spaceKeySchema = v.strictObject({
  spaceId: uuidSchema,
  embedderWeights: v.optional(
    v.pipe(
      listOf(embedderWeightSchema, MAX_SPACE_EMBEDDERS, `at most ${MAX_SPACE_EMBEDDERS} entries`),
      v.check(
        (entries) => new Set(entries.map((entry) => entry.embedderId)).size === entries.length,
        'names the same embedder twice',
      ),
    ),
  ),
  filter: v.optional(filterTextSchema),
})

export const postProcessorSchema = v.strictObject({
  rerankerId: v.optional(uuidSchema),
  relevanceThreshold: v.optional(numberFrom(0, 1)),
  chronologicalResort: v.optional(v.boolean('must be true or false')),
  llmId: v.optional(uuidSchema),
  llmTemperature: v.optional(numberFrom(0, MAX_TEMPERATURE)),
  maxResults: v.optional(integerFrom(1, MAX_REQUESTED_SIZE)),
  systemPrompt: v.optional(boundedText(MAX_SYSTEM_PROMPT_LENGTH)),
})

export const retrieveMemoriesSchema = v.strictObject({
  message: v.pipe(
    boundedText(MAX_MESSAGE_LENGTH),
    v.check((text) => text.trim().length > 0, 'must not be empty'),
  ),
  spaceKeys: v.pipe(
    listOf(spaceKeySchema, MAX_SPACE_KEYS, `at most ${MAX_SPACE_KEYS} spaces`),
    v.minLength(1, 'name at least one space'),
    v.check((keys) => new Set(keys.map((key) => key.spaceId)).size === keys.length, 'names the same space twice'),
  ),
  requestedSize: v.optional(integerFrom(1, MAX_REQUESTED_SIZE)),
  fetchMemory: v.optional(v.boolean('must be true or false')),
  fetchMemoryContent: v.optional(v.boolean('must be true or false')),
  mode: v.optional(choiceOf(RETRIEVAL_MODES)),
  hnsw: v.optional(v.strictObject({ efSearch: v.optional(integerFrom(1, MAX_EF_SEARCH)) })),
  postProcessor: v.optional(postProcessorSchema),
})

export type RetrieveMemoriesRequest = v.InferOutput<typeof retrieveMemoriesSchema>
