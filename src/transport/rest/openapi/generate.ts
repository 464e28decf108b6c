// The OpenAPI 3.1 document of a list of REST routes, from what each route declares (operation.ts):
// request schemas are the server's own valibot schemas (src/validation), answers the view schemas
// (view-schemas.ts). What follows from a route's options is not declared again: the security
// scheme and the error answers of a key and of a body.
import type * as v from 'valibot'
import { ERROR_CODES, type ErrorCode } from '../../../errors/app-error.js'
import type { RestRoute } from '../rest-route.js'
import { POST_PROCESSOR_QUERY_FIELDS, RECENCY_QUERY_FIELDS, TOP_LEVEL_QUERY_FIELDS } from '../retrieve-query.js'
import { componentSchemas, type JsonSchema } from './json-schema.js'
import { type Answer, Component, type Example, type ExamplePhase, type Operation } from './operation.js'
import { VIEW } from './view-schemas.js'

export interface OpenApiDocument {
  openapi: string
  info: Record<string, unknown>
  paths: Record<string, Record<string, Record<string, unknown>>>
  components: { schemas: Record<string, JsonSchema> } & Record<string, unknown>
  [key: string]: unknown
}

type Security = 'none' | 'bearer' | 'metrics' | 'mcp'

/** One operation with the route that serves it. */
interface Served {
  route: RestRoute
  operation: Operation
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

/** What a route that checks an API key answers besides its own errors: no valid key, or a server that cannot check it. */
const KEYED: ErrorCode[] = ['UNAUTHENTICATED', 'UNAVAILABLE']
/** What a route that reads a JSON body answers besides its own errors (request-body.ts, request-input.ts). */
const WITH_BODY: ErrorCode[] = ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']

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

function operationsOf(route: RestRoute): Operation[] {
  return Array.isArray(route.openapi) ? route.openapi : [route.openapi]
}

/** The routes' operations in walk-through order (ExamplePhase): the examples' `x-example-step`. */
function walkThrough(routes: readonly RestRoute[]): Served[] {
  const served = routes.flatMap((route) => operationsOf(route).map((operation) => ({ route, operation })))
  const inPhase = (phase: ExamplePhase | undefined) => served.filter((entry) => entry.operation.examplePhase === phase)
  return [...inPhase(undefined), ...inPhase('cleanup').reverse(), ...inPhase('shutdown')]
}

/** The OpenAPI path: `:name` parameters as `{name}`, and a custom method's verb after the id. */
function documentedPath({ route, operation }: Served): string {
  const path = route.pattern.replace(/\/:(\w+)/g, '/{$1}')
  return operation.customMethod ? `${path}:${operation.customMethod}` : path
}

function securityOf({ route, operation }: Served): Security {
  if (route.apiKeyHeader) return 'mcp'
  if (route.needsApiKey) return 'bearer'
  return operation.security ?? 'none'
}

/** The error codes an operation answers with: its own, its key's and body's, and INTERNAL wherever a use case runs. */
function errorCodes({ route, operation }: Served): ErrorCode[] {
  const codes = new Set<ErrorCode>([
    ...(route.needsApiKey ? KEYED : []),
    ...(operation.body ? WITH_BODY : []),
    ...(operation.errors ?? []),
  ])
  if (codes.has('UNAVAILABLE')) codes.add('INTERNAL')
  return [...codes]
}

/** The named schemas the operations use, by how they are converted. */
interface UsedComponents {
  requests: Record<string, v.GenericSchema>
  views: Record<string, v.GenericSchema>
  written: Record<string, JsonSchema>
  queries: Record<string, v.GenericSchema>
}

const schemaOf = (component: Component) =>
  'json' in component.source ? component.source.json : component.source.valibot

function usedComponents(served: Served[]): UsedComponents {
  const used: UsedComponents = { requests: {}, views: {}, written: {}, queries: {} }
  const seen = new Map<string, Component>()
  const add = (component: Component, as: 'requests' | 'views' | 'queries') => {
    const earlier = seen.get(component.name)
    if (earlier && schemaOf(earlier) !== schemaOf(component))
      throw new Error(`two different schemas are both named ${component.name}`)
    seen.set(component.name, component)
    if ('json' in component.source) used.written[component.name] = component.source.json
    else used[as][component.name] = component.source.valibot
  }
  // Every error answer refers to it.
  add(VIEW.Error, 'views')
  for (const { operation } of served) {
    if (operation.body) add(operation.body, 'requests')
    if (operation.bodyAsQuery) add(operation.bodyAsQuery, 'requests')
    if (operation.query) add(operation.query, 'queries')
    for (const answer of Object.values(operation.answers))
      for (const schema of Object.values(answer.content ?? {})) if (schema instanceof Component) add(schema, 'views')
  }
  return used
}

function answerObject(answer: Answer): Record<string, unknown> {
  const content = answer.content
    ? Object.fromEntries(
        Object.entries(answer.content).map(([mediaType, schema]) => [
          mediaType,
          { schema: schema instanceof Component ? ref(schema.name) : schema },
        ]),
      )
    : undefined
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
function retrieveQueryParameters(request: JsonSchema | undefined): Record<string, unknown>[] {
  const fields = objectProperties(request)
  const spaceKey = objectProperties((fields.spaceKeys?.items ?? {}) as JsonSchema)
  const postProcessor = objectProperties(fields.postProcessor)
  const hnsw = objectProperties(fields.hnsw)
  const recency = objectProperties(fields.recency)
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
    ...[...RECENCY_QUERY_FIELDS].map(([name, field]) => parameter(name, recency[field])),
  ]
}

function pathParameters(path: string, example: Example | undefined): Record<string, unknown>[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name = '']) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'id' ? { type: 'string', format: 'uuid' } : { type: 'string' },
    ...(example?.path?.[name] !== undefined ? { example: example.path[name] } : {}),
  }))
}

function withExamples(parameters: Record<string, unknown>[], example: Example | undefined): Record<string, unknown>[] {
  return parameters.map((parameter) => {
    const value = parameter.in === 'query' ? example?.query?.[parameter.name as string] : undefined
    return value === undefined ? parameter : { ...parameter, example: value }
  })
}

function errorAnswers(served: Served): Record<string, unknown> {
  const answers: Record<string, unknown> = {}
  for (const code of errorCodes(served))
    answers[String(ERROR_CODES[code].http)] = { $ref: `#/components/responses/${code}` }
  return answers
}

/**
 * `x-example-status` is the status the operation's example answers with, `x-example-step` its
 * place in the walk-through the examples make together (later ones use what earlier ones created).
 */
function operationObject(
  served: Served,
  path: string,
  step: number,
  schemas: Record<string, JsonSchema>,
  querySchemas: Record<string, JsonSchema>,
): Record<string, unknown> {
  const { operation } = served
  const [first] = operation.examples
  // labelFilter is sent as label.<key>=<value> (the description says so); a space's memories take spaceId from the path.
  const query = operation.query
    ? queryParameters(querySchemas[operation.query.name], new Set(['labelFilter', 'spaceId']))
    : []
  const flattened = operation.bodyAsQuery ? retrieveQueryParameters(schemas[operation.bodyAsQuery.name]) : []
  const headerParameters = Object.entries(first?.headers ?? {}).map(([name, value]) => ({
    name,
    in: 'header',
    required: false,
    schema: { type: 'string' },
    example: value,
  }))
  const parameters = [
    ...pathParameters(path, first),
    ...withExamples([...query, ...flattened], first),
    ...headerParameters,
  ]
  const responses: Record<string, unknown> = {}
  for (const [status, answer] of Object.entries(operation.answers)) responses[status] = answerObject(answer)
  Object.assign(responses, errorAnswers(served))
  const body = operation.body
    ? {
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref(operation.body.name),
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
    security: SECURITY[securityOf(served)],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...body,
    responses,
    'x-example-status': operation.exampleStatus,
    'x-example-step': step,
  }
}

export function generateOpenApiDocument(version: string, routes: readonly RestRoute[]): OpenApiDocument {
  const served = walkThrough(routes)
  const used = usedComponents(served)
  const schemas: Record<string, JsonSchema> = {
    ...componentSchemas(used.requests, 'input'),
    ...componentSchemas(used.views, 'output'),
    ...used.written,
  }
  const querySchemas = componentSchemas(used.queries, 'input')
  const paths: OpenApiDocument['paths'] = {}
  for (const [step, entry] of served.entries()) {
    const path = documentedPath(entry)
    const item = paths[path] ?? {}
    paths[path] = item
    item[entry.route.method.toLowerCase()] = operationObject(entry, path, step + 1, schemas, querySchemas)
  }
  const usedCodes = new Set(served.flatMap(errorCodes))
  const responses = Object.fromEntries(
    (Object.keys(ERROR_CODES) as ErrorCode[])
      .filter((code) => usedCodes.has(code))
      .map((code) => [
        code,
        {
          description: `${code}: ${ERROR_DESCRIPTIONS[code]}`,
          content: { 'application/json': { schema: ref(VIEW.Error.name) } },
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
    tags: [...new Set(served.map((entry) => entry.operation.tag))].map((name) => ({
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
