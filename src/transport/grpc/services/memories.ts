import type { ServerContext } from '../../../domain/context.js'
import {
  batchCreateMemories,
  batchDeleteMemories,
  type CreateMemoryResult,
  createMemory,
  type Memory as DomainMemory,
  deleteMemory,
  getMemory,
  getMemoryContent,
  listMemories,
} from '../../../domain/memories.js'
import {
  type RetrievedChunk as DomainRetrievedChunk,
  type RetrievalEvent,
  retrieveMemories,
} from '../../../domain/retrieval.js'
import type { AppError } from '../../../errors/app-error.js'
import {
  type BatchCreateResult,
  type BatchDeleteMemoriesRequest,
  type CreateMemoryRequest,
  type ListMemoriesRequest,
  type Memory,
  MemoryServiceService,
  type PostProcessor,
  ProcessingStatus,
  ResultSetBoundary_Kind,
  type RetrievedChunk,
  type RetrieveMemoryEvent,
  type RetrieveMemoryRequest,
  type SpaceKey,
} from '../../../generated/memsvc/v1/memories.js'
import type { batchDeleteMemoriesSchema, createMemorySchema, listMemoriesSchema } from '../../../validation/memory.js'
import { MEMORY_BATCH_REQUEST_BYTES, MEMORY_REQUEST_BYTES } from '../../../validation/request-limits.js'
import type { postProcessorSchema, retrieveMemoriesSchema, spaceKeySchema } from '../../../validation/retrieval.js'
import type { GrpcServer } from '../grpc-server.js'
import {
  defined,
  enumOrUndefined,
  listOrUndefined,
  type ProtoInput,
  protoEnum,
  type ToProto,
} from '../proto-mapping.js'
import { chunkingFromProto, chunkingToProto } from './chunking.js'

const createFromProto = (request: CreateMemoryRequest): ProtoInput<CreateMemoryRequest, typeof createMemorySchema> => ({
  memoryId: request.memoryId,
  spaceId: request.spaceId,
  originalContent: request.originalContent,
  originalContentB64: request.originalContentB64,
  contentType: request.contentType,
  metadata: request.metadata,
  chunkingConfig: chunkingFromProto(request.chunkingConfig),
  dedupe: request.dedupe,
})

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
})

type RetrievedMemory = DomainMemory & { originalContent?: string }

const memoryToProto = (memory: RetrievedMemory): ToProto<RetrievedMemory, Memory> => ({
  ...memory,
  processingStatus: protoEnum(ProcessingStatus, memory.processingStatus),
  chunkingConfig: chunkingToProto(memory.chunkingConfig),
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
})

const chunkToProto = (chunk: DomainRetrievedChunk): ToProto<DomainRetrievedChunk, RetrievedChunk> => ({ ...chunk })

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
      createMemory: async (request, call) =>
        createdToProto(await createMemory(server.domain, call, defined(createFromProto(request)))),
      async batchCreateMemories(request, call) {
        const batch = await batchCreateMemories(server.domain, call, {
          requests: request.requests.map((item) => defined(createFromProto(item))),
        })
        return { results: batch.results.map(batchItemToProto) }
      },
      getMemory: async (request, call) => memoryToProto(await getMemory(server.domain, call, request.memoryId)),
      getMemoryContent: async (request, call) => getMemoryContent(server.domain, call, request.memoryId),
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
        return { deletedCount: result.deletedCount, results: result.results ?? [] }
      },
      retrieveMemory: {
        open: async (request, call) =>
          eventsToProto(await retrieveMemories(server.domain, call, defined(retrieveFromProto(request)))),
        failureMessage: (error: AppError) => ({
          event: { $case: 'status', value: { code: error.code, message: error.message } },
        }),
      },
    },
    { maxRequestBytes: { createMemory: MEMORY_REQUEST_BYTES, batchCreateMemories: MEMORY_BATCH_REQUEST_BYTES } },
  )
}
