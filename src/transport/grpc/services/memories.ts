import type { CallContext } from '../../../domain/call-context.js'
import type { ServerContext } from '../../../domain/context.js'
import {
  createMemoryOrDocument,
  getOriginalContent,
  getPageImage,
  type OriginalContent,
  uploadMemory,
} from '../../../domain/documents.js'
import {
  batchCreateMemories,
  batchDeleteMemories,
  batchGetMemories,
  type CreateMemoryResult,
  type Memory as DomainMemory,
  deleteMemory,
  getMemory,
  getMemoryContent,
  listMemories,
} from '../../../domain/memories.js'
import { type MemoryChange as DomainMemoryChange, getMemoryHistory } from '../../../domain/memory-changes.js'
import { batchUpdateMemories, updateMemory } from '../../../domain/memory-updates.js'
import {
  type RetrievedChunk as DomainRetrievedChunk,
  type RetrievalEvent,
  retrieveMemories,
} from '../../../domain/retrieval.js'
import { type AppError, invalidArgument } from '../../../errors/app-error.js'
import {
  type BatchCreateResult,
  type BatchDeleteMemoriesRequest,
  type BatchGetResult,
  type BatchUpdateResult,
  type CreateMemoryRequest,
  type DocumentOptions,
  type ListMemoriesRequest,
  type Memory,
  type MemoryChange,
  type MemoryContentChunk,
  MemoryServiceService,
  type PostProcessor,
  ProcessingStatus,
  type RecencyOptions,
  ResultSetBoundary_Kind,
  type RetrievedChunk,
  type RetrieveMemoryEvent,
  type RetrieveMemoryRequest,
  type SpaceKey,
  type UpdateMemoryRequest,
  type UploadMemoryRequest,
} from '../../../generated/memsvc/v1/memories.js'
import type { batchDeleteMemoriesSchema, createMemorySchema, listMemoriesSchema } from '../../../validation/memory.js'
import type { updateMemorySchema } from '../../../validation/memory-updates.js'
import { MEMORY_BATCH_REQUEST_BYTES, MEMORY_REQUEST_BYTES } from '../../../validation/request-limits.js'
import type {
  postProcessorSchema,
  recencySchema,
  retrieveMemoriesSchema,
  spaceKeySchema,
} from '../../../validation/retrieval.js'
import type { GrpcServer } from '../grpc-server.js'
import { headerThenData } from '../header-then-data.js'
import {
  defined,
  enumOrUndefined,
  listOrUndefined,
  type ProtoInput,
  protoEnum,
  type ToProto,
} from '../proto-mapping.js'
import { chunkingFromProto, chunkingToProto } from './chunking.js'

/** An UploadMemory data message, at most: a client sends a file in pieces of its choosing up to this. */
const UPLOAD_MESSAGE_BYTES = 4 * 1024 * 1024 + 1024
/** DownloadMemoryContent's pieces, each within every client's default 4 MiB receive limit. */
const DOWNLOAD_MESSAGE_BYTES = 1024 * 1024

/**
 * The request with its document options flattened, as the shared schema takes them; the
 * document's bytes travel beside the fields (as an upload's body does over REST).
 */
type CreateFields = Omit<CreateMemoryRequest, 'originalContentBytes' | 'documentOptions'> &
  Partial<Omit<DocumentOptions, 'ocrLanguages'>> &
  Pick<DocumentOptions, 'ocrLanguages'>

function flatten({ documentOptions: options, originalContentBytes: _bytes, ...request }: CreateMemoryRequest) {
  return {
    ...request,
    ocr: options?.ocr,
    extractPageImages: options?.extractPageImages,
    pageImageDpi: options?.pageImageDpi,
    ocrLanguages: options?.ocrLanguages ?? [],
  }
}

const createFromProto = (request: CreateFields): ProtoInput<CreateFields, typeof createMemorySchema> => ({
  memoryId: request.memoryId,
  spaceId: request.spaceId,
  originalContent: request.originalContent,
  originalContentB64: request.originalContentB64,
  contentType: request.contentType,
  metadata: request.metadata,
  chunkingConfig: chunkingFromProto(request.chunkingConfig),
  dedupe: request.dedupe,
  validUntil: request.validUntil,
  fileName: request.fileName,
  ocr: request.ocr,
  extractPageImages: request.extractPageImages,
  pageImageDpi: request.pageImageDpi,
  ocrLanguages: listOrUndefined(request.ocrLanguages),
})

/** A create whose content is bytes, or an UploadMemory stream's header: the fields of an upload. */
function uploadFieldsFromProto(request: CreateMemoryRequest) {
  const { originalContent, originalContentB64, ...fields } = defined(createFromProto(flatten(request)))
  if (originalContent !== undefined || originalContentB64 !== undefined)
    throw invalidArgument('originalContentBytes', 'send the content once: as bytes, or as original_content(_b64)')
  return fields
}

async function receiveUpload(server: ServerContext, messages: AsyncIterable<UploadMemoryRequest>, call: CallContext) {
  const { header, data } = await headerThenData(messages, {
    header: 'the first message of an upload is its header (a CreateMemoryRequest)',
    data: 'after the header, every message of an upload is data',
  })
  if (header.originalContentBytes !== undefined && header.originalContentBytes.length > 0)
    throw invalidArgument('header.originalContentBytes', 'send the bytes in data messages after the header')
  return createdToProto(await uploadMemory(server.domain, call, { fields: uploadFieldsFromProto(header), body: data }))
}

async function* downloadChunks(content: OriginalContent): AsyncGenerator<MemoryContentChunk> {
  let first = true
  for await (const part of content.parts) {
    // Within gRPC's default 4 MiB receive limit of every client.
    for (let offset = 0; offset < part.length || first; offset += DOWNLOAD_MESSAGE_BYTES) {
      const data = part.subarray(offset, offset + DOWNLOAD_MESSAGE_BYTES)
      yield first
        ? { contentType: content.contentType, fileName: content.fileName, contentBytes: content.bytes, data }
        : { data }
      first = false
    }
  }
}

const listFromProto = (request: ListMemoriesRequest): ProtoInput<ListMemoriesRequest, typeof listMemoriesSchema> => ({
  spaceId: request.spaceId,
  statusFilter: enumOrUndefined(request.statusFilter),
  maxResults: request.maxResults,
  nextToken: request.nextToken,
  sortBy: request.sortBy,
  sortOrder: request.sortOrder,
  filter: request.filter,
})

const batchDeleteFromProto = (
  request: BatchDeleteMemoriesRequest,
): ProtoInput<BatchDeleteMemoriesRequest, typeof batchDeleteMemoriesSchema> => ({
  memoryIds: listOrUndefined(request.memoryIds),
  spaceId: request.spaceId,
  statusFilter: enumOrUndefined(request.statusFilter),
  filter: request.filter,
  dryRun: request.dryRun,
  expectedCount: request.expectedCount,
})

const updateFromProto = (request: UpdateMemoryRequest): ProtoInput<UpdateMemoryRequest, typeof updateMemorySchema> => ({
  memoryId: request.memoryId,
  expectedVersion: request.expectedVersion,
  replaceMetadata: request.replaceMetadata,
  mergeMetadata: request.mergeMetadata,
  validUntil: request.validUntil,
  clearValidUntil: request.clearValidUntil,
  originalContent: request.originalContent,
  originalContentB64: request.originalContentB64,
  contentType: request.contentType,
  chunkingConfig: chunkingFromProto(request.chunkingConfig),
})

const changeToProto = (change: DomainMemoryChange): ToProto<DomainMemoryChange, MemoryChange> => change

type RetrievedMemory = DomainMemory & { originalContent?: string }

const memoryToProto = (memory: RetrievedMemory): ToProto<RetrievedMemory, Memory> => ({
  ...memory,
  processingStatus: protoEnum(ProcessingStatus, memory.processingStatus),
  chunkingConfig: chunkingToProto(memory.chunkingConfig),
  extraction: memory.extraction && {
    ...memory.extraction,
    pages: memory.extraction.pages.map((page) => ({ ...page, imageStored: page.imageStored === true })),
  },
})

const createdToProto = (result: CreateMemoryResult) => ({
  memory: memoryToProto(result.memory),
  created: result.created,
})

type BatchItem = Awaited<ReturnType<typeof batchCreateMemories>>['results'][number]

const batchItemToProto = (item: BatchItem): BatchCreateResult =>
  'error' in item
    ? { result: { $case: 'error', value: item.error } }
    : { result: { $case: 'memory', value: createdToProto(item) } }

const spaceKeyFromProto = (key: SpaceKey): ProtoInput<SpaceKey, typeof spaceKeySchema> => ({
  spaceId: key.spaceId,
  embedderWeights: listOrUndefined(key.embedderWeights),
  filter: key.filter,
})

const postProcessorFromProto = (post: PostProcessor): ProtoInput<PostProcessor, typeof postProcessorSchema> => ({
  rerankerId: post.rerankerId,
  relevanceThreshold: post.relevanceThreshold,
  chronologicalResort: post.chronologicalResort,
  llmId: post.llmId,
  llmTemperature: post.llmTemperature,
  maxResults: post.maxResults,
  systemPrompt: post.systemPrompt,
})

const recencyFromProto = (recency: RecencyOptions): ProtoInput<RecencyOptions, typeof recencySchema> => ({
  halfLifeSeconds: recency.halfLifeSeconds,
  weight: recency.weight,
})

const retrieveFromProto = (
  request: RetrieveMemoryRequest,
): ProtoInput<RetrieveMemoryRequest, typeof retrieveMemoriesSchema> => ({
  message: request.message,
  spaceKeys: request.spaceKeys.map((key) => defined(spaceKeyFromProto(key))),
  requestedSize: request.requestedSize,
  fetchMemory: request.fetchMemory,
  fetchMemoryContent: request.fetchMemoryContent,
  mode: enumOrUndefined(request.mode),
  hnsw: request.hnsw && defined({ efSearch: request.hnsw.efSearch }),
  postProcessor: request.postProcessor && defined(postProcessorFromProto(request.postProcessor)),
  recency: request.recency && defined(recencyFromProto(request.recency)),
  includeExpired: request.includeExpired,
})

const chunkToProto = (chunk: DomainRetrievedChunk): ToProto<DomainRetrievedChunk, RetrievedChunk> => ({
  ...chunk,
  source: chunk.source && { ...chunk.source, headingPath: chunk.source.headingPath ?? [] },
})

function eventToProto(event: RetrievalEvent): RetrieveMemoryEvent {
  if ('resultSetBoundary' in event) {
    const boundary = event.resultSetBoundary
    return {
      event: {
        $case: 'resultSetBoundary',
        value: { ...boundary, kind: protoEnum(ResultSetBoundary_Kind, boundary.kind), notices: boundary.notices ?? [] },
      },
    }
  }
  if ('memoryDefinition' in event)
    return { event: { $case: 'memoryDefinition', value: { memory: memoryToProto(event.memoryDefinition.memory) } } }
  if ('retrievedItem' in event)
    return { event: { $case: 'retrievedItem', value: { chunk: chunkToProto(event.retrievedItem.chunk) } } }
  if ('abstractReply' in event) return { event: { $case: 'abstractReply', value: event.abstractReply } }
  return { event: { $case: 'status', value: event.status } }
}

async function* eventsToProto(events: AsyncIterable<RetrievalEvent>): AsyncGenerator<RetrieveMemoryEvent> {
  for await (const event of events) yield eventToProto(event)
}

export function addMemoryService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(
    MemoryServiceService,
    {
      async createMemory(request, call) {
        if (request.originalContentBytes === undefined)
          return createdToProto(
            await createMemoryOrDocument(server.domain, call, defined(createFromProto(flatten(request)))),
          )
        const fields = uploadFieldsFromProto(request)
        return createdToProto(await uploadMemory(server.domain, call, { fields, body: [request.originalContentBytes] }))
      },
      async batchCreateMemories(request, call) {
        const batch = await batchCreateMemories(server.domain, call, {
          requests: request.requests.map((item) => defined(createFromProto(flatten(item)))),
        })
        return { results: batch.results.map(batchItemToProto) }
      },
      getMemory: async (request, call) => memoryToProto(await getMemory(server.domain, call, request.memoryId)),
      getMemoryContent: async (request, call) => getMemoryContent(server.domain, call, request.memoryId),
      uploadMemory: { receive: (messages, call) => receiveUpload(server, messages, call) },
      downloadMemoryContent: {
        open: async (request, call) => downloadChunks(await getOriginalContent(server.domain, call, request.memoryId)),
        // Bytes cannot carry an error: the stream is cut, and the client sees fewer bytes than announced.
        failureMessage: () => ({ data: Buffer.alloc(0) }),
      },
      async getPageImage(request, call) {
        const png = await getPageImage(server.domain, call, request.memoryId, request.pageNumber)
        return { contentType: 'image/png', data: png }
      },
      async listMemories(request, call) {
        const page = await listMemories(server.domain, call, defined(listFromProto(request)))
        return { memories: page.memories.map(memoryToProto), nextToken: page.nextToken }
      },
      async deleteMemory(request, call) {
        await deleteMemory(server.domain, call, request.memoryId)
        return {}
      },
      async batchDeleteMemories(request, call) {
        const result = await batchDeleteMemories(server.domain, call, defined(batchDeleteFromProto(request)))
        return { ...result, results: result.results ?? [] }
      },
      updateMemory: async (request, call) =>
        memoryToProto(await updateMemory(server.domain, call, defined(updateFromProto(request)))),
      async batchUpdateMemories(request, call) {
        const batch = await batchUpdateMemories(server.domain, call, {
          requests: request.requests.map((item) => defined(updateFromProto(item))),
        })
        return {
          results: batch.results.map(
            (item): BatchUpdateResult =>
              'error' in item
                ? { result: { $case: 'error', value: item.error } }
                : { result: { $case: 'memory', value: memoryToProto(item.memory) } },
          ),
        }
      },
      async batchGetMemories(request, call) {
        const batch = await batchGetMemories(server.domain, call, { memoryIds: request.memoryIds })
        return {
          results: batch.results.map(
            ({ memoryId, memory, error }): BatchGetResult => ({
              memoryId,
              result: memory ? { $case: 'memory', value: memoryToProto(memory) } : { $case: 'error', value: error! },
            }),
          ),
        }
      },
      async getMemoryHistory(request, call) {
        const history = await getMemoryHistory(server.domain, call, defined({ ...request }))
        return { changes: history.changes.map(changeToProto), nextToken: history.nextToken }
      },
      retrieveMemory: {
        open: async (request, call) =>
          eventsToProto(await retrieveMemories(server.domain, call, defined(retrieveFromProto(request)))),
        failureMessage: (error: AppError) => ({
          event: { $case: 'status', value: { code: error.code, message: error.message } },
        }),
      },
    },
    {
      maxRequestBytes: {
        createMemory: MEMORY_REQUEST_BYTES,
        batchCreateMemories: MEMORY_BATCH_REQUEST_BYTES,
        batchUpdateMemories: MEMORY_BATCH_REQUEST_BYTES,
        updateMemory: MEMORY_REQUEST_BYTES,
        uploadMemory: UPLOAD_MESSAGE_BYTES,
      },
    },
  )
}
