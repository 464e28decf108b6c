import * as v from 'valibot'
import {
  epochMillisSchema,
  labelsSchema,
  listOf,
  storableJson,
  textSchema,
  uuidSchema,
  wholeNumberFrom,
} from './common.js'
import { MAX_MODEL_IDENTIFIER_LENGTH, MAX_RETRIEVAL_WEIGHT } from './limits.js'
import {
  chunkingConfigSchema,
  createSpaceSchema,
  MAX_CONTENT_BYTES,
  MAX_METADATA_DEPTH,
  MAX_SPACE_EMBEDDERS,
  memoryFields,
  metadataSchema,
  ocrModeSchema,
} from './memory.js'

/**
 * A space export and import (docs/export-format.md): the requests of both, and the lines of
 * the stream as an import reads them. Vectors are checked by the import itself, value by
 * value (src/domain/space-import.ts): a schema per number cost more than the database's
 * work on the vector.
 */

export const EXPORT_FORMAT = 'memsvc-space-export'
export const EXPORT_FORMAT_VERSION = 1

/**
 * The longest line an import holds: one memory with its chunks and vectors. An export writes
 * a memory whose vectors would take it past EXPORT_LINE_BUDGET_BYTES without its chunks (the
 * import embeds it again), so every line it writes fits here.
 */
export const MAX_IMPORT_LINE_BYTES = 96 * 1024 * 1024
/** What an export lets one memory line grow to, by a generous estimate (space-export.ts). */
export const EXPORT_LINE_BUDGET_BYTES = 64 * 1024 * 1024
/** pgvector's largest vector. */
export const MAX_VECTOR_DIMENSIONS = 16_000
/** Each chunk advances through the content by at least one character (the overlap is smaller than the size). */
export const MAX_CHUNKS_PER_MEMORY = MAX_CONTENT_BYTES
const MAX_PROVIDER_TYPE_LENGTH = 64
const MAX_CONTENT_TYPE_LENGTH = 255

const booleanQuery = v.union(
  [
    v.boolean(),
    v.pipe(
      v.picklist(['true', 'false']),
      v.transform((text) => text === 'true'),
    ),
  ],
  'must be true or false',
)

export const exportSpaceSchema = v.strictObject({
  spaceId: uuidSchema,
  omitVectors: v.optional(booleanQuery),
})

const spaceNameSchema = createSpaceSchema.entries.name

export const importSpaceSchema = v.pipe(
  v.strictObject({
    spaceId: v.optional(uuidSchema),
    newSpaceName: v.optional(spaceNameSchema),
    embedderIds: v.optional(
      v.pipe(
        listOf(uuidSchema, MAX_SPACE_EMBEDDERS, `at most ${MAX_SPACE_EMBEDDERS} embedders`),
        v.check((ids) => new Set(ids).size === ids.length, 'names the same embedder twice'),
      ),
    ),
    importId: v.optional(uuidSchema),
  }),
  v.forward(
    v.check(
      (input) => input.importId !== undefined || (input.spaceId === undefined) !== (input.newSpaceName === undefined),
      'send exactly one of spaceId (an existing space) and newSpaceName (a new one), or importId to resume',
    ),
    ['spaceId'],
  ),
  v.forward(
    v.check(
      (input) =>
        input.importId === undefined ||
        (input.spaceId === undefined && input.newSpaceName === undefined && input.embedderIds === undefined),
      'resumes an import into the space it began with: send it alone',
    ),
    ['importId'],
  ),
  v.forward(
    v.check(
      (input) => input.embedderIds === undefined || input.newSpaceName !== undefined,
      "names a new space's embedders: only with newSpaceName (an existing space keeps its own)",
    ),
    ['embedderIds'],
  ),
)
export type ImportSpaceRequest = v.InferOutput<typeof importSpaceSchema>

export const importIdSchema = uuidSchema

const count = wholeNumberFrom(0, Number.MAX_SAFE_INTEGER)

/** An embedder of the exported space: `ref` names its vectors in the memory lines; the rest is its fingerprint. */
const exportedEmbedderSchema = v.object({
  ref: wholeNumberFrom(0, MAX_SPACE_EMBEDDERS * 100),
  embedderId: uuidSchema,
  providerType: v.pipe(textSchema(), v.minLength(1, 'must not be empty'), v.maxLength(MAX_PROVIDER_TYPE_LENGTH)),
  modelIdentifier: v.pipe(
    textSchema(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_MODEL_IDENTIFIER_LENGTH, `at most ${MAX_MODEL_IDENTIFIER_LENGTH} characters`),
  ),
  dimensionality: wholeNumberFrom(1, MAX_VECTOR_DIMENSIONS),
  defaultRetrievalWeight: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.minValue(0, `must be from 0 to ${MAX_RETRIEVAL_WEIGHT}`),
      v.maxValue(MAX_RETRIEVAL_WEIGHT, `must be from 0 to ${MAX_RETRIEVAL_WEIGHT}`),
    ),
  ),
})
export type ExportedEmbedder = v.InferOutput<typeof exportedEmbedderSchema>

/** Fields a later writer of format version 1 may add are ignored (v.object, not strictObject). */
export const headerLineSchema = v.object({
  kind: v.literal('header'),
  format: v.literal(EXPORT_FORMAT, `must be "${EXPORT_FORMAT}"`),
  formatVersion: v.literal(EXPORT_FORMAT_VERSION, `must be ${EXPORT_FORMAT_VERSION}: this server reads no other`),
  exportedAt: v.optional(epochMillisSchema),
  space: v.object({
    spaceId: v.optional(uuidSchema),
    name: spaceNameSchema,
    labels: v.optional(labelsSchema, {}),
    defaultChunkingConfig: v.optional(chunkingConfigSchema),
    textSearchLanguage: v.optional(createSpaceSchema.entries.textSearchLanguage.wrapped),
    defaultOcr: v.optional(ocrModeSchema),
    publicRead: v.optional(v.boolean('must be true or false')),
  }),
  embedders: v.pipe(
    listOf(exportedEmbedderSchema, MAX_SPACE_EMBEDDERS, `at most ${MAX_SPACE_EMBEDDERS} embedders`),
    v.check(
      (embedders) => new Set(embedders.map((embedder) => embedder.ref)).size === embedders.length,
      'gives two embedders the same ref',
    ),
  ),
  memoryCount: count,
})
export type HeaderLine = v.InferOutput<typeof headerLineSchema>

const chunkSchema = v.object({
  chunkIndex: count,
  text: textSchema(),
  startOffset: count,
  endOffset: count,
  source: v.optional(
    v.nullable(
      v.pipe(
        v.custom<Record<string, unknown>>(
          (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
          'must be a JSON object',
        ),
        storableJson<Record<string, unknown>>(MAX_METADATA_DEPTH),
      ),
    ),
  ),
  // Checked value by value by the import, against the header's embedders.
  vectors: v.optional(
    v.custom<Record<string, unknown>>(
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
      'must be an object of vectors by embedder ref',
    ),
  ),
})
export type ChunkLine = v.InferOutput<typeof chunkSchema>

export const memoryLineSchema = v.object({
  kind: v.literal('memory'),
  memory: v.object({
    memoryId: uuidSchema,
    contentType: v.pipe(textSchema(), v.minLength(1, 'must not be empty'), v.maxLength(MAX_CONTENT_TYPE_LENGTH)),
    originalContent: textSchema(),
    originalContentSha256: v.pipe(v.string('must be a string'), v.regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits')),
    metadata: v.optional(metadataSchema, {}),
    chunkingConfig: chunkingConfigSchema,
    createdAt: epochMillisSchema,
    updatedAt: epochMillisSchema,
    version: v.optional(wholeNumberFrom(1, 2 ** 31 - 1), 1),
    validUntil: v.optional(epochMillisSchema),
    fileName: memoryFields.fileName,
  }),
  chunks: v.optional(listOf(chunkSchema, MAX_CHUNKS_PER_MEMORY, `at most ${MAX_CHUNKS_PER_MEMORY} chunks`), []),
})
export type MemoryLine = v.InferOutput<typeof memoryLineSchema>

export const endLineSchema = v.object({
  kind: v.literal('end'),
  memoryCount: count,
  chunkCount: count,
})
