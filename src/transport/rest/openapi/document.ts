// The OpenAPI 3.1 document of the REST API: served at GET /v1/openapi.json and written to
// dist/openapi.json by the build. Request schemas are the server's own valibot schemas
// (src/validation), answers the view schemas (view-schemas.ts), operations the table in
// operations.ts, which a test holds equal to the registered routes.
import * as v from 'valibot'
import { ERROR_CODES, type ErrorCode } from '../../../errors/app-error.js'
import { drainSchema } from '../../../validation/admin.js'
import {
  createApiKeySchema,
  createUserSchema,
  listApiKeysSchema,
  listUsersSchema,
  updateApiKeySchema,
} from '../../../validation/identity.js'
import {
  addEmbedderSchema,
  batchCreateMemoriesSchema,
  batchDeleteMemoriesSchema,
  createMemorySchema,
  createSpaceSchema,
  listMemoriesSchema,
  listSpacesSchema,
  removeEmbedderSchema,
  updateSpaceSchema,
} from '../../../validation/memory.js'
import {
  createEmbedderSchema,
  createLlmSchema,
  createRerankerSchema,
  listEmbeddersSchema,
  listLlmsSchema,
  listRerankersSchema,
  updateEmbedderSchema,
  updateLlmSchema,
  updateRerankerSchema,
} from '../../../validation/registry.js'
import { retrieveMemoriesSchema } from '../../../validation/retrieval.js'
import { POST_PROCESSOR_QUERY_FIELDS, TOP_LEVEL_QUERY_FIELDS } from '../retrieve-query.js'
import { componentSchemas, type JsonSchema } from './json-schema.js'
import { type Answer, OPERATIONS, type Operation, type Security } from './operations.js'
import * as views from './view-schemas.js'

export const OPENAPI_PATH = '/v1/openapi.json'

/** Request bodies, as the server validates them. */
const REQUEST_SCHEMAS: Record<string, v.GenericSchema> = {
  CreateUserRequest: createUserSchema,
  CreateApiKeyRequest: createApiKeySchema,
  UpdateApiKeyRequest: updateApiKeySchema,
  CreateEmbedderRequest: createEmbedderSchema,
  UpdateEmbedderRequest: updateEmbedderSchema,
  CreateLlmRequest: createLlmSchema,
  UpdateLlmRequest: updateLlmSchema,
  CreateRerankerRequest: createRerankerSchema,
  UpdateRerankerRequest: updateRerankerSchema,
  CreateSpaceRequest: createSpaceSchema,
  UpdateSpaceRequest: updateSpaceSchema,
  AddEmbedderRequest: addEmbedderSchema,
  RemoveEmbedderRequest: removeEmbedderSchema,
  CreateMemoryRequest: createMemorySchema,
  BatchCreateMemoriesRequest: batchCreateMemoriesSchema,
  BatchDeleteMemoriesRequest: batchDeleteMemoriesSchema,
  RetrieveMemoriesRequest: retrieveMemoriesSchema,
  DrainRequest: drainSchema,
}

/** Query strings of the lists, as the server validates them; their properties become parameters. */
const QUERY_SCHEMAS: Record<string, v.GenericSchema> = {
  ListUsersQuery: listUsersSchema,
  ListApiKeysQuery: listApiKeysSchema,
  ListEmbeddersQuery: listEmbeddersSchema,
  ListLlmsQuery: listLlmsSchema,
  ListRerankersQuery: listRerankersSchema,
  ListSpacesQuery: listSpacesSchema,
  ListMemoriesQuery: listMemoriesSchema,
}

/** Answers, as the domain's views are built. */
const VIEW_SCHEMAS: Record<string, v.GenericSchema> = {
  Error: views.errorBodySchema,
  User: views.userSchema,
  UserPage: views.pageSchema('users', views.userSchema),
  ApiKey: views.apiKeySchema,
  CreatedApiKey: views.createdApiKeySchema,
  ApiKeyPage: views.pageSchema('keys', views.apiKeySchema),
  Embedder: views.embedderSchema,
  EmbedderPage: views.pageSchema('embedders', views.embedderSchema),
  Llm: views.llmSchema,
  LlmPage: views.pageSchema('llms', views.llmSchema),
  Reranker: views.rerankerSchema,
  RerankerPage: views.pageSchema('rerankers', views.rerankerSchema),
  Space: views.spaceSchema,
  SpacePage: views.pageSchema('spaces', views.spaceSchema),
  Memory: views.memorySchema,
  MemoryPage: views.pageSchema('memories', views.memorySchema),
  MemoryContent: views.memoryContentSchema,
  BatchCreateResult: views.batchCreateResultSchema,
  BatchDeleteResult: views.batchDeleteResultSchema,
  RetrievalEvent: views.retrievalEventSchema,
  JobAccepted: views.jobAcceptedSchema,
  DrainResult: views.drainResultSchema,
  SystemInfo: views.systemInfoSchema,
  InitializeSystemResult: views.initializeSystemSchema,
  Liveness: views.livenessSchema,
  Readiness: views.readinessSchema,
  Startup: views.startupSchema,
}

/** MCP's envelope (JSON-RPC 2.0); what goes inside is MCP's own specification. */
const JSON_RPC_SCHEMAS: Record<string, JsonSchema> = {
  JsonRpcRequest: {
    type: 'object',
    required: ['jsonrpc', 'method'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer'] },
      method: { type: 'string' },
      params: { type: 'object' },
    },
  },
  JsonRpcResponse: {
    type: 'object',
    required: ['jsonrpc'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer', 'null'] },
      result: { type: 'object' },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
      },
    },
  },
}

const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  INVALID_ARGUMENT: 'The request is malformed; `details` names each bad field.',
  UNAUTHENTICATED: 'No API key, or one that is unknown, inactive or expired.',
  PERMISSION_DENIED: 'The key may not do this (for example a non-admin acting for another owner).',
  NOT_FOUND: 'No such resource, or one the caller may not see.',
  METHOD_NOT_ALLOWED: 'The path exists but not with this method; Allow lists the methods.',
  ALREADY_EXISTS: 'A resource with this id or name exists.',
  FAILED_PRECONDITION: 'The resource is not in a state that allows this.',
  PAYLOAD_TOO_LARGE: "The body (or a memory's content) is larger than the server takes.",
  UNSUPPORTED_MEDIA_TYPE: 'The body is not application/json.',
  RESOURCE_EXHAUSTED: 'Too many requests.',
  INTERNAL: 'A fault in the server; the request id finds it in the logs.',
  UNAVAILABLE: 'The server is starting or draining, or the database is unreachable; retry.',
}

const SECURITY: Record<Security, Record<string, string[]>[]> = {
  none: [],
  bearer: [{ bearerApiKey: [] }],
  metrics: [{ metricsKey: [] }],
  mcp: [{ mcpApiKey: [] }, { bearerApiKey: [] }],
}

const HEADERS: Record<string, unknown> = {
  Location: { description: 'The URL of the created resource.', schema: { type: 'string' } },
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

function answerObject(answer: Answer): Record<string, unknown> {
  const content = answer.schema ? { 'application/json': { schema: ref(answer.schema) } } : answer.content
  const headers = answer.headers ? Object.fromEntries(answer.headers.map((name) => [name, HEADERS[name]])) : undefined
  return { description: answer.description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) }
}

function objectProperties(schema: JsonSchema | undefined): Record<string, JsonSchema> {
  return (schema?.properties ?? {}) as Record<string, JsonSchema>
}

/** A query string's parameters, from the object schema the server validates it with. */
function queryParameters(schema: JsonSchema | undefined, skip: ReadonlySet<string>): Record<string, unknown>[] {
  const required = new Set(schema?.required ?? [])
  return Object.entries(objectProperties(schema))
    .filter(([name]) => !skip.has(name))
    .map(([name, property]) => ({ name, in: 'query', required: required.has(name), schema: property }))
}

/** GET /v1/memories:retrieve: the POST body's fields that retrieve-query.ts reads from the query string. */
function retrieveQueryParameters(request: JsonSchema): Record<string, unknown>[] {
  const fields = objectProperties(request)
  const spaceKey = objectProperties((fields.spaceKeys?.items ?? {}) as JsonSchema)
  const postProcessor = objectProperties(fields.postProcessor)
  const hnsw = objectProperties(fields.hnsw)
  const parameter = (name: string, schema: JsonSchema | undefined, extra: Record<string, unknown> = {}) => ({
    name,
    in: 'query',
    schema: schema ?? {},
    ...extra,
  })
  return [
    ...[...TOP_LEVEL_QUERY_FIELDS].map((name) =>
      parameter(name, fields[name], name === 'message' ? { required: true } : {}),
    ),
    parameter(
      'spaceIds',
      { type: 'array', items: spaceKey.spaceId ?? {}, minItems: 1 },
      { required: true, style: 'form', explode: true, description: 'Repeated or comma-separated.' },
    ),
    parameter('filter', spaceKey.filter, { description: 'Applies to every space named.' }),
    parameter('efSearch', hnsw.efSearch),
    ...[...POST_PROCESSOR_QUERY_FIELDS].map((name) => parameter(name, postProcessor[name])),
  ]
}

function pathParameters(path: string, example: Operation['examples'][number] | undefined): Record<string, unknown>[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name = '']) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'id' ? { type: 'string', format: 'uuid' } : { type: 'string' },
    ...(example?.path?.[name] !== undefined ? { example: example.path[name] } : {}),
  }))
}

function withExamples(
  parameters: Record<string, unknown>[],
  example: Operation['examples'][number] | undefined,
): Record<string, unknown>[] {
  return parameters.map((parameter) => {
    const value = parameter.in === 'query' ? example?.query?.[parameter.name as string] : undefined
    return value === undefined ? parameter : { ...parameter, example: value }
  })
}

/** The error codes an operation answers with: its own, and INTERNAL wherever a use case runs. */
function errorCodes(operation: Operation): ErrorCode[] {
  return operation.errors.includes('UNAVAILABLE') ? [...operation.errors, 'INTERNAL'] : operation.errors
}

function errorAnswers(operation: Operation): Record<string, unknown> {
  const answers: Record<string, unknown> = {}
  for (const code of errorCodes(operation))
    answers[String(ERROR_CODES[code].http)] = { $ref: `#/components/responses/${code}` }
  return answers
}

/**
 * `x-example-status` is the status the operation's example answers with, `x-example-step` its
 * place in the walk-through the examples make together (later ones use what earlier ones created).
 */
function operationObject(
  operation: Operation,
  step: number,
  schemas: Record<string, JsonSchema>,
  querySchemas: Record<string, JsonSchema>,
): Record<string, unknown> {
  const [first] = operation.examples
  // labelFilter is sent as label.<key>=<value> (the description says so); a space's memories take spaceId from the path.
  const query = operation.query
    ? queryParameters(querySchemas[operation.query], new Set(['labelFilter', 'spaceId']))
    : []
  const extra = operation.retrievalQuery ? retrieveQueryParameters(schemas.RetrieveMemoriesRequest as JsonSchema) : []
  const headerParameters = Object.entries(first?.headers ?? {}).map(([name, value]) => ({
    name,
    in: 'header',
    required: false,
    schema: { type: 'string' },
    example: value,
  }))
  const parameters = [
    ...pathParameters(operation.path, first),
    ...withExamples([...query, ...extra], first),
    ...headerParameters,
  ]
  const responses: Record<string, unknown> = {}
  for (const [status, answer] of Object.entries(operation.answers)) responses[status] = answerObject(answer)
  Object.assign(responses, errorAnswers(operation))
  const body = operation.body
    ? {
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref(operation.body),
              examples: Object.fromEntries(
                operation.examples.map((example, index) => [
                  example.name ?? (index === 0 ? 'example' : `example${index + 1}`),
                  { value: example.body },
                ]),
              ),
            },
          },
        },
      }
    : {}
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    security: SECURITY[operation.security],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...body,
    responses,
    'x-example-status': operation.exampleStatus,
    'x-example-step': step,
  }
}

export interface OpenApiDocument {
  openapi: string
  info: Record<string, unknown>
  paths: Record<string, Record<string, Record<string, unknown>>>
  components: { schemas: Record<string, JsonSchema> } & Record<string, unknown>
  [key: string]: unknown
}

export function openApiDocument(version: string): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {
    ...componentSchemas(REQUEST_SCHEMAS, 'input'),
    ...componentSchemas(VIEW_SCHEMAS, 'output'),
    ...JSON_RPC_SCHEMAS,
  }
  const querySchemas = componentSchemas(QUERY_SCHEMAS, 'input')
  const paths: OpenApiDocument['paths'] = {}
  for (const [step, operation] of OPERATIONS.entries()) {
    const item = (paths[operation.path] ??= {})
    item[operation.method.toLowerCase()] = operationObject(operation, step + 1, schemas, querySchemas)
  }
  const usedCodes = new Set(OPERATIONS.flatMap(errorCodes))
  const responses = Object.fromEntries(
    (Object.keys(ERROR_CODES) as ErrorCode[])
      .filter((code) => usedCodes.has(code))
      .map((code) => [
        code,
        {
          description: `${code}: ${ERROR_DESCRIPTIONS[code]}`,
          content: { 'application/json': { schema: ref('Error') } },
        },
      ]),
  )
  return {
    openapi: '3.1.1',
    info: {
      title: 'memsvc REST API',
      version,
      description:
        'A self-hosted memory service for AI applications. Every error has one shape (`Error`): `error.status` is the google.rpc code, ' +
        '`error.code` the HTTP status, `details` names each bad field. Field names may also be sent in snake_case.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'The server that serves this document.' }],
    tags: [...new Set(OPERATIONS.map((operation) => operation.tag))].map((name) => ({
      name,
      description: `${name[0]?.toUpperCase()}${name.slice(1)} operations.`,
    })),
    paths,
    components: {
      schemas,
      responses,
      securitySchemes: {
        bearerApiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'msk_…',
          description: 'An API key: `Authorization: Bearer msk_…`.',
        },
        mcpApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'An API key as MCP clients send it (a bare `msk_…`).',
        },
        metricsKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-Metrics-Key',
          description: 'The scrape secret (--metrics-scrape-secret), unless metrics auth is disabled.',
        },
      },
    },
  }
}
