import * as v from 'valibot'
import type { CallContext } from '../../domain/call-context.js'
import type { DomainContext } from '../../domain/context.js'
import { listEmbedders } from '../../domain/embedders.js'
import { createMemory, deleteMemory, getMemory, getMemoryContent } from '../../domain/memories.js'
import { getMemoryHistory } from '../../domain/memory-changes.js'
import { updateMemory } from '../../domain/memory-updates.js'
import {
  type RetrievalEvent,
  type RetrievalNotice,
  type RetrievedChunk,
  retrieveMemories,
  SEARCH_TEXT_CHARS,
} from '../../domain/retrieval.js'
import { createSpace, listSpaces } from '../../domain/spaces.js'
import { AppError, invalidArgument } from '../../errors/app-error.js'
import { MAX_PAGE_SIZE } from '../../validation/common.js'
import {
  CONTENT_TYPES,
  DEFAULT_TEXT_SEARCH_LANGUAGE,
  MAX_METADATA_PROPERTIES,
  MAX_SPACE_EMBEDDERS,
  MAX_SPACE_NAME_LENGTH,
  MEMORY_STATUSES,
} from '../../validation/memory.js'
import { parseInput } from '../../validation/parse.js'
import {
  DEFAULT_RECENCY_WEIGHT,
  DEFAULT_REQUESTED_SIZE,
  MAX_MESSAGE_LENGTH,
  MAX_RECENCY_HALF_LIFE_SECONDS,
  MAX_REQUESTED_SIZE,
  MAX_SPACE_KEYS,
  RETRIEVAL_MODES,
} from '../../validation/retrieval.js'

/**
 * The memory tools MCP clients see. Each one calls the same use case as the REST
 * and gRPC routes, with the caller's own key, and passes its arguments through under the REST
 * field names, so validation, permissions and error messages are the REST API's own. The
 * schemas describe those arguments to the model; the use cases still check every one of them.
 */

type JsonSchema = Record<string, unknown>

export interface McpTool {
  name: string
  /** Read by the model: what the tool is for, when to call it, and what comes back. */
  description: string
  inputSchema: JsonSchema & { type: 'object' }
  annotations: {
    title: string
    readOnlyHint: boolean
    destructiveHint: boolean
    idempotentHint: boolean
    openWorldHint: false
  }
  run(context: DomainContext, call: CallContext, args: Record<string, unknown>): Promise<unknown>
}

const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description })
const paging = {
  maxResults: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, description: 'Page size.' },
  nextToken: { type: 'string', description: 'The nextToken of the previous page, to read the next one.' },
}

/**
 * What retrieve_memories answers: the retrieval stream (domain/retrieval.ts) collected into
 * one result. As the whole result is held and sent at once, a long chunk (a memory stored
 * with chunking `none` is one chunk) is answered with its first SEARCH_TEXT_CHARS characters
 * and `chunkTextTruncated`; get_memory with includeContent reads the whole memory.
 */
export interface RetrievalResult {
  memories: unknown[]
  chunks: Array<Omit<RetrievedChunk, 'memoryIndex'> & { chunkTextTruncated?: true }>
  /** The LLM's answer over the chunks, when llmId was given and it answered. */
  answer?: string
  /** Why there is no answer although llmId was given (the chunks are still good). */
  answerError?: string
  /** What the search could not do as its mode asks (a space with no embedder: keyword results only). */
  notices?: RetrievalNotice[]
}

async function collectRetrieval(events: AsyncIterable<RetrievalEvent>): Promise<RetrievalResult> {
  const result: RetrievalResult = { memories: [], chunks: [] }
  for await (const event of events) {
    if ('resultSetBoundary' in event && event.resultSetBoundary.notices)
      result.notices = [...(result.notices ?? []), ...event.resultSetBoundary.notices]
    else if ('memoryDefinition' in event) result.memories.push(event.memoryDefinition.memory)
    else if ('retrievedItem' in event) {
      const { memoryIndex: _index, ...chunk } = event.retrievedItem.chunk
      // Offsets count the whole chunk in the memory's text, in the units of chunkText's length.
      const truncated = chunk.chunkText.length < chunk.endOffset - chunk.startOffset
      result.chunks.push(truncated ? { ...chunk, chunkTextTruncated: true } : chunk)
    } else if ('abstractReply' in event) result.answer = event.abstractReply.text
    else if ('status' in event) result.answerError = event.status.message
  }
  return result
}

/**
 * retrieve_memories takes flat arguments (spaceIds, one filter, llmId) where the REST body nests
 * them (spaceKeys[], postProcessor). An error names the field the tool was given, not the REST one.
 */
const RETRIEVAL_FIELD_NAMES: Array<[RegExp, string]> = [
  [/^spaceKeys\.(\d+)\.spaceId\b/, 'spaceIds.$1'],
  [/^spaceKeys\.\d+\.filter\b/, 'filter'],
  [/^spaceKeys\b/, 'spaceIds'],
  [/^postProcessor\./, ''],
  [/^recency\.halfLifeSeconds\b/, 'recencyHalfLifeSeconds'],
  [/^recency\.weight\b/, 'recencyWeight'],
  [/^recency\b/, 'recencyHalfLifeSeconds'],
]

function withToolFieldNames(error: unknown): unknown {
  if (!(error instanceof AppError) || error.details.length === 0) return error
  const rename = (field: string) =>
    RETRIEVAL_FIELD_NAMES.reduce((name, [pattern, replacement]) => name.replace(pattern, replacement), field)
  const details = error.details.map((detail) => ({ field: rename(detail.field), description: detail.description }))
  const first = error.details[0]!
  const message = error.message.startsWith(`${first.field}:`)
    ? `${details[0]!.field}${error.message.slice(first.field.length)}`
    : error.message
  return new AppError(error.code, message, details)
}

function retrievalRequest(args: Record<string, unknown>): Record<string, unknown> {
  const { spaceIds, filter, llmId, rerankerId, recencyHalfLifeSeconds, recencyWeight, ...rest } = args
  const spaceKeys = Array.isArray(spaceIds)
    ? spaceIds.map((spaceId) => ({ spaceId, ...(filter === undefined ? {} : { filter }) }))
    : spaceIds
  const postProcessor = llmId === undefined && rerankerId === undefined ? undefined : { llmId, rerankerId }
  const recency =
    recencyHalfLifeSeconds === undefined && recencyWeight === undefined
      ? undefined
      : { halfLifeSeconds: recencyHalfLifeSeconds, weight: recencyWeight }
  return { ...rest, spaceKeys, ...(postProcessor ? { postProcessor } : {}), ...(recency ? { recency } : {}) }
}

function ingestionStatus(memory: {
  memoryId: string
  processingStatus: string
  processingError?: string
  chunkCount: number
}) {
  const { memoryId, processingStatus, processingError, chunkCount } = memory
  return { memoryId, processingStatus, ...(processingError === undefined ? {} : { processingError }), chunkCount }
}

/**
 * The arguments of a tool whose use case takes an id rather than a body: an argument the tool
 * does not take is refused by name, as an unknown field of a REST body is, instead of ignored.
 * The use case still validates the id.
 */
const byMemoryId = v.strictObject({ memoryId: v.unknown() })
const byMemoryIdWithContent = v.strictObject({
  memoryId: v.unknown(),
  includeContent: v.optional(v.boolean('must be true or false')),
})

/** A digit string is epoch milliseconds already: the REST schema reads it. */
const EPOCH_DIGITS = /^\d+$/

/**
 * update_memory's validUntil may be an ISO 8601 date-time, which a model writes more reliably than
 * epoch milliseconds; the REST body takes epoch milliseconds, so the date is turned into those here.
 */
function withEpochValidUntil(args: Record<string, unknown>): Record<string, unknown> {
  const { validUntil } = args
  if (typeof validUntil !== 'string' || EPOCH_DIGITS.test(validUntil.trim())) return args
  const epochMs = Date.parse(validUntil)
  if (Number.isNaN(epochMs))
    throw invalidArgument('validUntil', 'must be an ISO 8601 date-time (2026-12-31T00:00:00Z) or epoch milliseconds')
  return { ...args, validUntil: epochMs }
}

const readOnly = (title: string) =>
  ({ title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }) as const

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'list_spaces',
    description:
      'List the memory spaces this API key can use (its own and those shared with it). A space is a named collection of memories. ' +
      'Call this first to find the spaceId to store memories in or retrieve from. Answers {spaces: [...], nextToken?}.',
    inputSchema: { type: 'object', properties: { ...paging }, additionalProperties: false },
    annotations: readOnly('List memory spaces'),
    run: (context, call, args) => listSpaces(context, call, args),
  },
  {
    name: 'create_space',
    description:
      'Create a memory space. It needs a name (unique among your spaces). Embedders turn its text into vectors for search by meaning: ' +
      'call list_embedders to find an embedderId. Without one the space is searched by keywords only ' +
      '(or gets your default local embedder, when the server has one). ' +
      'Answers the new space, whose spaceId add_memory and retrieve_memories take.',
    inputSchema: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_SPACE_NAME_LENGTH,
          description: 'Name of the space, unique among your spaces.',
        },
        spaceEmbedders: {
          type: 'array',
          maxItems: MAX_SPACE_EMBEDDERS,
          description: 'The embedders that index the space, usually one; none for a keyword-only space.',
          items: {
            type: 'object',
            properties: {
              embedderId: uuid('An embedderId from list_embedders.'),
              defaultRetrievalWeight: {
                type: 'number',
                minimum: 0,
                description: 'Weight of this embedder when results are fused (default 1).',
              },
            },
            required: ['embedderId'],
            additionalProperties: false,
          },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Optional key/value labels.' },
        publicRead: {
          type: 'boolean',
          description: 'Let every other user retrieve from this space (never write). Default false.',
        },
        textSearchLanguage: {
          type: 'string',
          description:
            `The language of its keyword search (stop words, stemming): ${DEFAULT_TEXT_SEARCH_LANGUAGE} (the default), ` +
            'french, german, spanish…, or simple (neither). Cannot change later.',
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Create a memory space',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    run: (context, call, args) => createSpace(context, call, args),
  },
  {
    name: 'list_embedders',
    description:
      'List the embedding models registered on this server that this API key can use. create_space needs one of their embedderId values. ' +
      'Answers {embedders: [...], nextToken?}.',
    inputSchema: { type: 'object', properties: { ...paging }, additionalProperties: false },
    annotations: readOnly('List embedders'),
    run: (context, call, args) => listEmbedders(context, call, args),
  },
  {
    name: 'add_memory',
    description:
      'Store a piece of text as a memory in a space, with optional metadata (a JSON object you can filter on later). ' +
      'Answers at once with the memory, its memoryId and processingStatus PENDING: ' +
      'the text is then chunked and embedded in the background. ' +
      'It can be retrieved once get_ingestion_status reports COMPLETED (usually within seconds).',
    inputSchema: {
      type: 'object',
      properties: {
        spaceId: uuid('The space to store the memory in (from list_spaces).'),
        originalContent: { type: 'string', minLength: 1, description: 'The text to remember.' },
        metadata: {
          type: 'object',
          maxProperties: MAX_METADATA_PROPERTIES,
          description:
            'Optional JSON object stored with the memory, e.g. {"source": "chat", "topic": "billing"}; ' +
            'retrieve_memories can filter on it.',
        },
        contentType: { type: 'string', enum: [...CONTENT_TYPES], description: 'The text format (default text/plain).' },
        memoryId: uuid('Optional: the id to give the memory (a UUID); one is made when absent.'),
        dedupe: {
          type: 'boolean',
          description:
            'If the same text is already stored in the space, answer that memory instead of storing it again.',
        },
      },
      required: ['spaceId', 'originalContent'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Add a memory',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    run: async (context, call, args) => (await createMemory(context, call, args)).memory,
  },
  {
    name: 'get_memory',
    description:
      'Get one memory by its memoryId: its space, metadata, processingStatus and chunk count; ' +
      'with includeContent true, also its original text.',
    inputSchema: {
      type: 'object',
      properties: {
        memoryId: uuid('The memory to read.'),
        includeContent: {
          type: 'boolean',
          description: 'Also answer the original text as originalContent (default false).',
        },
      },
      required: ['memoryId'],
      additionalProperties: false,
    },
    annotations: readOnly('Get a memory'),
    run: async (context, call, args) => {
      const { memoryId, includeContent } = parseInput(byMemoryIdWithContent, args)
      const memory = await getMemory(context, call, memoryId)
      if (includeContent !== true) return memory
      const { originalContent } = await getMemoryContent(context, call, memoryId)
      return { ...memory, originalContent }
    },
  },
  {
    name: 'get_ingestion_status',
    description:
      'Check whether a memory added with add_memory is ready to be retrieved. ' +
      'Answers {memoryId, processingStatus, chunkCount, processingError?}; ' +
      `processingStatus is one of ${MEMORY_STATUSES.join(', ')}. ` +
      'PENDING and PROCESSING mean wait and ask again; FAILED carries processingError.',
    inputSchema: {
      type: 'object',
      properties: { memoryId: uuid('The memoryId add_memory answered.') },
      required: ['memoryId'],
      additionalProperties: false,
    },
    annotations: readOnly('Ingestion status of a memory'),
    run: async (context, call, args) => {
      const { memoryId } = parseInput(byMemoryId, args)
      return ingestionStatus(await getMemory(context, call, memoryId))
    },
  },
  {
    name: 'delete_memory',
    description: 'Delete a memory, with its chunks and vectors, for good. Answers {memoryId, deleted: true}.',
    inputSchema: {
      type: 'object',
      properties: { memoryId: uuid('The memory to delete.') },
      required: ['memoryId'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Delete a memory',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    run: async (context, call, args) => {
      const { memoryId } = parseInput(byMemoryId, args)
      await deleteMemory(context, call, memoryId)
      return { memoryId, deleted: true }
    },
  },
  {
    name: 'update_memory',
    description:
      'Change a memory: its metadata (mergeMetadata sets some keys, a key set to null is removed; ' +
      'replaceMetadata replaces them all), its text (originalContent: a new version, chunked and embedded again; ' +
      'searches find the previous text until get_ingestion_status says COMPLETED), or until when it is valid ' +
      '(validUntil: retrieval leaves it out afterwards). Pass expectedVersion (the version get_memory answered) ' +
      'to change it only if nobody changed it since: otherwise the error says FAILED_PRECONDITION and nothing changes. ' +
      'Answers the memory, with its new version.',
    inputSchema: {
      type: 'object',
      properties: {
        memoryId: uuid('The memory to change.'),
        expectedVersion: {
          type: 'integer',
          minimum: 1,
          description: 'Change it only if it is still at this version (from get_memory).',
        },
        mergeMetadata: {
          type: 'object',
          description: 'Metadata keys to set, keeping the others; a key whose value is null is removed.',
        },
        replaceMetadata: {
          type: 'object',
          maxProperties: MAX_METADATA_PROPERTIES,
          description: 'The whole new metadata (every key not in it is removed).',
        },
        originalContent: { type: 'string', minLength: 1, description: 'The new text of the memory.' },
        contentType: { type: 'string', enum: [...CONTENT_TYPES], description: 'The format of the new text.' },
        validUntil: {
          type: ['string', 'integer'],
          description:
            'When the memory stops being valid: an ISO 8601 date-time (2026-12-31T00:00:00Z) or epoch milliseconds. ' +
            'Retrieval leaves it out afterwards.',
        },
        clearValidUntil: { type: 'boolean', description: 'Make the memory valid without end again.' },
      },
      required: ['memoryId'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Update a memory',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    run: (context, call, args) => updateMemory(context, call, withEpochValidUntil(args)),
  },
  {
    name: 'memory_history',
    description:
      "A memory's changes, newest first: each update and its delete, with when, by which user and API key, " +
      'which fields changed, the metadata keys before and after, and the content hash before and after. ' +
      'Answers {changes: [...], nextToken?}.',
    inputSchema: {
      type: 'object',
      properties: { memoryId: uuid('The memory whose changes to list.'), ...paging },
      required: ['memoryId'],
      additionalProperties: false,
    },
    annotations: readOnly('History of a memory'),
    run: (context, call, args) => getMemoryHistory(context, call, args),
  },
  {
    name: 'retrieve_memories',
    description:
      'Search memories by meaning (and keywords) in one or more spaces. ' +
      'Answers the best-matching chunks of text, best first, each with its ' +
      'relevanceScore (0..1: how well it matches; a chunk no memory is about scores low) and memoryId, ' +
      'plus the memories they belong to (metadata included), and notices when a space could only be searched by keywords. ' +
      `A chunk longer than ${SEARCH_TEXT_CHARS} characters is cut there and marked chunkTextTruncated; ` +
      'get_memory with includeContent reads it whole. ' +
      "With llmId (a registered LLM), also answers the LLM's reply to the message, grounded in those chunks.",
    inputSchema: {
      type: 'object',
      properties: {
        message: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_MESSAGE_LENGTH,
          description: 'What to look for: a question or a passage.',
        },
        spaceIds: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_SPACE_KEYS,
          items: uuid('A spaceId from list_spaces.'),
          description: 'The spaces to search.',
        },
        filter: {
          type: 'string',
          description:
            "Optional metadata filter, e.g. val('$.topic') = 'billing' AND CAST(val('$.year') AS NUMBER) >= 2024. " +
            'Operators: = != < <= > >= IN LIKE ILIKE IS [NOT] NULL CONTAINS OVERLAPS, AND OR NOT and parentheses. ' +
            "The memory's times by name: createdAt >= '2026-01-01' AND updatedAt < '2026-02-01T12:00:00Z' " +
            '(ISO dates or epoch milliseconds); validUntil IS NULL.',
        },
        requestedSize: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_REQUESTED_SIZE,
          description: `How many chunks to answer (default ${DEFAULT_REQUESTED_SIZE}).`,
        },
        mode: {
          type: 'string',
          enum: [...RETRIEVAL_MODES],
          description: 'HYBRID (default: meaning and keywords), VECTOR or KEYWORD.',
        },
        recencyHalfLifeSeconds: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: MAX_RECENCY_HALF_LIFE_SECONDS,
          description:
            'Optional: rank newer memories higher. After this many seconds a memory counts half as recent ' +
            '(e.g. 604800 for a week). Each chunk then carries scoreParts.',
        },
        recencyWeight: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          description:
            'With recencyHalfLifeSeconds: how much recency weighs against relevance, ' +
            `0 to 1 (default ${DEFAULT_RECENCY_WEIGHT}).`,
        },
        includeExpired: {
          type: 'boolean',
          description: 'Also answer memories whose validUntil has passed (left out by default).',
        },
        rerankerId: uuid('Optional: a registered reranker to reorder the chunks.'),
        llmId: uuid('Optional: a registered LLM to answer the message from the chunks found.'),
      },
      required: ['message', 'spaceIds'],
      additionalProperties: false,
    },
    annotations: readOnly('Retrieve memories'),
    run: async (context, call, args) => {
      try {
        return await collectRetrieval(await retrieveMemories(context, call, retrievalRequest(args), 'start'))
      } catch (error) {
        throw withToolFieldNames(error)
      }
    },
  },
]
