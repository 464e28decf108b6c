import type { ServerContext } from '../../../domain/context.js'
import {
  batchCreateMemories,
  batchDeleteMemories,
  createMemory,
  type CreateMemoryResult,
  deleteMemory,
  getMemory,
  getMemoryContent,
  listMemories,
  type Memory as DomainMemory,
} from '../../../domain/memories.js'
import {
  type BatchCreateResult,
  type BatchDeleteMemoriesRequest,
  type CreateMemoryRequest,
  type ListMemoriesRequest,
  type Memory,
  MemoryServiceService,
  ProcessingStatus,
} from '../../../generated/memsvc/v1/memories.js'
import type { batchDeleteMemoriesSchema, createMemorySchema, listMemoriesSchema } from '../../../validation/memory.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, enumOrUndefined, listOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
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

const batchDeleteFromProto = (request: BatchDeleteMemoriesRequest): ProtoInput<BatchDeleteMemoriesRequest, typeof batchDeleteMemoriesSchema> => ({
  memoryIds: listOrUndefined(request.memoryIds),
  spaceId: request.spaceId,
  statusFilter: enumOrUndefined(request.statusFilter),
  filter: request.filter,
})

const memoryToProto = (memory: DomainMemory): ToProto<DomainMemory, Memory> => ({
  ...memory,
  processingStatus: protoEnum(ProcessingStatus, memory.processingStatus),
  chunkingConfig: chunkingToProto(memory.chunkingConfig),
})

const createdToProto = (result: CreateMemoryResult) => ({ memory: memoryToProto(result.memory), created: result.created })

type BatchItem = Awaited<ReturnType<typeof batchCreateMemories>>['results'][number]

const batchItemToProto = (item: BatchItem): BatchCreateResult =>
  'error' in item ? { result: { $case: 'error', value: item.error } } : { result: { $case: 'memory', value: createdToProto(item) } }

export function addMemoryService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(MemoryServiceService, {
    createMemory: async (request, call) => createdToProto(await createMemory(server.domain, call, defined(createFromProto(request)))),
    async batchCreateMemories(request, call) {
      const batch = await batchCreateMemories(server.domain, call, { requests: request.requests.map((item) => defined(createFromProto(item))) })
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
  })
}
