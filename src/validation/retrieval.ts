import * as v from 'valibot'
import { boundedText, choiceOf, filterTextSchema, integerFrom, listOf, numberFrom, uuidSchema } from './common.js'
import { DEFAULT_REQUESTED_SIZE, MAX_MESSAGE_LENGTH, MAX_REQUESTED_SIZE, MAX_TEMPERATURE } from './limits.js'
import { embedderEntriesOf, MAX_RETRIEVAL_WEIGHT, MAX_SPACE_EMBEDDERS } from './memory.js'

export const RETRIEVAL_MODES = ['HYBRID', 'VECTOR', 'KEYWORD'] as const
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number]

/** Defined in limits.ts, which the console shares; the server's code reads them from here as well. */
export { DEFAULT_REQUESTED_SIZE, MAX_MESSAGE_LENGTH, MAX_REQUESTED_SIZE }
export const MAX_SPACE_KEYS = 20
/** pgvector takes ef_search from 1 to 1,000. */
export const MAX_EF_SEARCH = 1_000
export const MAX_SYSTEM_PROMPT_LENGTH = 20_000
/** A recency half-life is at most 100 years (of 365.25 days). */
export const MAX_RECENCY_HALF_LIFE_SECONDS = 100 * 365.25 * 24 * 60 * 60
/** How much recency weighs in the final score when the request gives a half-life and no weight. */
export const DEFAULT_RECENCY_WEIGHT = 0.3

export const embedderWeightSchema = v.strictObject({
  embedderId: uuidSchema,
  weight: numberFrom(0, MAX_RETRIEVAL_WEIGHT),
})

export const spaceKeySchema = v.strictObject({
  spaceId: uuidSchema,
  embedderWeights: v.optional(embedderEntriesOf(embedderWeightSchema, `at most ${MAX_SPACE_EMBEDDERS} entries`)),
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

const HALF_LIFE_RANGE = `must be more than 0 and at most ${MAX_RECENCY_HALF_LIFE_SECONDS} (100 years)`

/**
 * Newer memories rank higher: final score = (1 − weight) × relevance + weight × 0.5^(age / halfLife),
 * the age counted from the memory's updatedAt (domain/retrieval.ts withRecency).
 */
export const recencySchema = v.strictObject({
  halfLifeSeconds: v.pipe(
    v.number('must be a number of seconds'),
    v.gtValue(0, HALF_LIFE_RANGE),
    v.maxValue(MAX_RECENCY_HALF_LIFE_SECONDS, HALF_LIFE_RANGE),
    v.description('After this many seconds a memory counts half as recent; more than 0, at most 100 years.'),
  ),
  weight: v.optional(
    v.pipe(
      numberFrom(0, 1),
      v.description(`How much recency weighs in the final score, 0 to 1 (${DEFAULT_RECENCY_WEIGHT} when absent).`),
    ),
  ),
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
  recency: v.optional(
    v.pipe(
      recencySchema,
      v.description(
        'Rank newer memories higher: each item then carries scoreParts. relevanceThreshold compares with the ' +
          'relevance before recency; chronologicalResort orders the items recency chose by creation time.',
      ),
    ),
  ),
  includeExpired: v.optional(
    v.pipe(
      v.boolean('must be true or false'),
      v.description('Include memories whose validUntil has passed (left out when absent or false).'),
    ),
  ),
})

export type RetrieveMemoriesRequest = v.InferOutput<typeof retrieveMemoriesSchema>
