import {
  ErrorCode,
  JSONRPCErrorResponseSchema,
  JSONRPCMessageSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { core, ZodType } from 'zod/v4'
import type { FieldViolation } from '../../errors/app-error.js'
import { MAX_ERROR_DETAILS } from '../../validation/request-limits.js'

/**
 * The MCP endpoint's answers to requests that are not well-formed, with the codes JSON-RPC 2.0
 * names: -32600 for a body that is JSON but no JSON-RPC message, -32601 for a method the server
 * does not answer, -32602 for params the method's schema refuses. Each message names the field at
 * fault as the REST API's do (`params.name: is required`). The SDK answers the first -32700 (kept
 * for text that is not JSON) and the last -32603 (kept for the server's own faults), with zod's
 * issue list as the message.
 */

/** A JSON-RPC error object, its fields listed as the REST API lists them. */
export interface JsonRpcErrorObject {
  code: number
  message: string
  data?: { details: FieldViolation[] }
}

/**
 * Thrown by a request handler to answer a JSON-RPC error: the SDK answers any thrown error's code,
 * message and data as they are, and McpError would prefix "MCP error <code>: " to the message.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: JsonRpcErrorObject['data'],
  ) {
    super(message)
    this.name = 'JsonRpcError'
  }
}

/** Field names and methods echo client text, so they are cut short as the REST API's are. */
const MAX_ECHOED_LENGTH = 80

export function echoed(text: string): string {
  return text.length > MAX_ECHOED_LENGTH ? `${text.slice(0, MAX_ECHOED_LENGTH)}…` : text
}

/** The message names the first field at fault, as the REST API's messages do (validation/parse.ts). */
function errorObject(code: number, violations: FieldViolation[]): JsonRpcErrorObject {
  const first = violations[0] ?? { field: 'body', description: 'is not a JSON-RPC message' }
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : ''
  const details = violations.slice(0, MAX_ERROR_DETAILS)
  return { code, message: `${first.field}: ${first.description}${more}`, data: { details } }
}

/** The answer to a request whose params `schema` (the SDK's, for the request's method) refuses, or undefined. */
export function invalidParams(request: unknown, schema: ZodType): JsonRpcErrorObject | undefined {
  const parsed = schema.safeParse(request)
  return parsed.success
    ? undefined
    : errorObject(ErrorCode.InvalidParams, fieldViolations(parsed.error.issues, request))
}

/**
 * Why a body that is JSON is no JSON-RPC message, nor a batch of them, that the SDK takes; undefined when
 * it is one. A message whose only fault is in its (structured) params is -32602, as it would be once
 * dispatched; anything else wrong with it is -32600. An empty batch is -32600 (JSON-RPC 2.0, batch).
 */
export function invalidBody(body: unknown): JsonRpcErrorObject | undefined {
  if (!Array.isArray(body)) return invalidMessage(body, '')
  if (body.length === 0)
    return errorObject(ErrorCode.InvalidRequest, [{ field: 'body', description: 'is an empty batch' }])
  for (const [index, message] of body.entries()) {
    const refusal = invalidMessage(message, `[${index}]`)
    if (refusal) return refusal
  }
  return undefined
}

function invalidMessage(message: unknown, at: string): JsonRpcErrorObject | undefined {
  if (JSONRPCMessageSchema.safeParse(message).success) return undefined
  const parsed = intendedShape(message).safeParse(message)
  if (parsed.success) return undefined
  const issues = parsed.error.issues
  const params = isObject(message) ? message.params : undefined
  const onlyParamsAtFault =
    isObject(message) &&
    'method' in message &&
    (isObject(params) || Array.isArray(params)) &&
    issues.every((issue) => issue.path[0] === 'params')
  const violations = fieldViolations(issues, message, at)
  return errorObject(onlyParamsAtFault ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest, violations)
}

/**
 * The message kind the sender meant, told by its members, so that the fields at fault are that kind's:
 * one with neither a method nor a result or error is taken for a request, which names what it lacks.
 */
function intendedShape(message: unknown): ZodType {
  if (!isObject(message)) return JSONRPCRequestSchema
  if ('method' in message) return 'id' in message ? JSONRPCRequestSchema : JSONRPCNotificationSchema
  if ('error' in message) return JSONRPCErrorResponseSchema
  if ('result' in message) return JSONRPCResultResponseSchema
  return JSONRPCRequestSchema
}

/** `at` names the message in its batch (`[1]`), empty for a message sent alone. */
function fieldViolations(issues: readonly core.$ZodIssue[], input: unknown, at = ''): FieldViolation[] {
  return issues.flatMap((issue): FieldViolation[] => {
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ field: fieldName([...issue.path, key], at), description: 'unknown field' }))
    return [{ field: fieldName(issue.path, at), description: describe(issue, valueAt(input, issue.path)) }]
  })
}

function fieldName(path: readonly PropertyKey[], at: string): string {
  const inMessage = path.map((key) => echoed(String(key))).join('.')
  if (at === '') return inMessage || 'body'
  return inMessage ? `${at}.${inMessage}` : at
}

/** In the REST API's words (validation/parse.ts) where zod's would name its own types ("record", "received undefined"). */
function describe(issue: core.$ZodIssue, value: unknown): string {
  if (value === undefined && ABSENCE_ISSUES.has(issue.code)) return 'is required'
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`
    case 'invalid_value':
      return `must be ${issue.values.map((allowed) => JSON.stringify(allowed)).join(' or ')}`
    case 'invalid_union': {
      // A union of types (a request id: a string or an integer) is named by its alternatives.
      const alternatives = issue.errors.map((branch) =>
        branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0
          ? TYPE_NAMES[branch[0].expected]
          : undefined,
      )
      if (alternatives.length === 0 || alternatives.includes(undefined)) return issue.message
      return `must be ${alternatives.join(' or ')}`
    }
    default:
      return issue.message
  }
}

/** The issues zod reports for a member that is absent: the member is required. */
const ABSENCE_ISSUES = new Set<core.$ZodIssue['code']>(['invalid_type', 'invalid_value', 'invalid_union'])

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input
  for (const key of path) {
    if (!isObject(value) && !Array.isArray(value)) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
