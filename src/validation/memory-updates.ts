import * as v from 'valibot'
import { epochMillisSchema, listOf, pageTokenSchema, textSchema, uuidSchema } from './common.js'
import {
  base64ContentSchema,
  CONTENT_TYPES,
  chunkingConfigSchema,
  memoryPageSizeSchema,
  metadataSchema,
} from './memory.js'

/** Updates and gets of many memories at once: each item answers on its own. */
export const MAX_MEMORY_BATCH_ITEMS = 1_000

const versionSchema = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be 1 or more (a memory starts at version 1)'),
)

/**
 * A merge sets each key given and removes each key whose value is null; the result is then
 * checked as metadata (its size and number of keys).
 */
const metadataMergeSchema = v.pipe(
  v.custom<Record<string, unknown>>(
    (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
    'must be a JSON object',
  ),
  v.check((merge) => Object.keys(merge).length > 0, 'must set or remove at least one key'),
)

/** What an update may change, besides naming its memory. */
const updateFields = {
  expectedVersion: v.optional(versionSchema),
  replaceMetadata: v.optional(metadataSchema),
  mergeMetadata: v.optional(metadataMergeSchema),
  validUntil: v.optional(epochMillisSchema),
  clearValidUntil: v.optional(v.boolean('must be true or false')),
  originalContent: v.optional(textSchema()),
  originalContentB64: v.optional(base64ContentSchema),
  contentType: v.optional(v.picklist(CONTENT_TYPES, `must be one of ${CONTENT_TYPES.join(', ')}`)),
  chunkingConfig: v.optional(chunkingConfigSchema),
}

/** PATCH /v1/memories/{id}'s body, as the OpenAPI document describes it: the path names the memory. */
export const updateMemoryBodySchema = v.strictObject(updateFields)

export const updateMemorySchema = v.pipe(
  v.strictObject({ memoryId: uuidSchema, ...updateFields }),
  v.forward(
    v.check(
      (input) => input.replaceMetadata === undefined || input.mergeMetadata === undefined,
      'send replaceMetadata or mergeMetadata, not both',
    ),
    ['mergeMetadata'],
  ),
  v.forward(
    v.check(
      (input) => input.validUntil === undefined || input.clearValidUntil !== true,
      'send validUntil or clearValidUntil, not both',
    ),
    ['clearValidUntil'],
  ),
  v.forward(
    v.check(
      (input) => input.originalContent === undefined || input.originalContentB64 === undefined,
      'send originalContent or originalContentB64, not both',
    ),
    ['originalContentB64'],
  ),
  v.forward(
    v.check(
      (input) =>
        input.replaceMetadata !== undefined ||
        input.mergeMetadata !== undefined ||
        input.validUntil !== undefined ||
        input.clearValidUntil === true ||
        input.originalContent !== undefined ||
        input.originalContentB64 !== undefined ||
        input.contentType !== undefined ||
        input.chunkingConfig !== undefined,
      'name something to change: replaceMetadata, mergeMetadata, validUntil, clearValidUntil, ' +
        'originalContent(B64), contentType or chunkingConfig',
    ),
    ['memoryId'],
  ),
)
export type UpdateMemoryRequest = v.InferOutput<typeof updateMemorySchema>

/** Items are parsed one by one (each answers its own error); only the list is checked here. */
export const batchUpdateMemoriesSchema = v.strictObject({
  requests: v.pipe(
    listOf(v.unknown(), MAX_MEMORY_BATCH_ITEMS, `at most ${MAX_MEMORY_BATCH_ITEMS} requests`),
    v.minLength(1, 'must hold at least one request'),
  ),
})

export const batchGetMemoriesSchema = v.strictObject({
  memoryIds: v.pipe(
    listOf(uuidSchema, MAX_MEMORY_BATCH_ITEMS, `at most ${MAX_MEMORY_BATCH_ITEMS} ids`),
    v.minLength(1, 'must name at least one memory'),
  ),
})

export const memoryHistorySchema = v.strictObject({
  memoryId: uuidSchema,
  maxResults: v.optional(memoryPageSizeSchema),
  nextToken: v.optional(pageTokenSchema),
})
