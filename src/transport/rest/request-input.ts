import type { CallContext } from '../../domain/call-context.js'
import { AppError, invalidArgument } from '../../errors/app-error.js'
import type { RestRequest } from './http-server.js'

/** Fields whose values are maps of user data: their keys are never renamed. */
const MAP_FIELDS = new Set(['labels', 'replaceLabels', 'mergeLabels', 'labelFilter'])

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

/** The request body as a JSON object with normalised field names; an empty body is `{}`. */
export function jsonBody(request: RestRequest): Record<string, unknown> {
  if (request.body.length === 0) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(request.body.toString('utf8'))
  } catch (error) {
    throw invalidArgument('body', `malformed JSON: ${(error as Error).message}`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidArgument('body', 'must be a JSON object')
  return normaliseKeys(parsed, '') as Record<string, unknown>
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
  return { requestId: request.requestId, transport: 'rest', authorization: request.headers.authorization }
}

/**
 * A custom method on a resource, `POST /v1/things/{id}:verb`. uWS reads `{id}:verb`
 * as the id parameter; this returns the id, or 404 for any other verb.
 */
export function customMethodTarget(request: RestRequest, verb: string): string {
  const suffix = `:${verb}`
  const raw = request.params.id ?? ''
  if (!raw.endsWith(suffix)) throw new AppError('NOT_FOUND', `no route for ${request.method} ${request.path}; did you mean ${request.path.replace(/:[^/]*$/, '')}${suffix}?`)
  return raw.slice(0, -suffix.length)
}
