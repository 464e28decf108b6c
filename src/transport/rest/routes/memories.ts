import * as v from 'valibot'
import { createMemoryOrDocument, getOriginalContent, getPageImage, uploadMemory } from '../../../domain/documents.js'
import {
  batchCreateMemories,
  batchDeleteMemories,
  batchGetMemories,
  type CreateMemoryResult,
  deleteMemory,
  getMemory,
  listMemories,
  type Memory,
} from '../../../domain/memories.js'
import { getMemoryHistory } from '../../../domain/memory-changes.js'
import { batchUpdateMemories, updateMemory } from '../../../domain/memory-updates.js'
import { retrieveMemories } from '../../../domain/retrieval.js'
import { AppError, invalidArgument } from '../../../errors/app-error.js'
import {
  batchCreateMemoriesSchema,
  batchDeleteMemoriesSchema,
  createMemorySchema,
  listMemoriesSchema,
} from '../../../validation/memory.js'
import {
  batchGetMemoriesSchema,
  batchUpdateMemoriesSchema,
  memoryHistorySchema,
  updateMemoryBodySchema,
} from '../../../validation/memory-updates.js'
import { MEMORY_BATCH_REQUEST_BYTES, MEMORY_REQUEST_BYTES } from '../../../validation/request-limits.js'
import { retrieveMemoriesSchema } from '../../../validation/retrieval.js'
import { eventStream, NDJSON_TYPE, SSE_TYPE } from '../event-stream.js'
import { EXAMPLE_IDS } from '../openapi/examples.js'
import { type Answer, BY_ID, Component, created, json, NO_CONTENT } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import { callContext, jsonBody } from '../request-input.js'
import type { RestRequest, RestResponse } from '../rest-messages.js'
import type { RestRoute, RouteDeps } from '../rest-route.js'
import { retrieveQuery } from '../retrieve-query.js'
import { isJsonBody, uploadOf } from '../upload-request.js'
import { callWithBody, callWithIdAndListQuery, deleteWithId } from '../use-case-handlers.js'

/** Content-Disposition for a stored file: its name as ASCII for old clients and as UTF-8 for the rest (RFC 6266). */
function attachmentNamed(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`
}

const RETRIEVE_REQUEST = Component.of('RetrieveMemoriesRequest', retrieveMemoriesSchema)

const RETRIEVE_EXAMPLE = {
  message: 'How does the analytical engine weave patterns?',
  spaceKeys: [{ spaceId: EXAMPLE_IDS.space }],
  mode: 'KEYWORD',
  requestedSize: 5,
}

const STREAM_ANSWER: Answer = {
  description:
    'A stream of retrieval events, each written as soon as it is known: ' +
    'NDJSON (one event per line; empty lines are heartbeats) by default, ' +
    'or Server-Sent Events (`data: <event>`; comment lines are heartbeats) when Accept names text/event-stream. ' +
    'An error after the first event arrives as a last `status` event.',
  content: {
    [NDJSON_TYPE]: VIEW.RetrievalEvent,
    [SSE_TYPE]: {
      type: 'string',
      description: 'Events as `data: <RetrievalEvent JSON>` lines, each followed by a blank line.',
    },
  },
}

/** A memory's version as an entity tag: what If-Match names to update it. */
const versionTag = (memory: Memory) => `"${memory.version}"`

/** The path names the memory; a body naming another is refused rather than guessed between. */
function pathId(id: string, body: Record<string, unknown> | undefined): { memoryId: string } {
  if (body?.memoryId !== undefined && body.memoryId !== id)
    throw invalidArgument('memoryId', 'names another memory than the path: leave it out of the body')
  return { memoryId: id }
}

/**
 * If-Match as expectedVersion: `"3"`, `W/"3"` or `3`; `*` (any version) adds nothing. A body
 * naming another expectedVersion is refused.
 */
function expectedVersionOf(
  ifMatch: string | undefined,
  body: Record<string, unknown> | undefined,
): { expectedVersion?: number } {
  if (ifMatch === undefined || ifMatch.trim() === '*') return {}
  const match = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(ifMatch)
  if (!match) throw invalidArgument('If-Match', 'must be a version as GET answers it in ETag, e.g. "3"')
  const version = Number(match[1])
  if (body?.expectedVersion !== undefined && body.expectedVersion !== version)
    throw invalidArgument('expectedVersion', `differs from If-Match (${version}): send one of them`)
  return { expectedVersion: version }
}

/** Both forms of retrieval take the same request: the GET form as query parameters. */
async function retrieve(request: RestRequest, { server }: RouteDeps, input: unknown): Promise<RestResponse> {
  const call = { ...callContext(request), signal: request.cancellation() }
  return { status: 200, stream: eventStream(request, await retrieveMemories(server.domain, call, input)) }
}

export const MEMORY_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/v1/memories',
    needsApiKey: true,
    maxBodyBytes: MEMORY_REQUEST_BYTES,
    // A document arrives as the body itself (raw or multipart), read as it streams in.
    streamBody: (contentType) => !isJsonBody(contentType),
    readHeaders: ['content-disposition'],
    openapi: {
      operationId: 'createMemory',
      tag: 'memories',
      summary: 'Store a memory',
      description:
        'Chunked and embedded in the background (`processingStatus`). ' +
        'With `dedupe`, the same content already in the space answers 200 with that memory.\n\n' +
        '**Documents** (PDF, DOCX, PPTX, XLSX, HTML, PNG, JPEG, TIFF, BMP, WebP) are extracted first ' +
        '(`processingStatus` EXTRACTING; OCR for images and pages without text), and each chunk then cites ' +
        'its page, slide, sheet or headings (`source`). Send one as `originalContentB64` with its `contentType`, ' +
        "or, up to the server's upload limit (`--max-upload-mb`, 100 MiB by default), as the body itself: " +
        "raw bytes with their `Content-Type` and this request's fields as query parameters " +
        '(`?spaceId=…&fileName=…&ocr=AUTO&metadata={…}`), or `multipart/form-data` with a `request` part ' +
        '(this JSON without content) followed by one file part. The type is sniffed from the bytes: ' +
        'a declared type they contradict is a 415 naming both; `application/octet-stream` takes what they are.',
      body: Component.of('CreateMemoryRequest', createMemorySchema),
      answers: {
        201: created('The memory, PENDING.', VIEW.Memory),
        200: json('The stored memory with the same content (dedupe).', VIEW.Memory),
      },
      errors: ['PERMISSION_DENIED', 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION'],
      examples: [
        {
          body: {
            memoryId: EXAMPLE_IDS.memory,
            spaceId: EXAMPLE_IDS.space,
            originalContent:
              'The Analytical Engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.',
            contentType: 'text/plain',
            metadata: { author: 'Ada Lovelace', year: 1843 },
          },
        },
      ],
      exampleStatus: 201,
    },
    handle: async (request, { server, config }) => {
      const call = callContext(request)
      let result: CreateMemoryResult
      if (request.bodyStream) {
        const declared = request.headers['content-length']
        if (declared !== undefined && Number(declared) > config.documents.maxUploadBytes)
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            `request body of ${declared} bytes exceeds the upload limit of ${config.documents.maxUploadBytes} bytes`,
          )
        result = await uploadMemory(server.domain, call, await uploadOf(request))
      } else {
        result = await createMemoryOrDocument(server.domain, call, jsonBody(request))
      }
      const { memory, created } = result
      return { status: created ? 201 : 200, headers: { location: `/v1/memories/${memory.memoryId}` }, json: memory }
    },
  },
  {
    method: 'POST',
    pattern: '/v1/memories:batchCreate',
    needsApiKey: true,
    maxBodyBytes: MEMORY_BATCH_REQUEST_BYTES,
    openapi: {
      operationId: 'batchCreateMemories',
      tag: 'memories',
      summary: 'Store several memories',
      description: 'Each item of `requests` is a CreateMemoryRequest; each answers its own result or error, in order.',
      body: Component.of('BatchCreateMemoriesRequest', batchCreateMemoriesSchema),
      answers: { 200: json('One result per request.', VIEW.BatchCreateResult) },
      errors: ['FAILED_PRECONDITION'],
      examples: [
        {
          body: {
            requests: [
              {
                memoryId: EXAMPLE_IDS.batchMemory,
                spaceId: EXAMPLE_IDS.space,
                originalContent: '# Notes\n\nThe engine might compose music.',
                contentType: 'text/markdown',
              },
            ],
          },
        },
      ],
      exampleStatus: 200,
    },
    handle: callWithBody(batchCreateMemories),
  },
  {
    method: 'GET',
    pattern: '/v1/memories/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'getMemory',
      tag: 'memories',
      summary: 'Get a memory',
      answers: { 200: json('The memory.', VIEW.Memory) },
      errors: BY_ID,
      examples: [{ path: { id: EXAMPLE_IDS.memory } }],
      exampleStatus: 200,
    },
    handle: async (request, { server }) => {
      const memory = await getMemory(server.domain, callContext(request), request.params.id)
      return { status: 200, headers: { etag: versionTag(memory) }, json: memory }
    },
  },
  {
    method: 'PATCH',
    pattern: '/v1/memories/:id',
    needsApiKey: true,
    maxBodyBytes: MEMORY_REQUEST_BYTES,
    readHeaders: ['if-match'],
    openapi: {
      operationId: 'updateMemory',
      tag: 'memories',
      summary: 'Update a memory',
      description:
        'Changes what is given; what is absent stays. `replaceMetadata` or `mergeMetadata` (a null value removes ' +
        'its key) and `validUntil` / `clearValidUntil` take effect at once, without embedding again. New ' +
        '`originalContent`, `contentType` or `chunkingConfig` make a new version that is chunked and embedded ' +
        'again (`processingStatus` PENDING, `contentPending`); the previous chunks answer retrieval until the new ' +
        'ones are stored, then are replaced in one transaction. Each update adds 1 to `version`: send ' +
        '`If-Match: "<version>"` (the `ETag` of GET) or `expectedVersion`, and a memory changed meanwhile answers ' +
        "412 with nothing changed. Each update is recorded in the memory's history.",
      body: Component.of('UpdateMemoryBody', updateMemoryBodySchema),
      answers: { 200: json('The memory, at its new version.', VIEW.Memory) },
      errors: [...BY_ID, 'PERMISSION_DENIED', 'FAILED_PRECONDITION'],
      examples: [
        {
          path: { id: EXAMPLE_IDS.memory },
          body: { mergeMetadata: { reviewed: true }, expectedVersion: 1 },
        },
      ],
      exampleStatus: 200,
    },
    handle: async (request, { server }) => {
      const body = jsonBody(request) as Record<string, unknown> | undefined
      const memory = await updateMemory(server.domain, callContext(request), {
        ...body,
        ...pathId(request.params.id!, body),
        ...expectedVersionOf(request.headers['if-match'], body),
      })
      return { status: 200, headers: { etag: versionTag(memory) }, json: memory }
    },
  },
  {
    method: 'POST',
    pattern: '/v1/memories:batchUpdate',
    needsApiKey: true,
    maxBodyBytes: MEMORY_BATCH_REQUEST_BYTES,
    openapi: {
      operationId: 'batchUpdateMemories',
      tag: 'memories',
      summary: 'Update several memories',
      description:
        'Up to 1,000 UpdateMemoryRequests (each with its `memoryId`), each applied whole or not at all: ' +
        'each answers its memory or its own error (a stale `expectedVersion` is a 412 for that item), in order.',
      body: Component.of('BatchUpdateMemoriesRequest', batchUpdateMemoriesSchema),
      answers: { 200: json('One result per request.', VIEW.BatchUpdateResult) },
      errors: ['FAILED_PRECONDITION'],
      examples: [{ body: { requests: [{ memoryId: EXAMPLE_IDS.memory, mergeMetadata: { topic: 'engines' } }] } }],
      exampleStatus: 200,
    },
    handle: callWithBody(batchUpdateMemories),
  },
  {
    method: 'POST',
    pattern: '/v1/memories:batchGet',
    needsApiKey: true,
    openapi: {
      operationId: 'batchGetMemories',
      tag: 'memories',
      summary: 'Get several memories',
      description:
        'Up to 1,000 ids: a result per id, in order, the memory or a 404 error. An id that does not exist and ' +
        "one of another owner's memories answer alike.",
      body: Component.of('BatchGetMemoriesRequest', batchGetMemoriesSchema),
      answers: { 200: json('One result per id.', VIEW.BatchGetResult) },
      errors: ['FAILED_PRECONDITION'],
      examples: [{ body: { memoryIds: [EXAMPLE_IDS.memory] } }],
      exampleStatus: 200,
    },
    handle: callWithBody(batchGetMemories),
  },
  {
    method: 'GET',
    pattern: '/v1/memories/:id/history',
    needsApiKey: true,
    openapi: {
      operationId: 'getMemoryHistory',
      tag: 'memories',
      summary: "A memory's history",
      description:
        'Newest first: each update and delete, who made it, when, with which API key, and what it changed ' +
        '(the metadata keys before and after, the content hash before and after). Kept after the memory is ' +
        'deleted, for as long as its space exists.',
      query: Component.of('MemoryHistoryQuery', v.omit(memoryHistorySchema, ['memoryId'])),
      answers: { 200: json('A page of changes.', VIEW.MemoryHistory) },
      errors: BY_ID,
      examples: [{ path: { id: EXAMPLE_IDS.memory } }],
      exampleStatus: 200,
    },
    handle: callWithIdAndListQuery('memoryId', getMemoryHistory),
  },
  {
    method: 'GET',
    pattern: '/v1/memories/:id/content',
    needsApiKey: true,
    openapi: {
      operationId: 'getMemoryContent',
      tag: 'memories',
      summary: "Get a memory's original content",
      description:
        'A text memory answers its content as JSON; a document answers its bytes as they were uploaded, ' +
        'with their Content-Type and a Content-Disposition naming the file.',
      answers: {
        200: {
          description: 'The content as stored.',
          content: {
            'application/json': VIEW.MemoryContent,
            'application/octet-stream': { type: 'string', format: 'binary', description: "A document's bytes." },
          },
        },
      },
      errors: BY_ID,
      examples: [{ path: { id: EXAMPLE_IDS.memory } }],
      exampleStatus: 200,
    },
    handle: async (request, { server }) => {
      const call = callContext(request)
      const content = await getOriginalContent(server.domain, call, request.params.id)
      if (content.asText) return { status: 200, json: content.asText }
      // Always an attachment, in a sandbox: an uploaded HTML page must never run as a page of this origin (the console's).
      const headers = {
        'content-disposition': content.fileName ? attachmentNamed(content.fileName) : 'attachment',
        'content-security-policy': "sandbox; default-src 'none'",
      }
      return { status: 200, binary: { contentType: content.contentType, headers, parts: content.parts } }
    },
  },
  {
    method: 'GET',
    pattern: '/v1/memories/:id/pages/:page/image',
    needsApiKey: true,
    openapi: {
      operationId: 'getPageImage',
      tag: 'memories',
      summary: "Get a document page's image",
      description:
        'A PDF page rendered as PNG when the document was stored with `extractPageImages` (at `pageImageDpi`). ' +
        "A chunk's `source.page` names the page it came from.",
      answers: {
        200: { description: 'The page as PNG.', content: { 'image/png': { type: 'string', format: 'binary' } } },
      },
      errors: BY_ID,
      examples: [{ path: { id: EXAMPLE_IDS.memory, page: '1' } }],
      // The example memory is text: it has no pages.
      exampleStatus: 404,
    },
    handle: async (request, { server }) => {
      const png = await getPageImage(server.domain, callContext(request), request.params.id, request.params.page)
      return {
        status: 200,
        binary: { contentType: 'image/png', headers: { 'cache-control': 'private, max-age=3600' }, parts: [png] },
      }
    },
  },
  {
    method: 'GET',
    pattern: '/v1/spaces/:id/memories',
    needsApiKey: true,
    openapi: {
      operationId: 'listMemories',
      tag: 'memories',
      summary: "List a space's memories",
      query: Component.of('ListMemoriesQuery', listMemoriesSchema),
      answers: { 200: json('A page.', VIEW.MemoryPage) },
      errors: BY_ID,
      examples: [{ path: { id: EXAMPLE_IDS.space }, query: { sortOrder: 'DESCENDING', maxResults: '100' } }],
      exampleStatus: 200,
    },
    handle: callWithIdAndListQuery('spaceId', listMemories),
  },
  {
    method: 'POST',
    pattern: '/v1/memories:retrieve',
    needsApiKey: true,
    // Accept chooses between NDJSON and SSE.
    readHeaders: ['accept'],
    openapi: {
      operationId: 'retrieveMemories',
      tag: 'memories',
      summary: 'Retrieve memories (streamed)',
      body: RETRIEVE_REQUEST,
      answers: { 200: STREAM_ANSWER },
      errors: [...BY_ID, 'FAILED_PRECONDITION'],
      examples: [{ body: RETRIEVE_EXAMPLE }],
      exampleStatus: 200,
    },
    handle: (request, deps) => retrieve(request, deps, jsonBody(request)),
  },
  {
    method: 'GET',
    pattern: '/v1/memories:retrieve',
    needsApiKey: true,
    readHeaders: ['accept'],
    openapi: {
      operationId: 'retrieveMemoriesByQuery',
      tag: 'memories',
      summary: 'Retrieve memories (streamed), the request as query parameters',
      description:
        'The same request as POST, flattened: `spaceIds` (repeated or comma-separated; `filter` applies to each), ' +
        '`efSearch`, and the post-processor fields by their own names.',
      bodyAsQuery: RETRIEVE_REQUEST,
      answers: { 200: STREAM_ANSWER },
      errors: [...BY_ID, 'FAILED_PRECONDITION'],
      examples: [
        {
          query: {
            message: RETRIEVE_EXAMPLE.message,
            spaceIds: [EXAMPLE_IDS.space],
            mode: 'KEYWORD',
            requestedSize: 5,
          },
          headers: { accept: SSE_TYPE },
        },
      ],
      exampleStatus: 200,
    },
    handle: (request, deps) => retrieve(request, deps, retrieveQuery(request)),
  },
  {
    method: 'DELETE',
    pattern: '/v1/memories/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'deleteMemory',
      tag: 'memories',
      summary: 'Delete a memory',
      answers: { 204: NO_CONTENT },
      errors: [...BY_ID, 'PERMISSION_DENIED'],
      examples: [{ path: { id: EXAMPLE_IDS.memory } }],
      exampleStatus: 204,
      examplePhase: 'cleanup',
    },
    handle: deleteWithId(deleteMemory),
  },
  {
    method: 'POST',
    pattern: '/v1/memories:batchDelete',
    needsApiKey: true,
    openapi: {
      operationId: 'batchDeleteMemories',
      tag: 'memories',
      summary: 'Delete memories by id, or by space with filters',
      body: Component.of('BatchDeleteMemoriesRequest', batchDeleteMemoriesSchema),
      answers: { 200: json("How many were deleted (and each id's outcome).", VIEW.BatchDeleteResult) },
      errors: ['NOT_FOUND', 'PERMISSION_DENIED'],
      examples: [{ body: { memoryIds: [EXAMPLE_IDS.batchMemory] } }],
      exampleStatus: 200,
      examplePhase: 'cleanup',
    },
    handle: callWithBody(batchDeleteMemories),
  },
]
