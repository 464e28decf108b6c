import * as grpc from '@grpc/grpc-js'
import { ERROR_CODES, type ErrorCode } from '../../src/errors/app-error.js'
import { AdminServiceClient } from '../../src/generated/memsvc/v1/admin.js'
import { ApiKeyServiceClient } from '../../src/generated/memsvc/v1/apikeys.js'
import { EmbedderServiceClient } from '../../src/generated/memsvc/v1/embedders.js'
import { LlmServiceClient } from '../../src/generated/memsvc/v1/llms.js'
import { MemoryServiceClient } from '../../src/generated/memsvc/v1/memories.js'
import { RerankerServiceClient } from '../../src/generated/memsvc/v1/rerankers.js'
import { SpaceServiceClient } from '../../src/generated/memsvc/v1/spaces.js'
import { SystemServiceClient } from '../../src/generated/memsvc/v1/system.js'
import { UserServiceClient } from '../../src/generated/memsvc/v1/users.js'

/**
 * One operation table, two transports: each operation knows its REST route and its
 * gRPC method, so a test case is written once and run over both.
 */
export type Transport = 'rest' | 'grpc'

export interface ApiResult {
  /** 'OK' or the google.rpc status name, the same on both transports. */
  status: 'OK' | ErrorCode | string
  /** REST: the HTTP status; gRPC: the numeric gRPC code. */
  rawStatus: number
  body: any
  /** REST only. */
  headers?: Headers
  /** Fields named by the error (REST details; gRPC x-error-field trailers). */
  fields: string[]
  message: string
}

type GrpcClientName =
  | 'system'
  | 'users'
  | 'apikeys'
  | 'admin'
  | 'embedders'
  | 'llms'
  | 'rerankers'
  | 'spaces'
  | 'memories'

/** A generated client's method as grpc-js attaches it: unary (request, metadata, options, callback) or a server stream. */
type GrpcMethod = (...args: any[]) => unknown

interface Operation {
  rest(input: any): { method: string; path: string; body?: unknown; query?: Record<string, string> }
  /** `stream`: a server-streaming method; the result's body is `{events}`, each message through `response`. */
  grpc: {
    client: GrpcClientName
    method: string
    stream?: true
    request(input: any): unknown
    response?(output: any): any
  }
}

const stringMap = (value: unknown) => (value === undefined ? undefined : { items: value })

// Embedders, LLMs and rerankers: REST-shaped inputs turned into proto messages (zero enums and empty lists mean "not given").
const credentialsMessage = (credentials: any) =>
  credentials === undefined
    ? undefined
    : {
        ...credentials,
        kind: credentials.kind ?? 'KIND_UNSPECIFIED',
        cloudAdc: credentials.cloudAdc && { scopes: [], ...credentials.cloudAdc },
      }
const samplingMessage = (sampling: any) => (sampling === undefined ? undefined : { stopSequences: [], ...sampling })
const listRequest = (path: string) => (input: any) => {
  const { labelFilter, ...rest } = input ?? {}
  const query: Record<string, string> = {}
  for (const [name, value] of Object.entries(rest)) query[name] = String(value)
  for (const [name, value] of Object.entries(labelFilter ?? {})) query[`label.${name}`] = String(value)
  return { method: 'GET', path, query }
}
const registryCreateMessage = (input: any) => ({
  ...input,
  providerType: input.providerType ?? 'PROVIDER_TYPE_UNSPECIFIED',
  supportedModalities: input.supportedModalities ?? [],
  labels: input.labels ?? {},
  credentials: credentialsMessage(input.credentials),
})
const registryUpdateMessage = (input: any) => ({
  ...input,
  providerType: input.providerType ?? 'PROVIDER_TYPE_UNSPECIFIED',
  supportedModalities: input.supportedModalities === undefined ? undefined : { items: input.supportedModalities },
  credentials: credentialsMessage(input.credentials),
  replaceLabels: stringMap(input.replaceLabels),
  mergeLabels: stringMap(input.mergeLabels),
})
type RegistryVerb = 'create' | 'get' | 'update' | 'delete' | 'probe'
/**
 * The six operations of one registry kind (embedders, LLMs, rerankers), named like its gRPC
 * methods; `ownFields` adds the kind's own fields to create and update messages.
 */
function registryOperations<Singular extends string, Plural extends string>(
  singular: Singular,
  plural: Plural,
  idField: string,
  ownFields: (input: any) => Record<string, unknown> = () => ({}),
) {
  const collection = plural.toLowerCase() as GrpcClientName
  const path = `/v1/${collection}`
  const byId = (verb: string) => ({
    client: collection,
    method: `${verb}${singular}`,
    request: (input: any) => ({ [idField]: input[idField] }),
  })
  const operations: Record<string, Operation> = {
    [`create${singular}`]: {
      rest: (input) => ({ method: 'POST', path, body: input }),
      grpc: {
        client: collection,
        method: `create${singular}`,
        request: (input) => ({ ...registryCreateMessage(input), ...ownFields(input) }),
      },
    },
    [`list${plural}`]: {
      rest: listRequest(path),
      grpc: {
        client: collection,
        method: `list${plural}`,
        request: (input) => ({
          ...input,
          providerType: input?.providerType ?? 'PROVIDER_TYPE_UNSPECIFIED',
          labelFilter: input?.labelFilter ?? {},
        }),
      },
    },
    [`get${singular}`]: { rest: (input) => ({ method: 'GET', path: `${path}/${input[idField]}` }), grpc: byId('get') },
    [`update${singular}`]: {
      rest: (input) => {
        const { [idField]: id, ...body } = input
        return { method: 'PUT', path: `${path}/${id}`, body }
      },
      grpc: {
        client: collection,
        method: `update${singular}`,
        request: (input) => ({ ...registryUpdateMessage(input), ...ownFields(input) }),
      },
    },
    [`delete${singular}`]: {
      rest: (input) => ({ method: 'DELETE', path: `${path}/${input[idField]}` }),
      grpc: byId('delete'),
    },
    [`probe${singular}`]: {
      rest: (input) => ({ method: 'POST', path: `${path}/${input[idField]}:probe` }),
      grpc: byId('probe'),
    },
  }
  return operations as Record<`${RegistryVerb}${Singular}` | `list${Plural}`, Operation>
}

// Spaces and memories: a REST chunking config (one member) as the proto oneof, and back.
export const chunkingMessage = (config: any) => {
  if (config === undefined) return undefined
  const [name] = Object.keys(config)
  if (name === undefined) return {}
  const value = config[name]
  if (name === 'recursive')
    return { strategy: { $case: name, value: { separators: [], keepStrategy: 'KEEP_STRATEGY_UNSPECIFIED', ...value } } }
  return { strategy: { $case: name, value: { ...value } } }
}
const chunkingBody = (config: any) => (config?.strategy ? { [config.strategy.$case]: config.strategy.value } : config)
const spaceBody = (space: any) => ({ ...space, defaultChunkingConfig: chunkingBody(space.defaultChunkingConfig) })
const memoryBody = (memory: any) => ({ ...memory, chunkingConfig: chunkingBody(memory.chunkingConfig) })
const createdBody = (output: any) => ({ ...output, memory: memoryBody(output.memory) })
/** The REST body's flat document options go in the message's documentOptions. */
const memoryCreateMessage = ({ ocr, extractPageImages, pageImageDpi, ocrLanguages, ...input }: any) => ({
  ...input,
  chunkingConfig: chunkingMessage(input.chunkingConfig),
  documentOptions: [ocr, extractPageImages, pageImageDpi, ocrLanguages].every((value) => value === undefined)
    ? undefined
    : { ocr, extractPageImages, pageImageDpi, ocrLanguages: ocrLanguages ?? [] },
})
const memoryUpdateMessage = (input: any) => ({ ...input, chunkingConfig: chunkingMessage(input.chunkingConfig) })
const withStatusFilter = (input: any) => ({
  ...input,
  statusFilter: input?.statusFilter ?? 'PROCESSING_STATUS_UNSPECIFIED',
})
/** gRPC's batch result is a oneof; REST's is `{memory, created}` or `{error}`. */
const batchResults = (output: any) => ({
  results: output.results.map((item: any) =>
    item.result.$case === 'error' ? { error: item.result.value } : createdBody(item.result.value),
  ),
})

// Retrieval: the REST body as a proto request, and each streamed event's oneof as REST's one-member object.
export const retrieveMessage = (input: any) => ({
  ...input,
  message: input.message ?? '',
  mode: input.mode ?? 'RETRIEVAL_MODE_UNSPECIFIED',
  spaceKeys: (input.spaceKeys ?? []).map((key: any) => ({ embedderWeights: [], ...key })),
})
export const retrievalEventBody = (message: any) => {
  const { $case, value } = message.event
  if ($case === 'memoryDefinition') return { [$case]: { memory: memoryBody(value.memory) } }
  // A repeated field has no "absent": REST leaves notices out when there are none.
  if ($case === 'resultSetBoundary' && value.notices?.length === 0) {
    const { notices: _none, ...boundary } = value
    return { [$case]: boundary }
  }
  return { [$case]: value }
}

export const OPERATIONS = {
  initializeSystem: {
    rest: () => ({ method: 'POST', path: '/v1/system/init' }),
    grpc: { client: 'system', method: 'initializeSystem', request: () => ({}) },
  },
  getSystemInfo: {
    rest: () => ({ method: 'GET', path: '/v1/system/info' }),
    grpc: { client: 'system', method: 'getSystemInfo', request: () => ({}) },
  },
  createUser: {
    rest: (input) => ({ method: 'POST', path: '/v1/users', body: input }),
    grpc: {
      client: 'users',
      method: 'createUser',
      request: (input) => ({ ...input, role: input.role ?? 'ROLE_UNSPECIFIED', username: input.username ?? '' }),
    },
  },
  listUsers: {
    rest: (input) => ({ method: 'GET', path: '/v1/users', query: input }),
    grpc: { client: 'users', method: 'listUsers', request: (input) => input },
  },
  getUser: {
    rest: (input) => ({ method: 'GET', path: `/v1/users/${input.userId}` }),
    grpc: { client: 'users', method: 'getUser', request: (input) => ({ userId: input.userId }) },
  },
  deleteUser: {
    rest: (input) => ({ method: 'DELETE', path: `/v1/users/${input.userId}` }),
    grpc: { client: 'users', method: 'deleteUser', request: (input) => ({ userId: input.userId }) },
  },
  getMe: {
    rest: () => ({ method: 'GET', path: '/v1/users/me' }),
    grpc: { client: 'users', method: 'getMe', request: () => ({}) },
  },
  createApiKey: {
    rest: (input) => ({ method: 'POST', path: '/v1/apikeys', body: input }),
    grpc: {
      client: 'apikeys',
      method: 'createApiKey',
      request: (input) => ({
        ...input,
        labels: input.labels ?? {},
        expiresAt: input.expiresAt === undefined ? undefined : Number(input.expiresAt),
      }),
    },
  },
  listApiKeys: {
    rest: (input) => {
      const { labelFilter, ...rest } = input ?? {}
      const query: Record<string, string> = {}
      for (const [name, value] of Object.entries(rest)) query[name] = String(value)
      for (const [name, value] of Object.entries(labelFilter ?? {})) query[`label.${name}`] = String(value)
      return { method: 'GET', path: '/v1/apikeys', query }
    },
    grpc: {
      client: 'apikeys',
      method: 'listApiKeys',
      request: (input) => ({ ...input, labelFilter: input?.labelFilter ?? {} }),
    },
  },
  updateApiKey: {
    rest: (input) => {
      const { apiKeyId, ...body } = input
      return { method: 'PUT', path: `/v1/apikeys/${apiKeyId}`, body }
    },
    grpc: {
      client: 'apikeys',
      method: 'updateApiKey',
      request: (input) => ({
        apiKeyId: input.apiKeyId,
        status: input.status,
        replaceLabels: stringMap(input.replaceLabels),
        mergeLabels: stringMap(input.mergeLabels),
      }),
    },
  },
  deleteApiKey: {
    rest: (input) => ({ method: 'DELETE', path: `/v1/apikeys/${input.apiKeyId}` }),
    grpc: { client: 'apikeys', method: 'deleteApiKey', request: (input) => ({ apiKeyId: input.apiKeyId }) },
  },
  drain: {
    rest: (input) => ({ method: 'POST', path: '/v1/admin:drain', body: input }),
    grpc: { client: 'admin', method: 'drain', request: (input) => input },
  },
  ...registryOperations('Embedder', 'Embedders', 'embedderId', (input) => ({
    distributionType: input.distributionType ?? 'DISTRIBUTION_TYPE_UNSPECIFIED',
  })),
  ...registryOperations('Llm', 'Llms', 'llmId', (input) => ({
    defaultSamplingParams: samplingMessage(input.defaultSamplingParams),
  })),
  ...registryOperations('Reranker', 'Rerankers', 'rerankerId'),
  createSpace: {
    rest: (input) => ({ method: 'POST', path: '/v1/spaces', body: input }),
    grpc: {
      client: 'spaces',
      method: 'createSpace',
      response: spaceBody,
      request: (input) => ({
        ...input,
        labels: input.labels ?? {},
        spaceEmbedders: input.spaceEmbedders ?? [],
        defaultChunkingConfig: chunkingMessage(input.defaultChunkingConfig),
      }),
    },
  },
  listSpaces: {
    rest: listRequest('/v1/spaces'),
    grpc: {
      client: 'spaces',
      method: 'listSpaces',
      response: (output) => ({ ...output, spaces: output.spaces.map(spaceBody) }),
      request: (input) => ({ ...input, labelFilter: input?.labelFilter ?? {} }),
    },
  },
  getSpace: {
    rest: (input) => ({ method: 'GET', path: `/v1/spaces/${input.spaceId}` }),
    grpc: {
      client: 'spaces',
      method: 'getSpace',
      response: spaceBody,
      request: (input) => ({ spaceId: input.spaceId }),
    },
  },
  updateSpace: {
    rest: (input) => {
      const { spaceId, ...body } = input
      return { method: 'PUT', path: `/v1/spaces/${spaceId}`, body }
    },
    grpc: {
      client: 'spaces',
      method: 'updateSpace',
      response: spaceBody,
      request: (input) => ({
        ...input,
        replaceLabels: stringMap(input.replaceLabels),
        mergeLabels: stringMap(input.mergeLabels),
      }),
    },
  },
  deleteSpace: {
    rest: (input) => ({ method: 'DELETE', path: `/v1/spaces/${input.spaceId}` }),
    grpc: { client: 'spaces', method: 'deleteSpace', request: (input) => ({ spaceId: input.spaceId }) },
  },
  addSpaceEmbedder: {
    rest: (input) => {
      const { spaceId, ...body } = input
      return { method: 'POST', path: `/v1/spaces/${spaceId}:addEmbedder`, body }
    },
    grpc: { client: 'spaces', method: 'addSpaceEmbedder', response: spaceBody, request: (input) => input },
  },
  removeSpaceEmbedder: {
    rest: (input) => {
      const { spaceId, ...body } = input
      return { method: 'POST', path: `/v1/spaces/${spaceId}:removeEmbedder`, body }
    },
    grpc: { client: 'spaces', method: 'removeSpaceEmbedder', response: spaceBody, request: (input) => input },
  },
  createMemory: {
    rest: (input) => ({ method: 'POST', path: '/v1/memories', body: input }),
    grpc: { client: 'memories', method: 'createMemory', response: createdBody, request: memoryCreateMessage },
  },
  batchCreateMemories: {
    rest: (input) => ({ method: 'POST', path: '/v1/memories:batchCreate', body: input }),
    grpc: {
      client: 'memories',
      method: 'batchCreateMemories',
      request: (input) => ({ requests: (input.requests ?? []).map(memoryCreateMessage) }),
      response: batchResults,
    },
  },
  getMemory: {
    rest: (input) => ({ method: 'GET', path: `/v1/memories/${input.memoryId}` }),
    grpc: {
      client: 'memories',
      method: 'getMemory',
      response: memoryBody,
      request: (input) => ({ memoryId: input.memoryId }),
    },
  },
  getMemoryContent: {
    rest: (input) => ({ method: 'GET', path: `/v1/memories/${input.memoryId}/content` }),
    grpc: { client: 'memories', method: 'getMemoryContent', request: (input) => ({ memoryId: input.memoryId }) },
  },
  listMemories: {
    rest: (input) => {
      const { spaceId, ...rest } = input
      return listRequest(`/v1/spaces/${spaceId}/memories`)(rest)
    },
    grpc: {
      client: 'memories',
      method: 'listMemories',
      response: (output) => ({ ...output, memories: output.memories.map(memoryBody) }),
      request: withStatusFilter,
    },
  },
  deleteMemory: {
    rest: (input) => ({ method: 'DELETE', path: `/v1/memories/${input.memoryId}` }),
    grpc: { client: 'memories', method: 'deleteMemory', request: (input) => ({ memoryId: input.memoryId }) },
  },
  batchDeleteMemories: {
    rest: (input) => ({ method: 'POST', path: '/v1/memories:batchDelete', body: input }),
    grpc: {
      client: 'memories',
      method: 'batchDeleteMemories',
      request: (input) => ({ memoryIds: [], ...withStatusFilter(input) }),
    },
  },
  updateMemory: {
    rest: (input) => {
      const { memoryId, ...body } = input
      return { method: 'PATCH', path: `/v1/memories/${memoryId}`, body }
    },
    grpc: { client: 'memories', method: 'updateMemory', response: memoryBody, request: memoryUpdateMessage },
  },
  batchUpdateMemories: {
    rest: (input) => ({ method: 'POST', path: '/v1/memories:batchUpdate', body: input }),
    grpc: {
      client: 'memories',
      method: 'batchUpdateMemories',
      request: (input) => ({ requests: (input.requests ?? []).map(memoryUpdateMessage) }),
      response: (output) => ({
        results: output.results.map((item: any) =>
          item.result.$case === 'error' ? { error: item.result.value } : { memory: memoryBody(item.result.value) },
        ),
      }),
    },
  },
  batchGetMemories: {
    rest: (input) => ({ method: 'POST', path: '/v1/memories:batchGet', body: input }),
    grpc: {
      client: 'memories',
      method: 'batchGetMemories',
      request: (input) => ({ memoryIds: input.memoryIds ?? [] }),
      response: (output) => ({
        results: output.results.map((item: any) =>
          item.result.$case === 'error'
            ? { memoryId: item.memoryId, error: item.result.value }
            : { memoryId: item.memoryId, memory: memoryBody(item.result.value) },
        ),
      }),
    },
  },
  getMemoryHistory: {
    rest: (input) => {
      const { memoryId, ...rest } = input
      return listRequest(`/v1/memories/${memoryId}/history`)(rest)
    },
    grpc: { client: 'memories', method: 'getMemoryHistory', request: (input) => input },
  },
  retrieveMemories: {
    rest: (input) => ({ method: 'POST', path: '/v1/memories:retrieve', body: input }),
    grpc: {
      client: 'memories',
      method: 'retrieveMemory',
      stream: true,
      request: retrieveMessage,
      response: retrievalEventBody,
    },
  },
} satisfies Record<string, Operation>

export type OperationName = keyof typeof OPERATIONS

const grpcCodeToName = new Map<number, string>()
for (const [name, codes] of Object.entries(ERROR_CODES))
  if (!grpcCodeToName.has(codes.grpc)) grpcCodeToName.set(codes.grpc, name)

export interface ApiClientTarget {
  restUrl: string
  grpcAddress: string
  grpcCredentials?: grpc.ChannelCredentials
}

export class ApiClient {
  readonly #clients: Record<GrpcClientName, grpc.Client>

  constructor(readonly target: ApiClientTarget) {
    const credentials = target.grpcCredentials ?? grpc.credentials.createInsecure()
    this.#clients = {
      system: new SystemServiceClient(target.grpcAddress, credentials),
      users: new UserServiceClient(target.grpcAddress, credentials),
      apikeys: new ApiKeyServiceClient(target.grpcAddress, credentials),
      admin: new AdminServiceClient(target.grpcAddress, credentials),
      embedders: new EmbedderServiceClient(target.grpcAddress, credentials),
      llms: new LlmServiceClient(target.grpcAddress, credentials),
      rerankers: new RerankerServiceClient(target.grpcAddress, credentials),
      spaces: new SpaceServiceClient(target.grpcAddress, credentials),
      memories: new MemoryServiceClient(target.grpcAddress, credentials),
    }
  }

  close(): void {
    for (const client of Object.values(this.#clients)) client.close()
  }

  call(transport: Transport, operation: OperationName, input: any = {}, apiKey?: string): Promise<ApiResult> {
    return transport === 'rest' ? this.rest(operation, input, apiKey) : this.grpc(operation, input, apiKey)
  }

  /** A raw REST request, for cases only REST can express (malformed JSON, wrong types in a body). */
  async restRaw(
    method: string,
    path: string,
    options: { body?: string; apiKey?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResult> {
    const response = await fetch(`${this.target.restUrl}${path}`, {
      method,
      body: options.body,
      headers: {
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        ...options.headers,
      },
    })
    const text = await response.text()
    // A streamed answer (NDJSON) is read whole here; test/support/stream-readers.ts reads one incrementally.
    const streamed = response.ok && response.headers.get('content-type')?.startsWith('application/x-ndjson')
    const body = streamed ? { events: ndjsonEvents(text) } : text ? JSON.parse(text) : undefined
    const status = response.ok ? 'OK' : (body?.error?.status ?? String(response.status))
    return {
      status,
      rawStatus: response.status,
      body,
      headers: response.headers,
      fields: (body?.error?.details ?? []).map((detail: { field: string }) => detail.field),
      message: body?.error?.message ?? '',
    }
  }

  async rest(operation: OperationName, input: any, apiKey?: string): Promise<ApiResult> {
    const request = (OPERATIONS[operation].rest as (input: any) => ReturnType<Operation['rest']>)(input)
    const query = request.query && Object.keys(request.query).length > 0 ? `?${new URLSearchParams(request.query)}` : ''
    return this.restRaw(request.method, `${request.path}${query}`, {
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      apiKey,
    })
  }

  /** A generated client, for tests that drive a call themselves (streams read incrementally). */
  client(name: GrpcClientName): grpc.Client {
    return this.#clients[name]
  }

  grpc(operation: OperationName, input: any, apiKey?: string): Promise<ApiResult> {
    const spec = OPERATIONS[operation].grpc as Operation['grpc']
    const client = this.#clients[spec.client] as unknown as Record<string, GrpcMethod>
    const metadata = new grpc.Metadata()
    if (apiKey) metadata.set('authorization', `Bearer ${apiKey}`)
    if (spec.stream) return this.#grpcStream(client, spec, input, metadata)
    return new Promise((resolve) => {
      client[spec.method]!.call(
        client,
        spec.request(input),
        metadata,
        { deadline: Date.now() + 10_000 },
        (error: grpc.ServiceError | null, response: unknown) => {
          if (!error) {
            resolve({
              status: 'OK',
              rawStatus: 0,
              body: spec.response ? spec.response(response) : response,
              fields: [],
              message: '',
            })
            return
          }
          const trailerStatus = error.metadata?.get('x-error-status')[0]
          resolve({
            status:
              typeof trailerStatus === 'string'
                ? trailerStatus
                : (grpcCodeToName.get(error.code) ?? String(error.code)),
            rawStatus: error.code,
            body: undefined,
            // Field names are percent-encoded in the trailer (metadata is ASCII only).
            fields: (error.metadata?.get('x-error-field') ?? []).map((field) => decodeURIComponent(String(field))),
            message: error.details,
          })
        },
      )
    })
  }

  #grpcStream(
    client: Record<string, GrpcMethod>,
    spec: Operation['grpc'],
    input: any,
    metadata: grpc.Metadata,
  ): Promise<ApiResult> {
    return new Promise((resolve) => {
      const events: unknown[] = []
      const call = client[spec.method]!.call(client, spec.request(input), metadata, {
        deadline: Date.now() + 30_000,
      }) as grpc.ClientReadableStream<unknown>
      call.on('data', (message) => events.push(spec.response ? spec.response(message) : message))
      call.on('error', (error: grpc.ServiceError) => resolve(grpcFailure(error)))
      call.on('status', (status: grpc.StatusObject) => {
        if (status.code === grpc.status.OK)
          resolve({ status: 'OK', rawStatus: 0, body: { events }, fields: [], message: '' })
      })
    })
  }
}

export function grpcFailure(error: grpc.ServiceError): ApiResult {
  const trailerStatus = error.metadata?.get('x-error-status')[0]
  return {
    status: typeof trailerStatus === 'string' ? trailerStatus : (grpcCodeToName.get(error.code) ?? String(error.code)),
    rawStatus: error.code,
    body: undefined,
    fields: (error.metadata?.get('x-error-field') ?? []).map((field) => decodeURIComponent(String(field))),
    message: error.details,
  }
}

/** NDJSON lines as events; blank lines are heartbeats. */
export function ndjsonEvents(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line))
}

export const TRANSPORTS: Transport[] = ['rest', 'grpc']
