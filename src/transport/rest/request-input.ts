import type { CallContext } from '../../domain/call-context.js'
import { AppError, invalidArgument } from '../../errors/app-error.js'
import { MAX_JSON_ARRAY_ELEMENTS } from '../../validation/request-limits.js'
import type { RestRequest } from './rest-messages.js'

/** Fields whose values are maps of user data: their keys are never renamed (a metadata key user_id stays user_id). */
const MAP_FIELDS = new Set([
  'labels',
  'replaceLabels',
  'mergeLabels',
  'labelFilter',
  'metadata',
  'replaceMetadata',
  'mergeMetadata',
])

const toCamelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())

/**
 * Accepts snake_case as well as lowerCamelCase (the spec's own example sends
 * display_name). Sending both spellings of one field is ambiguous and rejected.
 */
function normaliseKeys(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((item, index) => normaliseKeys(item, `${path}.${index}`))
  if (value === null || typeof value !== 'object') return value
  const result: Record<string, unknown> = {}
  for (const [rawName, fieldValue] of Object.entries(value)) {
    const name = toCamelCase(rawName)
    const fieldPath = path ? `${path}.${name}` : name
    if (Object.hasOwn(result, name)) throw invalidArgument(fieldPath, 'given twice (camelCase and snake_case)')
    result[name] = MAP_FIELDS.has(name) ? fieldValue : normaliseKeys(fieldValue, fieldPath)
  }
  return result
}

/** Deeper than this is no request the API defines; checked before parsing so no recursion sees it. */
export const MAX_JSON_DEPTH = 32
/**
 * Object members in one body, all levels together. Far above any request the API defines, and
 * low enough that parsing stays cheap: JSON.parse of one object with 100,000 keys holds the
 * event loop for about 200 ms.
 */
export const MAX_JSON_MEMBERS = 10_000
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })
/** application/json, or any `+json` type, with or without parameters (charset is UTF-8 either way). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * What is wrong with the shape of a JSON text before it is parsed: nesting deeper than
 * MAX_JSON_DEPTH, more than MAX_JSON_MEMBERS object members (colons outside strings) or more
 * than MAX_JSON_ARRAY_ELEMENTS array elements (commas directly inside an array, plus one per
 * non-empty array, so a slight overcount of empty ones is harmless). One linear pass; brackets,
 * commas and colons inside strings do not count.
 */
function jsonShapeProblem(text: string): string | undefined {
  let depth = 0
  let members = 0
  let elements = 0
  /** Whether each open container is an array, by depth. */
  const isArray: boolean[] = []
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === 0x5c)
        index++ // backslash: skip the escaped character
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`
      isArray[depth] = code === 0x5b
      if (code === 0x5b && ++elements > MAX_JSON_ARRAY_ELEMENTS) return tooManyElements
    } else if (code === 0x7d || code === 0x5d) depth--
    else if (code === 0x3a && ++members > MAX_JSON_MEMBERS) return `has more than ${MAX_JSON_MEMBERS} object members`
    else if (code === 0x2c && isArray[depth] && ++elements > MAX_JSON_ARRAY_ELEMENTS) return tooManyElements
  }
  return undefined
}

const tooManyElements = `has more than ${MAX_JSON_ARRAY_ELEMENTS} array elements`

/**
 * The request body as a JSON object with normalised field names; an empty body is `{}`.
 * Refused as parsedJson refuses, and anything but an object. Of a key given twice the last one wins, as in JSON.parse.
 */
export function jsonBody(request: RestRequest): Record<string, unknown> {
  if (request.body.length === 0) return {}
  const parsed = parsedJson(request)
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidArgument('body', 'must be a JSON object')
  return normaliseKeys(parsed, '') as Record<string, unknown>
}

/**
 * The request body parsed as JSON, as it was sent (no field is renamed). Refused: a declared
 * non-JSON content type (415; no content type at all is read as JSON), bytes that are not UTF-8
 * (never silently replaced: what is stored is what was sent), and nesting deeper than
 * MAX_JSON_DEPTH or more than MAX_JSON_MEMBERS members.
 */
export function parsedJson(request: RestRequest): unknown {
  const contentType = request.headers['content-type']
  if (contentType !== undefined && !JSON_MEDIA_TYPE.test(contentType)) {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `content-type: expected application/json, got ${JSON.stringify(contentType.slice(0, 100))}`,
      [{ field: 'content-type', description: 'must be application/json' }],
    )
  }
  let text: string
  try {
    text = STRICT_UTF8.decode(request.body)
  } catch {
    throw invalidArgument('body', 'is not valid UTF-8')
  }
  const shapeProblem = jsonShapeProblem(text)
  if (shapeProblem !== undefined) throw invalidArgument('body', shapeProblem)
  try {
    return JSON.parse(text)
  } catch (error) {
    throw invalidArgument('body', `malformed JSON: ${(error as Error).message}`)
  }
}

/** List parameters from the query string: `label.<key>=<value>` pairs become labelFilter. */
export function listQuery(request: RestRequest): Record<string, unknown> {
  const input: Record<string, unknown> = {}
  const labelFilter: Record<string, string> = {}
  for (const [rawName, value] of request.query) {
    if (rawName.startsWith('label.')) {
      labelFilter[rawName.slice('label.'.length)] = value
      continue
    }
    const name = toCamelCase(rawName)
    if (Object.hasOwn(input, name)) throw invalidArgument(name, 'given more than once')
    input[name] = value
  }
  if (Object.keys(labelFilter).length > 0) input.labelFilter = labelFilter
  return input
}

export function callContext(request: RestRequest): CallContext {
  return {
    requestId: request.requestId,
    transport: 'rest',
    authorization: request.headers.authorization,
    principal: request.principal,
  }
}

/**
 * A custom method on a resource, `POST /v1/things/{id}:verb`. uWS reads `{id}:verb`
 * as the id parameter; this returns the id, or 404 for any other verb.
 */
export function customMethodTarget(request: RestRequest, verb: string): string {
  const suffix = `:${verb}`
  const raw = request.params.id ?? ''
  if (!raw.endsWith(suffix))
    throw new AppError(
      'NOT_FOUND',
      `no route for ${request.method} ${request.path}; did you mean ${request.path.replace(/:[^/]*$/, '')}${suffix}?`,
    )
  return raw.slice(0, -suffix.length)
}
