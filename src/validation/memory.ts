import * as v from 'valibot'
import { DEFAULT_CHUNK_SIZE, DEFAULT_SEPARATORS, KEEP_STRATEGIES } from '../chunking/chunking-config.js'
import { firstSeparatorRegexProblem } from '../chunking/separator-regex.js'
import {
  choiceOf,
  epochMillisSchema,
  filterTextSchema,
  labelsSchema,
  labelUpdateFields,
  listOf,
  oneLabelUpdateOnly,
  pageFields,
  pageTokenSchema,
  storableJson,
  textSchema,
  uuidSchema,
  wholeNumberFrom,
} from './common.js'
import {
  DEFAULT_RETRIEVAL_WEIGHT,
  DEFAULT_TEXT_SEARCH_LANGUAGE,
  MAX_CHUNK_SIZE,
  MAX_MEMORY_PAGE_SIZE,
  MAX_PAGE_IMAGE_DPI,
  MAX_RETRIEVAL_WEIGHT,
  MAX_SPACE_NAME_LENGTH,
  MAX_TEXT_SEARCH_LANGUAGE_LENGTH,
  MIN_PAGE_IMAGE_DPI,
  OCR_LANGUAGE_CODE,
} from './limits.js'

/** Spaces, memories and their chunking settings. */

export const CONTENT_TYPES = ['text/plain', 'text/markdown', 'application/json'] as const
/** OCR of a document: AUTO reads only pages without a text layer, ON every page and image, OFF none. */
export const OCR_MODES = ['AUTO', 'ON', 'OFF'] as const
export const ocrModeSchema = choiceOf(OCR_MODES)
export type ContentType = (typeof CONTENT_TYPES)[number]
export const MEMORY_STATUSES = ['PENDING', 'EXTRACTING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const
export type MemoryStatus = (typeof MEMORY_STATUSES)[number]

/** Defined in limits.ts, which the console shares; the server's code reads them from here as well. */
export {
  DEFAULT_RETRIEVAL_WEIGHT,
  DEFAULT_TEXT_SEARCH_LANGUAGE,
  MAX_CHUNK_SIZE,
  MAX_MEMORY_PAGE_SIZE,
  MAX_RETRIEVAL_WEIGHT,
  MAX_SPACE_NAME_LENGTH,
}
/** More embedders per space would multiply every ingest by as many provider calls. */
export const MAX_SPACE_EMBEDDERS = 10
export const MAX_SEPARATORS = 20
export const MAX_SEPARATOR_LENGTH = 100
export const MAX_METADATA_PROPERTIES = 50
/** The stored metadata as JSON; far above any real use, small enough for every list page. */
export const MAX_METADATA_BYTES = 64 * 1024
/** Objects and arrays inside metadata, the top-level object included; filters reach any depth, so deeper buys nothing. */
export const MAX_METADATA_DEPTH = 16
/** Content of one memory, in UTF-8 bytes: larger answers 413. */
export const MAX_CONTENT_BYTES = 4 * 1024 * 1024
export const MAX_BATCH_SIZE = 500
export const SORT_ORDERS = ['ASCENDING', 'DESCENDING'] as const
export const MEMORY_SORT_FIELDS = ['createdAt', 'updatedAt'] as const
export type MemorySortField = (typeof MEMORY_SORT_FIELDS)[number]

const recursiveSchema = v.pipe(
  v.strictObject({
    chunkSize: v.optional(wholeNumberFrom(1, MAX_CHUNK_SIZE)),
    chunkOverlap: v.optional(wholeNumberFrom(0, MAX_CHUNK_SIZE)),
    separators: v.optional(
      listOf(
        v.pipe(
          textSchema('must be strings'),
          v.maxLength(MAX_SEPARATOR_LENGTH, `separators are at most ${MAX_SEPARATOR_LENGTH} characters`),
        ),
        MAX_SEPARATORS,
        `at most ${MAX_SEPARATORS} separators`,
      ),
    ),
    keepStrategy: v.optional(choiceOf(KEEP_STRATEGIES)),
    separatorIsRegex: v.optional(v.boolean('must be true or false')),
  }),
  v.forward(
    v.check(
      (input) => (input.chunkOverlap ?? 0) < (input.chunkSize ?? DEFAULT_CHUNK_SIZE),
      'must be smaller than chunkSize',
    ),
    ['chunkOverlap'],
  ),
  // The first refused pattern is named by its index, with the reason (RE2 syntax, lookaround, size).
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || !dataset.value.separatorIsRegex) return
    const separators = dataset.value.separators ?? []
    const refused = firstSeparatorRegexProblem(separators)
    if (!refused) return
    addIssue({
      message: refused.problem,
      path: [
        { type: 'object', origin: 'value', input: dataset.value, key: 'separators', value: separators },
        { type: 'array', origin: 'value', input: separators, key: refused.index, value: separators[refused.index] },
      ],
    })
  }),
  // Unset fields take the defaults; the overlap defaults to an eighth of the size (64 for 512).
  v.transform((input) => {
    const chunkSize = input.chunkSize ?? DEFAULT_CHUNK_SIZE
    return {
      chunkSize,
      chunkOverlap: input.chunkOverlap ?? Math.floor(chunkSize / 8),
      separators: input.separators ?? DEFAULT_SEPARATORS,
      keepStrategy: input.keepStrategy ?? 'KEEP_END',
      separatorIsRegex: input.separatorIsRegex ?? false,
    }
  }),
)

const sentenceSchema = v.pipe(
  v.strictObject({
    maxChunkSize: v.optional(wholeNumberFrom(1, MAX_CHUNK_SIZE)),
    minChunkSize: v.optional(wholeNumberFrom(0, MAX_CHUNK_SIZE)),
  }),
  v.forward(
    v.check(
      (input) => (input.minChunkSize ?? 0) < (input.maxChunkSize ?? DEFAULT_CHUNK_SIZE),
      'must be smaller than maxChunkSize',
    ),
    ['minChunkSize'],
  ),
  v.transform((input) => ({
    maxChunkSize: input.maxChunkSize ?? DEFAULT_CHUNK_SIZE,
    minChunkSize: input.minChunkSize ?? 0,
  })),
)

/** Exactly one of none, recursive, sentence. */
export const chunkingConfigSchema = v.pipe(
  v.strictObject({
    none: v.optional(v.strictObject({})),
    recursive: v.optional(recursiveSchema),
    sentence: v.optional(sentenceSchema),
  }),
  v.check(
    (input) => Object.values(input).filter((value) => value !== undefined).length === 1,
    'set exactly one of none, recursive, sentence',
  ),
  v.transform((input) =>
    input.recursive
      ? { recursive: input.recursive }
      : input.sentence
        ? { sentence: input.sentence }
        : { none: {} as Record<string, never> },
  ),
)

const retrievalWeightSchema = v.pipe(
  v.number('must be a number'),
  v.minValue(0, `must be from 0 to ${MAX_RETRIEVAL_WEIGHT}`),
  v.maxValue(MAX_RETRIEVAL_WEIGHT, `must be from 0 to ${MAX_RETRIEVAL_WEIGHT}`),
)

const spaceEmbedderSchema = v.strictObject({
  embedderId: uuidSchema,
  defaultRetrievalWeight: v.optional(retrievalWeightSchema),
})

/** Entries about a space's embedders (its members, a retrieval's weights): no more than a space holds, none twice. */
export const embedderEntriesOf = <const Item extends v.GenericSchema<unknown, { embedderId: string }>>(
  item: Item,
  tooMany: string,
) =>
  v.pipe(
    listOf(item, MAX_SPACE_EMBEDDERS, tooMany),
    v.check(
      (entries) => new Set(entries.map((entry) => entry.embedderId)).size === entries.length,
      'names the same embedder twice',
    ),
  )

const spaceNameSchema = v.pipe(
  textSchema(),
  v.check((text) => text.trim().length > 0, 'must not be empty'),
  v.maxLength(MAX_SPACE_NAME_LENGTH, `at most ${MAX_SPACE_NAME_LENGTH} characters`),
)

/**
 * The name of a PostgreSQL text search configuration ('english', 'french', 'simple'…): the
 * shape of an unquoted identifier here, and whether the database has it is the use case's
 * to check (domain/spaces.ts).
 */
const textSearchLanguageSchema = v.pipe(
  textSchema(),
  v.maxLength(MAX_TEXT_SEARCH_LANGUAGE_LENGTH, `at most ${MAX_TEXT_SEARCH_LANGUAGE_LENGTH} characters`),
  v.regex(/^[a-z_][a-z0-9_]*$/, 'must be the name of a text search configuration, such as english or simple'),
)

export const createSpaceSchema = v.strictObject({
  spaceId: v.optional(uuidSchema),
  ownerId: v.optional(uuidSchema),
  name: spaceNameSchema,
  labels: v.optional(labelsSchema),
  // None makes a keyword-only space; an embedder added later back-fills its vectors.
  spaceEmbedders: v.optional(embedderEntriesOf(spaceEmbedderSchema, `at most ${MAX_SPACE_EMBEDDERS} embedders`), []),
  defaultChunkingConfig: v.optional(chunkingConfigSchema),
  publicRead: v.optional(v.boolean('must be true or false')),
  textSearchLanguage: v.optional(textSearchLanguageSchema, DEFAULT_TEXT_SEARCH_LANGUAGE),
  defaultOcr: v.optional(ocrModeSchema),
})

/**
 * Its chunks' search vectors and word counts are made in the space's language when they are
 * stored, so another language would need every chunk indexed again: it is set at creation only.
 */
export const TEXT_SEARCH_LANGUAGE_FIXED = 'is set when the space is created and cannot change'
/** An update's textSearchLanguage: refused whatever it holds (the OpenAPI document says so by hand: json-schema.ts). */
export const fixedTextSearchLanguageSchema = v.custom<never>(() => false, TEXT_SEARCH_LANGUAGE_FIXED)

export const updateSpaceSchema = v.pipe(
  v.strictObject({
    name: v.optional(spaceNameSchema),
    publicRead: v.optional(v.boolean('must be true or false')),
    textSearchLanguage: v.optional(fixedTextSearchLanguageSchema),
    defaultOcr: v.optional(ocrModeSchema),
    ...labelUpdateFields,
  }),
  oneLabelUpdateOnly(),
)

export const listSpacesSchema = v.strictObject({
  ...pageFields,
  ownerId: v.optional(uuidSchema),
  labelFilter: v.optional(labelsSchema),
})

export const addEmbedderSchema = spaceEmbedderSchema
export const removeEmbedderSchema = v.strictObject({ embedderId: uuidSchema })

export const metadataSchema = v.pipe(
  v.custom<Record<string, unknown>>(
    (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
    'must be a JSON object',
  ),
  v.check(
    (metadata) => Object.keys(metadata).length <= MAX_METADATA_PROPERTIES,
    `at most ${MAX_METADATA_PROPERTIES} top-level properties`,
  ),
  // Checked before the size: JSON.stringify would write 1e999 as null and a lone surrogate as an escape.
  storableJson<Record<string, unknown>>(MAX_METADATA_DEPTH),
  v.check(
    (metadata) => Buffer.byteLength(JSON.stringify(metadata)) <= MAX_METADATA_BYTES,
    `at most ${MAX_METADATA_BYTES} bytes as JSON`,
  ),
)

export const MAX_FILE_NAME_LENGTH = 255
export const MAX_OCR_LANGUAGES = 8
const fileNameSchema = v.pipe(
  textSchema(),
  v.check((name) => name.trim().length > 0, 'must not be empty'),
  v.maxLength(MAX_FILE_NAME_LENGTH, `at most ${MAX_FILE_NAME_LENGTH} characters`),
  // A file name is shown and sent back in Content-Disposition: no path, no line breaks.
  v.check((name) => !/[/\\\r\n]/.test(name), 'must be a file name, without a path or line breaks'),
)

/** Tesseract's language codes: eng, deu, chi_sim, … */
const ocrLanguageSchema = v.pipe(
  textSchema(),
  v.regex(OCR_LANGUAGE_CODE, 'must be a Tesseract language code such as eng, deu or chi_sim'),
)

/** How a document memory is extracted; every field optional (the space's OCR mode, then AUTO). */
export const documentOptionFields = {
  fileName: v.optional(fileNameSchema),
  ocr: v.optional(ocrModeSchema),
  extractPageImages: v.optional(v.boolean('must be true or false')),
  pageImageDpi: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be a whole number'),
      v.minValue(MIN_PAGE_IMAGE_DPI, `must be from ${MIN_PAGE_IMAGE_DPI} to ${MAX_PAGE_IMAGE_DPI}`),
      v.maxValue(MAX_PAGE_IMAGE_DPI, `must be from ${MIN_PAGE_IMAGE_DPI} to ${MAX_PAGE_IMAGE_DPI}`),
    ),
  ),
  ocrLanguages: v.optional(
    v.pipe(
      listOf(ocrLanguageSchema, MAX_OCR_LANGUAGES, `at most ${MAX_OCR_LANGUAGES} languages`),
      v.minLength(1, 'must name at least one language'),
    ),
  ),
}

/** The size limit is checked by the use case (413), after decoding: schemas check shape only. */
/** What a create names besides its content and its type: the same for text and for an uploaded document. */
export const memoryFields = {
  memoryId: v.optional(uuidSchema),
  spaceId: uuidSchema,
  metadata: v.optional(metadataSchema),
  chunkingConfig: v.optional(chunkingConfigSchema),
  dedupe: v.optional(v.boolean('must be true or false')),
  validUntil: v.optional(epochMillisSchema),
  // Documents only; a text memory ignores them.
  ...documentOptionFields,
}

/** Content as base64 (standard or URL-safe alphabet); decoded and size-checked by the use case. */
export const base64ContentSchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64'),
)

export const createMemorySchema = v.pipe(
  v.strictObject({
    ...memoryFields,
    originalContent: v.optional(textSchema()),
    originalContentB64: v.optional(base64ContentSchema),
    contentType: v.optional(
      v.picklist(
        CONTENT_TYPES,
        `must be one of ${CONTENT_TYPES.join(', ')} for text; documents (PDF, Office, HTML, images) are sent ` +
          'as originalContentB64 with their type, or uploaded as the request body',
      ),
    ),
  }),
  v.forward(
    v.check(
      (input) => (input.originalContent === undefined) !== (input.originalContentB64 === undefined),
      'send exactly one of originalContent and originalContentB64',
    ),
    ['originalContent'],
  ),
)
export type CreateMemoryRequest = v.InferOutput<typeof createMemorySchema>

/**
 * Different regex separators in one batch: each request is validated as it is created, one
 * after the other, and a pattern not seen before is compiled then (up to
 * SEPARATORS_COMPILE_BUDGET_MS for one request's separators).
 */
export const MAX_BATCH_REGEX_SEPARATORS = 20

/** The regex separators a create request names, read before the request itself is validated. */
function regexSeparatorsOf(request: unknown): unknown[] {
  const recursive = (request as { chunkingConfig?: { recursive?: Record<string, unknown> } } | null)?.chunkingConfig
    ?.recursive
  return recursive?.separatorIsRegex === true && Array.isArray(recursive.separators) ? recursive.separators : []
}

function fewRegexSeparators(requests: unknown[]): boolean {
  const seen = new Set<unknown>()
  // A request with more separators than allowed is refused on its own; a few past the limit tell.
  for (const request of requests)
    for (const separator of regexSeparatorsOf(request).slice(0, MAX_SEPARATORS + 1)) {
      seen.add(separator)
      if (seen.size > MAX_BATCH_REGEX_SEPARATORS) return false
    }
  return true
}

export const batchCreateMemoriesSchema = v.strictObject({
  requests: v.pipe(
    listOf(v.unknown(), MAX_BATCH_SIZE, `at most ${MAX_BATCH_SIZE} requests`),
    v.minLength(1, 'must hold at least one request'),
    v.check(
      fewRegexSeparators,
      `the requests may use at most ${MAX_BATCH_REGEX_SEPARATORS} different regex separators between them`,
    ),
  ),
})

export const memoryPageSizeSchema = v.union(
  [
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_MEMORY_PAGE_SIZE)),
    v.pipe(v.string(), v.regex(/^\d{1,3}$/), v.transform(Number), v.minValue(1), v.maxValue(MAX_MEMORY_PAGE_SIZE)),
  ],
  `must be an integer from 1 to ${MAX_MEMORY_PAGE_SIZE}`,
)

export const listMemoriesSchema = v.strictObject({
  spaceId: uuidSchema,
  statusFilter: v.optional(choiceOf(MEMORY_STATUSES)),
  filter: v.optional(filterTextSchema),
  maxResults: v.optional(memoryPageSizeSchema),
  nextToken: v.optional(pageTokenSchema),
  sortBy: v.optional(choiceOf(MEMORY_SORT_FIELDS)),
  sortOrder: v.optional(choiceOf(SORT_ORDERS)),
})

/** What only a delete by filter sends, refused beside memoryIds. */
function goesWithSpaceId<Input extends { spaceId?: string } & Partial<Record<Field, unknown>>, Field extends string>(
  field: Field,
) {
  return v.forward(
    v.check((input: Input) => input[field] === undefined || input.spaceId !== undefined, 'goes with spaceId'),
    [field] as never,
  )
}

export const batchDeleteMemoriesSchema = v.pipe(
  v.strictObject({
    memoryIds: v.optional(
      v.pipe(
        listOf(uuidSchema, MAX_BATCH_SIZE, `at most ${MAX_BATCH_SIZE} ids`),
        v.minLength(1, 'must name at least one memory'),
      ),
    ),
    spaceId: v.optional(uuidSchema),
    statusFilter: v.optional(choiceOf(MEMORY_STATUSES)),
    filter: v.optional(
      v.pipe(
        filterTextSchema,
        v.check((filter) => filter.trim().length > 0, 'must not be empty: name the memories to delete'),
      ),
    ),
    dryRun: v.optional(v.boolean('must be true or false')),
    expectedCount: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(0, 'must be 0 or more')),
    ),
  }),
  v.forward(
    v.check(
      (input) => (input.memoryIds === undefined) !== (input.spaceId === undefined),
      'send memoryIds, or spaceId with a filter and/or a statusFilter',
    ),
    ['memoryIds'],
  ),
  v.forward(
    v.check(
      (input) => input.spaceId === undefined || input.filter !== undefined || input.statusFilter !== undefined,
      'a delete by spaceId needs a filter or a statusFilter; to delete every memory of a space, delete the space',
    ),
    ['filter'],
  ),
  v.forward(
    v.check(
      (input) => input.spaceId === undefined || input.dryRun === true || input.expectedCount !== undefined,
      'is required for a delete by filter: send dryRun: true first to count the memories that match, ' +
        'then the same request with expectedCount set to that count',
    ),
    ['expectedCount'],
  ),
  goesWithSpaceId('dryRun'),
  goesWithSpaceId('expectedCount'),
  goesWithSpaceId('statusFilter'),
  goesWithSpaceId('filter'),
)
export type BatchDeleteMemoriesRequest = v.InferOutput<typeof batchDeleteMemoriesSchema>
