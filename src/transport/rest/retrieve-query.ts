import { invalidArgument } from '../../errors/app-error.js'
import type { RestRequest } from './rest-messages.js'

/**
 * The GET form of POST /v1/memories:retrieve, as the POST body it stands for:
 * `message`, `spaceIds` (repeated or comma-separated; `filter` applies to each), `filter`,
 * `requestedSize`, `mode`, `fetchMemory`, `fetchMemoryContent`, `includeExpired`, `efSearch`,
 * `recencyHalfLifeSeconds` and `recencyWeight` (the `recency` object's fields), and the
 * post-processor fields by their own names. Numbers and booleans are converted only when
 * they look like one, so the shared validation names the parameter otherwise.
 */

export const TOP_LEVEL_QUERY_FIELDS = new Set([
  'message',
  'requestedSize',
  'mode',
  'fetchMemory',
  'fetchMemoryContent',
  'includeExpired',
])
/** Each query parameter of the `recency` object, and the field it is. */
export const RECENCY_QUERY_FIELDS: ReadonlyMap<string, 'halfLifeSeconds' | 'weight'> = new Map([
  ['recencyHalfLifeSeconds', 'halfLifeSeconds'],
  ['recencyWeight', 'weight'],
])
export const POST_PROCESSOR_QUERY_FIELDS = new Set([
  'rerankerId',
  'relevanceThreshold',
  'chronologicalResort',
  'llmId',
  'llmTemperature',
  'maxResults',
  'systemPrompt',
])
const NUMERIC = new Set([
  'requestedSize',
  'relevanceThreshold',
  'llmTemperature',
  'maxResults',
  'efSearch',
  'recencyHalfLifeSeconds',
  'recencyWeight',
])
const BOOLEAN = new Set(['fetchMemory', 'fetchMemoryContent', 'chronologicalResort', 'includeExpired'])
const NUMBER_TEXT = /^-?\d+(\.\d+)?$/

const toCamelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())

function typed(name: string, value: string): unknown {
  if (NUMERIC.has(name) && NUMBER_TEXT.test(value)) return Number(value)
  if (BOOLEAN.has(name) && (value === 'true' || value === 'false')) return value === 'true'
  return value
}

export function retrieveQuery(request: RestRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const postProcessor: Record<string, unknown> = {}
  const recency: Record<string, unknown> = {}
  const spaceIds: string[] = []
  let filter: string | undefined
  const seen = new Set<string>()
  for (const [rawName, value] of request.query) {
    const name = toCamelCase(rawName)
    if (name === 'spaceIds' || name === 'spaceId') {
      spaceIds.push(
        ...value
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id.length > 0),
      )
      continue
    }
    if (seen.has(name)) throw invalidArgument(name, 'given more than once')
    seen.add(name)
    if (name === 'filter') filter = value
    else if (name === 'efSearch') body.hnsw = { efSearch: typed(name, value) }
    else if (TOP_LEVEL_QUERY_FIELDS.has(name)) body[name] = typed(name, value)
    else if (POST_PROCESSOR_QUERY_FIELDS.has(name)) postProcessor[name] = typed(name, value)
    else if (RECENCY_QUERY_FIELDS.has(name)) recency[RECENCY_QUERY_FIELDS.get(name)!] = typed(name, value)
    else throw invalidArgument(name, 'is not a parameter of GET /v1/memories:retrieve')
  }
  body.spaceKeys = spaceIds.map((spaceId) => (filter === undefined ? { spaceId } : { spaceId, filter }))
  if (Object.keys(postProcessor).length > 0) body.postProcessor = postProcessor
  // recencyWeight alone is sent on: the schema then names the missing recency.halfLifeSeconds.
  if (Object.keys(recency).length > 0) body.recency = recency
  return body
}
