// Every REST operation, as the OpenAPI document describes it: the route it is served by (as
// registered in src/transport/rest/routes), its request and answer schemas (by component name,
// see document.ts) and one worked example. test/api/openapi.route-table.test.ts checks that
// this list and the registered routes are the same; test/api/openapi.happy.test.ts sends every
// example, in `step` order (later examples use what earlier ones created), to a real server.
import type { ErrorCode } from '../../../errors/app-error.js'
import type { HttpMethod } from '../http-server.js'

export type Security = 'none' | 'bearer' | 'metrics' | 'mcp'

export interface Answer {
  description: string
  /** A component schema name (JSON), or a media type with a schema for other bodies. */
  schema?: string
  content?: Record<string, { schema: Record<string, unknown> }>
  headers?: string[]
}

export interface Example {
  name?: string
  path?: Record<string, string>
  query?: Record<string, string | number | string[]>
  body?: unknown
  headers?: Record<string, string>
}

export interface Operation {
  /** The registered route that serves it: "METHOD pattern". */
  route: `${HttpMethod} ${string}`
  method: HttpMethod
  /** The OpenAPI path (a custom method spells out its verb). */
  path: string
  operationId: string
  tag: string
  summary: string
  description?: string
  security: Security
  /** Component name of the JSON request body. */
  body?: string
  /** Component name of an object schema whose properties are query parameters. */
  query?: string
  /** The query string stands for a retrieval request, flattened as retrieve-query.ts reads it. */
  retrievalQuery?: true
  answers: Record<number, Answer>
  errors: ErrorCode[]
  examples: Example[]
  /** The status the example answers with. */
  exampleStatus: number
}

/** Fixed ids, so that examples can refer to what earlier examples created. */
export const EXAMPLE_IDS = {
  user: '11111111-1111-4111-8111-111111111111',
  apiKey: '22222222-2222-4222-8222-222222222222',
  embedder: '33333333-3333-4333-8333-333333333333',
  secondEmbedder: '33333333-3333-4333-8333-333333333334',
  llm: '44444444-4444-4444-8444-444444444444',
  reranker: '55555555-5555-4555-8555-555555555555',
  space: '66666666-6666-4666-8666-666666666666',
  memory: '77777777-7777-4777-8777-777777777777',
  batchMemory: '77777777-7777-4777-8777-777777777778',
} as const

/** No provider listens here: probes and ingestion fail, which the examples do not depend on. */
const EXAMPLE_PROVIDER_URL = 'http://127.0.0.1:9'

const json = (description: string, schema: string): Answer => ({ description, schema })
const noContent: Answer = { description: 'Done; no body.' }
const created = (description: string, schema: string): Answer => ({ description, schema, headers: ['Location'] })

const KEYED: ErrorCode[] = ['UNAUTHENTICATED', 'UNAVAILABLE']
const WITH_BODY: ErrorCode[] = ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']
const LIST_ERRORS: ErrorCode[] = [...KEYED, 'INVALID_ARGUMENT', 'PERMISSION_DENIED']
const ONE_ERRORS: ErrorCode[] = [...KEYED, 'INVALID_ARGUMENT', 'NOT_FOUND']

interface RegistryKind {
  collection: 'embedders' | 'llms' | 'rerankers'
  noun: string
  /** "an embedder", "an LLM", "a reranker". */
  article: 'a' | 'an'
  schema: 'Embedder' | 'Llm' | 'Reranker'
  id: string
  createExamples: Example[]
  updateBody: unknown
}

const REGISTRY_KINDS: RegistryKind[] = [
  {
    collection: 'embedders',
    noun: 'embedder',
    article: 'an',
    schema: 'Embedder',
    id: EXAMPLE_IDS.embedder,
    createExamples: [
      {
        name: 'tei',
        body: {
          embedderId: EXAMPLE_IDS.embedder,
          displayName: 'bge-small on TEI',
          providerType: 'TEI',
          endpointUrl: EXAMPLE_PROVIDER_URL,
          modelIdentifier: 'BAAI/bge-small-en-v1.5',
          dimensionality: 384,
          credentials: { kind: 'NONE' },
        },
      },
      {
        name: 'vllm',
        body: {
          embedderId: EXAMPLE_IDS.secondEmbedder,
          displayName: 'e5 on vLLM',
          providerType: 'VLLM',
          endpointUrl: EXAMPLE_PROVIDER_URL,
          modelIdentifier: 'intfloat/e5-small-v2',
          dimensionality: 384,
          labels: { team: 'search' },
          credentials: { kind: 'API_KEY', apiKey: { inlineSecret: 'provider-secret' } },
        },
      },
    ],
    updateBody: { description: 'Small English embedder' },
  },
  {
    collection: 'llms',
    noun: 'LLM',
    article: 'an',
    schema: 'Llm',
    id: EXAMPLE_IDS.llm,
    createExamples: [
      {
        body: {
          llmId: EXAMPLE_IDS.llm,
          displayName: 'Llama on Ollama',
          providerType: 'OLLAMA',
          endpointUrl: EXAMPLE_PROVIDER_URL,
          modelIdentifier: 'llama3.2',
          capabilities: { supportsChat: true },
          credentials: { kind: 'NONE' },
        },
      },
    ],
    updateBody: { mergeLabels: { tier: 'local' } },
  },
  {
    collection: 'rerankers',
    noun: 'reranker',
    article: 'a',
    schema: 'Reranker',
    id: EXAMPLE_IDS.reranker,
    createExamples: [
      {
        body: {
          rerankerId: EXAMPLE_IDS.reranker,
          displayName: 'bge reranker on TEI',
          providerType: 'TEI',
          endpointUrl: EXAMPLE_PROVIDER_URL,
          modelIdentifier: 'BAAI/bge-reranker-base',
          credentials: { kind: 'NONE' },
        },
      },
    ],
    updateBody: { displayName: 'bge reranker' },
  },
]

/** A registry kind's operations; the delete goes near the end of the walk-through, after the spaces that use it. */
function registryOperations(kind: RegistryKind): { operations: Operation[]; deletion: Operation } {
  const collection = `/v1/${kind.collection}`
  const upper = kind.schema
  const plural = kind.schema === 'Llm' ? 'Llms' : `${kind.schema}s`
  const operations: Operation[] = [
    {
      route: `POST ${collection}`,
      method: 'POST',
      path: collection,
      operationId: `create${upper}`,
      tag: kind.collection,
      summary: `Register ${kind.article} ${kind.noun}`,
      description: 'A connectivity probe runs in the background; its outcome shows as `lastProbe`.',
      security: 'bearer',
      body: `Create${upper}Request`,
      answers: { 201: created(`The ${kind.noun}.`, upper) },
      errors: [...KEYED, ...WITH_BODY, 'ALREADY_EXISTS', 'PERMISSION_DENIED'],
      examples: kind.createExamples,
      exampleStatus: 201,
    },
    {
      route: `GET ${collection}`,
      method: 'GET',
      path: collection,
      operationId: `list${plural}`,
      tag: kind.collection,
      summary: `List ${kind.noun}s`,
      description: 'Filter by label with `label.<key>=<value>` query parameters.',
      security: 'bearer',
      query: `List${plural}Query`,
      answers: { 200: json('A page.', `${upper}Page`) },
      errors: LIST_ERRORS,
      examples: [{ query: { maxResults: '10' } }],
      exampleStatus: 200,
    },
    {
      route: `GET ${collection}/:id`,
      method: 'GET',
      path: `${collection}/{id}`,
      operationId: `get${upper}`,
      tag: kind.collection,
      summary: `Get ${kind.article} ${kind.noun}`,
      security: 'bearer',
      answers: { 200: json(`The ${kind.noun}.`, upper) },
      errors: ONE_ERRORS,
      examples: [{ path: { id: kind.id } }],
      exampleStatus: 200,
    },
    {
      route: `PUT ${collection}/:id`,
      method: 'PUT',
      path: `${collection}/{id}`,
      operationId: `update${upper}`,
      tag: kind.collection,
      summary: `Update ${kind.article} ${kind.noun}`,
      security: 'bearer',
      body: `Update${upper}Request`,
      answers: { 200: json(`The updated ${kind.noun}.`, upper) },
      errors: [...ONE_ERRORS, ...WITH_BODY, 'PERMISSION_DENIED'],
      examples: [{ path: { id: kind.id }, body: kind.updateBody }],
      exampleStatus: 200,
    },
    {
      route: `POST ${collection}/:id`,
      method: 'POST',
      path: `${collection}/{id}:probe`,
      operationId: `probe${upper}`,
      tag: kind.collection,
      summary: `Re-run the ${kind.noun}'s connectivity probe`,
      security: 'bearer',
      answers: { 202: json('The probe job; its outcome shows as `lastProbe`.', 'JobAccepted') },
      errors: ONE_ERRORS,
      examples: [{ path: { id: kind.id } }],
      exampleStatus: 202,
    },
  ]
  const deletion: Operation = {
    route: `DELETE ${collection}/:id`,
    method: 'DELETE',
    path: `${collection}/{id}`,
    operationId: `delete${upper}`,
    tag: kind.collection,
    summary: `Delete ${kind.article} ${kind.noun}`,
    security: 'bearer',
    answers: { 204: noContent },
    errors: [...ONE_ERRORS, 'PERMISSION_DENIED', 'FAILED_PRECONDITION'],
    examples: [{ path: { id: kind.id } }],
    exampleStatus: 204,
  }
  return { operations, deletion }
}

const REGISTRIES = REGISTRY_KINDS.map(registryOperations)

const RETRIEVE_EXAMPLE = {
  message: 'How does the analytical engine weave patterns?',
  spaceKeys: [{ spaceId: EXAMPLE_IDS.space }],
  mode: 'KEYWORD',
  requestedSize: 5,
}

const STREAM_ANSWER: Answer = {
  description:
    'A stream of retrieval events, each written as soon as it is known: NDJSON (one event per line; empty lines are heartbeats) by default, ' +
    'or Server-Sent Events (`data: <event>`; comment lines are heartbeats) when Accept names text/event-stream. ' +
    'An error after the first event arrives as a last `status` event.',
  content: {
    'application/x-ndjson': { schema: { $ref: '#/components/schemas/RetrievalEvent' } },
    'text/event-stream': {
      schema: {
        type: 'string',
        description: 'Events as `data: <RetrievalEvent JSON>` lines, each followed by a blank line.',
      },
    },
  },
}

/** In step order: each example may use what the ones before it created. */
export const OPERATIONS: Operation[] = [
  {
    route: 'GET /livez',
    method: 'GET',
    path: '/livez',
    operationId: 'livez',
    tag: 'operations',
    summary: 'Liveness probe',
    security: 'none',
    answers: { 200: json('The process is alive.', 'Liveness') },
    errors: [],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /readyz',
    method: 'GET',
    path: '/readyz',
    operationId: 'readyz',
    tag: 'operations',
    summary: 'Readiness probe',
    security: 'none',
    answers: {
      200: json('Ready for traffic.', 'Readiness'),
      503: json('Not ready (starting, draining, or the database is unreachable).', 'Readiness'),
    },
    errors: [],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /startupz',
    method: 'GET',
    path: '/startupz',
    operationId: 'startupz',
    tag: 'operations',
    summary: 'Startup probe',
    security: 'none',
    answers: { 200: json('Started.', 'Startup'), 503: json('Still starting.', 'Startup') },
    errors: [],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /metrics',
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'operations',
    summary: 'Prometheus metrics',
    security: 'metrics',
    answers: {
      200: {
        description: 'Metrics in the Prometheus text format.',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
    errors: ['UNAUTHENTICATED'],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/openapi.json',
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    tag: 'system',
    summary: 'This document',
    security: 'none',
    answers: {
      200: {
        description: 'The OpenAPI 3.1 document of the REST API.',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
    errors: [],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/system/info',
    method: 'GET',
    path: '/v1/system/info',
    operationId: 'getSystemInfo',
    tag: 'system',
    summary: 'Version, state and storage of the server',
    security: 'none',
    answers: { 200: json('What the server runs and whether it is initialised.', 'SystemInfo') },
    errors: ['UNAVAILABLE'],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'POST /v1/system/init',
    method: 'POST',
    path: '/v1/system/init',
    operationId: 'initializeSystem',
    tag: 'system',
    summary: 'Create the root user and its API key (once)',
    description:
      'The first call answers the root API key, shown this once; later calls answer `alreadyInitialized: true`.',
    security: 'none',
    answers: { 200: json('The outcome.', 'InitializeSystemResult') },
    errors: ['UNAVAILABLE'],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'POST /v1/users',
    method: 'POST',
    path: '/v1/users',
    operationId: 'createUser',
    tag: 'users',
    summary: 'Create a user (admins)',
    security: 'bearer',
    body: 'CreateUserRequest',
    answers: { 201: created('The user.', 'User') },
    errors: [...KEYED, ...WITH_BODY, 'PERMISSION_DENIED', 'ALREADY_EXISTS'],
    examples: [{ body: { userId: EXAMPLE_IDS.user, username: 'ada', displayName: 'Ada Lovelace', role: 'USER' } }],
    exampleStatus: 201,
  },
  {
    route: 'GET /v1/users',
    method: 'GET',
    path: '/v1/users',
    operationId: 'listUsers',
    tag: 'users',
    summary: 'List users (admins)',
    security: 'bearer',
    query: 'ListUsersQuery',
    answers: { 200: json('A page.', 'UserPage') },
    errors: LIST_ERRORS,
    examples: [{ query: { maxResults: '50' } }],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/users/me',
    method: 'GET',
    path: '/v1/users/me',
    operationId: 'getMe',
    tag: 'users',
    summary: 'The caller',
    security: 'bearer',
    answers: { 200: json('The user the API key belongs to.', 'User') },
    errors: KEYED,
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/users/:id',
    method: 'GET',
    path: '/v1/users/{id}',
    operationId: 'getUser',
    tag: 'users',
    summary: 'Get a user',
    security: 'bearer',
    answers: { 200: json('The user.', 'User') },
    errors: [...ONE_ERRORS, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.user } }],
    exampleStatus: 200,
  },
  {
    route: 'POST /v1/apikeys',
    method: 'POST',
    path: '/v1/apikeys',
    operationId: 'createApiKey',
    tag: 'apikeys',
    summary: 'Create an API key',
    description: 'The raw key (`msk_…`) is in this answer only; the server keeps its hash.',
    security: 'bearer',
    body: 'CreateApiKeyRequest',
    answers: { 201: created('The key and its metadata.', 'CreatedApiKey') },
    errors: [...KEYED, ...WITH_BODY, 'PERMISSION_DENIED', 'ALREADY_EXISTS'],
    examples: [{ body: { apiKeyId: EXAMPLE_IDS.apiKey, ownerId: EXAMPLE_IDS.user, labels: { purpose: 'docs' } } }],
    exampleStatus: 201,
  },
  {
    route: 'GET /v1/apikeys',
    method: 'GET',
    path: '/v1/apikeys',
    operationId: 'listApiKeys',
    tag: 'apikeys',
    summary: 'List API keys',
    description: 'Filter by label with `label.<key>=<value>` query parameters.',
    security: 'bearer',
    query: 'ListApiKeysQuery',
    answers: { 200: json('A page.', 'ApiKeyPage') },
    errors: LIST_ERRORS,
    examples: [{ query: { status: 'ACTIVE' } }],
    exampleStatus: 200,
  },
  {
    route: 'PUT /v1/apikeys/:id',
    method: 'PUT',
    path: '/v1/apikeys/{id}',
    operationId: 'updateApiKey',
    tag: 'apikeys',
    summary: 'Update an API key (status, labels)',
    security: 'bearer',
    body: 'UpdateApiKeyRequest',
    answers: { 200: json('The key.', 'ApiKey') },
    errors: [...ONE_ERRORS, ...WITH_BODY, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.apiKey }, body: { status: 'INACTIVE', mergeLabels: { rotated: 'yes' } } }],
    exampleStatus: 200,
  },
  ...REGISTRIES.flatMap((registry) => registry.operations),
  {
    route: 'POST /v1/spaces',
    method: 'POST',
    path: '/v1/spaces',
    operationId: 'createSpace',
    tag: 'spaces',
    summary: 'Create a space',
    security: 'bearer',
    body: 'CreateSpaceRequest',
    answers: { 201: created('The space.', 'Space') },
    errors: [...KEYED, ...WITH_BODY, 'PERMISSION_DENIED', 'ALREADY_EXISTS', 'NOT_FOUND'],
    examples: [
      {
        body: {
          spaceId: EXAMPLE_IDS.space,
          name: 'Research notes',
          labels: { project: 'engine' },
          spaceEmbedders: [{ embedderId: EXAMPLE_IDS.embedder, defaultRetrievalWeight: 1 }],
          defaultChunkingConfig: { recursive: { chunkSize: 256, chunkOverlap: 32 } },
        },
      },
    ],
    exampleStatus: 201,
  },
  {
    route: 'GET /v1/spaces',
    method: 'GET',
    path: '/v1/spaces',
    operationId: 'listSpaces',
    tag: 'spaces',
    summary: 'List spaces',
    description: 'Filter by label with `label.<key>=<value>` query parameters.',
    security: 'bearer',
    query: 'ListSpacesQuery',
    answers: { 200: json('A page.', 'SpacePage') },
    errors: LIST_ERRORS,
    examples: [{ query: { maxResults: '20' } }],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/spaces/:id',
    method: 'GET',
    path: '/v1/spaces/{id}',
    operationId: 'getSpace',
    tag: 'spaces',
    summary: 'Get a space',
    security: 'bearer',
    answers: { 200: json('The space.', 'Space') },
    errors: ONE_ERRORS,
    examples: [{ path: { id: EXAMPLE_IDS.space } }],
    exampleStatus: 200,
  },
  {
    route: 'PUT /v1/spaces/:id',
    method: 'PUT',
    path: '/v1/spaces/{id}',
    operationId: 'updateSpace',
    tag: 'spaces',
    summary: 'Update a space',
    security: 'bearer',
    body: 'UpdateSpaceRequest',
    answers: { 200: json('The space.', 'Space') },
    errors: [...ONE_ERRORS, ...WITH_BODY, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.space }, body: { name: 'Engine research', publicRead: false } }],
    exampleStatus: 200,
  },
  {
    route: 'POST /v1/spaces/:id',
    method: 'POST',
    path: '/v1/spaces/{id}:addEmbedder',
    operationId: 'addSpaceEmbedder',
    tag: 'spaces',
    summary: 'Add an embedder to a space',
    description: 'Memories already in the space are embedded in the background (`indexState: BACKFILLING`).',
    security: 'bearer',
    body: 'AddEmbedderRequest',
    answers: { 202: json('The space.', 'Space') },
    errors: [...ONE_ERRORS, ...WITH_BODY, 'PERMISSION_DENIED', 'ALREADY_EXISTS', 'FAILED_PRECONDITION'],
    examples: [
      {
        path: { id: EXAMPLE_IDS.space },
        body: { embedderId: EXAMPLE_IDS.secondEmbedder, defaultRetrievalWeight: 0.5 },
      },
    ],
    exampleStatus: 202,
  },
  {
    route: 'POST /v1/spaces/:id',
    method: 'POST',
    path: '/v1/spaces/{id}:removeEmbedder',
    operationId: 'removeSpaceEmbedder',
    tag: 'spaces',
    summary: 'Remove an embedder from a space',
    security: 'bearer',
    body: 'RemoveEmbedderRequest',
    answers: { 200: json('The space.', 'Space') },
    errors: [...ONE_ERRORS, ...WITH_BODY, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.space }, body: { embedderId: EXAMPLE_IDS.secondEmbedder } }],
    exampleStatus: 200,
  },
  {
    route: 'POST /v1/memories',
    method: 'POST',
    path: '/v1/memories',
    operationId: 'createMemory',
    tag: 'memories',
    summary: 'Store a memory',
    description:
      'Chunked and embedded in the background (`processingStatus`). With `dedupe`, the same content already in the space answers 200 with that memory.',
    security: 'bearer',
    body: 'CreateMemoryRequest',
    answers: {
      201: created('The memory, PENDING.', 'Memory'),
      200: json('The stored memory with the same content (dedupe).', 'Memory'),
    },
    errors: [...KEYED, ...WITH_BODY, 'PERMISSION_DENIED', 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION'],
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
  {
    route: 'POST /v1/memories:batchCreate',
    method: 'POST',
    path: '/v1/memories:batchCreate',
    operationId: 'batchCreateMemories',
    tag: 'memories',
    summary: 'Store several memories',
    description: 'Each item of `requests` is a CreateMemoryRequest; each answers its own result or error, in order.',
    security: 'bearer',
    body: 'BatchCreateMemoriesRequest',
    answers: { 200: json('One result per request.', 'BatchCreateResult') },
    errors: [...KEYED, ...WITH_BODY, 'FAILED_PRECONDITION'],
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
  {
    route: 'GET /v1/memories/:id',
    method: 'GET',
    path: '/v1/memories/{id}',
    operationId: 'getMemory',
    tag: 'memories',
    summary: 'Get a memory',
    security: 'bearer',
    answers: { 200: json('The memory.', 'Memory') },
    errors: ONE_ERRORS,
    examples: [{ path: { id: EXAMPLE_IDS.memory } }],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/memories/:id/content',
    method: 'GET',
    path: '/v1/memories/{id}/content',
    operationId: 'getMemoryContent',
    tag: 'memories',
    summary: "Get a memory's original content",
    security: 'bearer',
    answers: { 200: json('The content as stored.', 'MemoryContent') },
    errors: ONE_ERRORS,
    examples: [{ path: { id: EXAMPLE_IDS.memory } }],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/spaces/:id/memories',
    method: 'GET',
    path: '/v1/spaces/{id}/memories',
    operationId: 'listMemories',
    tag: 'memories',
    summary: "List a space's memories",
    security: 'bearer',
    query: 'ListMemoriesQuery',
    answers: { 200: json('A page.', 'MemoryPage') },
    errors: ONE_ERRORS,
    examples: [{ path: { id: EXAMPLE_IDS.space }, query: { sortOrder: 'DESCENDING', maxResults: '100' } }],
    exampleStatus: 200,
  },
  {
    route: 'POST /v1/memories:retrieve',
    method: 'POST',
    path: '/v1/memories:retrieve',
    operationId: 'retrieveMemories',
    tag: 'memories',
    summary: 'Retrieve memories (streamed)',
    security: 'bearer',
    body: 'RetrieveMemoriesRequest',
    answers: { 200: STREAM_ANSWER },
    errors: [...ONE_ERRORS, ...WITH_BODY, 'FAILED_PRECONDITION'],
    examples: [{ body: RETRIEVE_EXAMPLE }],
    exampleStatus: 200,
  },
  {
    route: 'GET /v1/memories:retrieve',
    method: 'GET',
    path: '/v1/memories:retrieve',
    operationId: 'retrieveMemoriesByQuery',
    tag: 'memories',
    summary: 'Retrieve memories (streamed), the request as query parameters',
    description:
      'The same request as POST, flattened: `spaceIds` (repeated or comma-separated; `filter` applies to each), `efSearch`, and the post-processor fields by their own names.',
    security: 'bearer',
    retrievalQuery: true,
    answers: { 200: STREAM_ANSWER },
    errors: [...ONE_ERRORS, 'FAILED_PRECONDITION'],
    examples: [
      {
        query: { message: RETRIEVE_EXAMPLE.message, spaceIds: [EXAMPLE_IDS.space], mode: 'KEYWORD', requestedSize: 5 },
        headers: { accept: 'text/event-stream' },
      },
    ],
    exampleStatus: 200,
  },
  {
    route: 'POST /mcp',
    method: 'POST',
    path: '/mcp',
    operationId: 'mcp',
    tag: 'mcp',
    summary: 'Model Context Protocol endpoint (streamable HTTP, stateless)',
    description:
      'JSON-RPC 2.0 messages of MCP; tools retrieve and store memories. The key may come as `x-api-key` or as a Bearer token.',
    security: 'mcp',
    body: 'JsonRpcRequest',
    answers: {
      200: {
        description: 'A JSON-RPC response, as JSON or as one SSE event, as Accept allows.',
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/JsonRpcResponse' } },
          'text/event-stream': { schema: { type: 'string' } },
        },
      },
      202: { description: 'A notification was accepted; no body.' },
    },
    errors: [...KEYED, ...WITH_BODY],
    examples: [
      {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        headers: { accept: 'application/json, text/event-stream' },
      },
    ],
    exampleStatus: 200,
  },
  {
    route: 'GET /console',
    method: 'GET',
    path: '/console',
    operationId: 'consoleRedirect',
    tag: 'console',
    summary: 'Redirect to the web console',
    security: 'none',
    answers: { 301: { description: 'To /console/.', headers: ['Location'] } },
    errors: [],
    examples: [{}],
    exampleStatus: 301,
  },
  {
    route: 'GET /console/',
    method: 'GET',
    path: '/console/',
    operationId: 'console',
    tag: 'console',
    summary: 'The web console',
    security: 'none',
    answers: { 200: { description: 'The console page.', content: { 'text/html': { schema: { type: 'string' } } } } },
    errors: [],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /console/index.html',
    method: 'GET',
    path: '/console/index.html',
    operationId: 'consoleIndex',
    tag: 'console',
    summary: 'The web console (by file name)',
    security: 'none',
    answers: { 200: { description: 'The console page.', content: { 'text/html': { schema: { type: 'string' } } } } },
    errors: [],
    examples: [{}],
    exampleStatus: 200,
  },
  {
    route: 'GET /console/assets/:name',
    method: 'GET',
    path: '/console/assets/{name}',
    operationId: 'consoleAsset',
    tag: 'console',
    summary: 'A console script or stylesheet, by the hashed name the page refers to',
    security: 'none',
    answers: {
      200: {
        description: 'The file; cached for good (its name changes with its bytes).',
        content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
      },
    },
    errors: ['NOT_FOUND'],
    examples: [{ path: { name: 'console.0000000000000000.js' } }],
    exampleStatus: 404,
  },
  {
    route: 'POST /v1/memories:batchDelete',
    method: 'POST',
    path: '/v1/memories:batchDelete',
    operationId: 'batchDeleteMemories',
    tag: 'memories',
    summary: 'Delete memories by id, or by space with filters',
    security: 'bearer',
    body: 'BatchDeleteMemoriesRequest',
    answers: { 200: json("How many were deleted (and each id's outcome).", 'BatchDeleteResult') },
    errors: [...KEYED, ...WITH_BODY, 'NOT_FOUND', 'PERMISSION_DENIED'],
    examples: [{ body: { memoryIds: [EXAMPLE_IDS.batchMemory] } }],
    exampleStatus: 200,
  },
  {
    route: 'DELETE /v1/memories/:id',
    method: 'DELETE',
    path: '/v1/memories/{id}',
    operationId: 'deleteMemory',
    tag: 'memories',
    summary: 'Delete a memory',
    security: 'bearer',
    answers: { 204: noContent },
    errors: [...ONE_ERRORS, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.memory } }],
    exampleStatus: 204,
  },
  {
    route: 'DELETE /v1/spaces/:id',
    method: 'DELETE',
    path: '/v1/spaces/{id}',
    operationId: 'deleteSpace',
    tag: 'spaces',
    summary: 'Delete a space and its memories',
    security: 'bearer',
    answers: { 204: noContent },
    errors: [...ONE_ERRORS, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.space } }],
    exampleStatus: 204,
  },
  ...REGISTRIES.map((registry) => registry.deletion),
  {
    route: 'DELETE /v1/apikeys/:id',
    method: 'DELETE',
    path: '/v1/apikeys/{id}',
    operationId: 'deleteApiKey',
    tag: 'apikeys',
    summary: 'Delete an API key',
    security: 'bearer',
    answers: { 204: noContent },
    errors: [...ONE_ERRORS, 'PERMISSION_DENIED'],
    examples: [{ path: { id: EXAMPLE_IDS.apiKey } }],
    exampleStatus: 204,
  },
  {
    route: 'DELETE /v1/users/:id',
    method: 'DELETE',
    path: '/v1/users/{id}',
    operationId: 'deleteUser',
    tag: 'users',
    summary: 'Delete a user (admins)',
    security: 'bearer',
    answers: { 204: noContent },
    errors: [...ONE_ERRORS, 'PERMISSION_DENIED', 'FAILED_PRECONDITION'],
    examples: [{ path: { id: EXAMPLE_IDS.user } }],
    exampleStatus: 204,
  },
  {
    route: 'POST /v1/admin:drain',
    method: 'POST',
    path: '/v1/admin:drain',
    operationId: 'drainServer',
    tag: 'admin',
    summary: 'Drain the server (admins)',
    description: 'New work is refused (503) from now on; probes, metrics and this call keep answering.',
    security: 'bearer',
    body: 'DrainRequest',
    answers: { 200: json('The state reached.', 'DrainResult') },
    errors: [...KEYED, ...WITH_BODY, 'PERMISSION_DENIED'],
    examples: [{ body: { timeoutSec: 0, reason: 'maintenance window' } }],
    exampleStatus: 200,
  },
]
