// What the OpenAPI document says of one REST operation. Each route declares it beside its handler
// (src/transport/rest/routes); generate.ts turns the routes into the document, and
// test/api/openapi.happy.test.ts sends every example, in walk-through order, to a real server.
import type * as v from 'valibot'
import type { ErrorCode } from '../../../errors/app-error.js'
import type { JsonSchema } from './json-schema.js'

/** A schema the document names under `components/schemas`, and refers to by `$ref` wherever it is used. */
export class Component {
  private constructor(
    readonly name: string,
    readonly source: { valibot: v.GenericSchema } | { json: JsonSchema },
  ) {}

  /** One of the server's own valibot schemas: what it validates, or what it answers. */
  static of(name: string, schema: v.GenericSchema): Component {
    return new Component(name, { valibot: schema })
  }

  /** JSON Schema written by hand, for a protocol the server carries but does not define (MCP's JSON-RPC). */
  static written(name: string, schema: JsonSchema): Component {
    return new Component(name, { json: schema })
  }
}

export interface Answer {
  description: string
  /** The body by media type: a component, or JSON Schema written in place. */
  content?: Record<string, Component | JsonSchema>
  headers?: 'Location'[]
}

export interface Example {
  name?: string
  path?: Record<string, string>
  query?: Record<string, string | number | string[]>
  body?: unknown
  headers?: Record<string, string>
}

/**
 * When an operation's examples run in the walk-through they make together. Unmarked ones run in
 * the order the routes are listed (routes/index.ts), each using what earlier ones created; then
 * `cleanup` ones (deletions) in the opposite order, so that a thing goes after what uses it;
 * `shutdown` ones last, as nothing is served after them.
 */
export type ExamplePhase = 'cleanup' | 'shutdown'

export interface Operation {
  /** Served on `{id}:<verb>` by the route's `:id` pattern, as uWS reads the verb as part of the id. */
  customMethod?: string
  operationId: string
  tag: string
  summary: string
  description?: string
  /** A credential the route checks itself instead of an API key. The key's schemes follow from the route's options. */
  security?: 'metrics'
  /** The JSON request body. */
  body?: Component
  /** An object schema whose properties are the query parameters. */
  query?: Component
  /** The query string stands for this request body, flattened as retrieve-query.ts reads it. */
  bodyAsQuery?: Component
  answers: Record<number, Answer>
  /**
   * The error codes besides those that follow from the route: a key (401, 503, and 500 where a
   * use case runs) and a body (400, 413, 415).
   */
  errors?: ErrorCode[]
  examples: Example[]
  /** The status the examples answer with. */
  exampleStatus: number
  examplePhase?: ExamplePhase
}

export const json = (description: string, schema: Component): Answer => ({
  description,
  content: { 'application/json': schema },
})

export const created = (description: string, schema: Component): Answer => ({
  ...json(description, schema),
  headers: ['Location'],
})

export const NO_CONTENT: Answer = { description: 'Done; no body.' }

/** An id in the path: malformed (400), or no such resource the caller may see (404). */
export const BY_ID: ErrorCode[] = ['INVALID_ARGUMENT', 'NOT_FOUND']

/** A list: a malformed query (400), or an owner the caller may not list for (403). */
export const LISTING: ErrorCode[] = ['INVALID_ARGUMENT', 'PERMISSION_DENIED']
