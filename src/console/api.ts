// Every call to the REST API goes through call(): it adds the session's API key,
// decodes the one error shape ({"error": {code, status, message, details, requestId}})
// and records the exchange for debug mode.
import { session } from './session.js'

export interface FieldViolation {
  field: string
  description: string
}

export interface ApiError {
  code: number
  status: string
  message: string
  details: FieldViolation[]
  requestId?: string
}

export interface ApiResult<T> {
  /** HTTP status; 0 when the server could not be reached. */
  status: number
  ok: boolean
  data?: T
  error?: ApiError
  /** The parsed body of a non-2xx answer (e.g. /readyz's {ready, state} with 503). */
  raw?: unknown
}

/** One request as debug mode shows it. Secrets are never kept in it (see redact*). */
export interface DebugEntry {
  id: number
  action: string
  method: string
  /** Path and query, e.g. /v1/apikeys?maxResults=100. */
  path: string
  /** JSON request body, with inline provider secrets replaced by SECRET_PLACEHOLDER. */
  requestBody?: string
  /** Whether the request carried the session's API key. */
  authorized: boolean
  status: number
  /** Response body as received (pretty-printed when JSON), one-time keys redacted. */
  responseText: string
  durationMs: number
}

/** Stands in for an inline provider secret in a recorded request body. */
export const SECRET_PLACEHOLDER = '__MEMSVC_PROVIDER_SECRET__'
const SHOWN_ONCE = '(redacted by the console: shown once)'
const MAX_ENTRIES = 50

export const debugLog: DebugEntry[] = []
const listeners = new Set<() => void>()
let nextEntryId = 0

export function onDebugLog(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

export function clearDebugLog(): void {
  debugLog.length = 0
  for (const listener of listeners) listener()
}

function record(entry: Omit<DebugEntry, 'id'>): void {
  debugLog.unshift({ ...entry, id: ++nextEntryId })
  debugLog.length = Math.min(debugLog.length, MAX_ENTRIES)
  for (const listener of listeners) listener()
}

function mapJson(value: unknown, replace: (key: string, value: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => mapJson(item, replace))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(key, mapJson(item, replace))]))
}

function redactRequest(body: unknown): string {
  return JSON.stringify(mapJson(body, (key, value) => (key === 'inlineSecret' && typeof value === 'string' ? SECRET_PLACEHOLDER : value)))
}

function redactResponse(text: string): string {
  if (text === '') return ''
  try {
    const parsed: unknown = JSON.parse(text)
    const redacted = mapJson(parsed, (key, value) => ((key === 'rawApiKey' || key === 'rootApiKey') && typeof value === 'string' ? `${value.slice(0, 12)}… ${SHOWN_ONCE}` : value))
    return JSON.stringify(redacted, null, 2)
  } catch {
    return text
  }
}

function toApiError(status: number, parsed: unknown, fallback: string): ApiError {
  const error = (parsed as { error?: Partial<ApiError> } | undefined)?.error
  if (error && typeof error.message === 'string') {
    return {
      code: error.code ?? status,
      status: error.status ?? String(status),
      message: error.message,
      details: Array.isArray(error.details) ? error.details : [],
      requestId: error.requestId,
    }
  }
  return { code: status, status: String(status), message: fallback, details: [] }
}

/** Called when the session's key stops working (revoked, expired, deleted). */
let onUnauthenticated: (error: ApiError) => void = () => {}
export function setUnauthenticatedHandler(handler: (error: ApiError) => void): void {
  onUnauthenticated = handler
}

export interface CallOptions {
  body?: unknown
  /** false for the public endpoints (system info and init, probes). */
  auth?: boolean
  /** Use this key instead of the session's (signing in). */
  apiKey?: string
}

export async function call<T>(action: string, method: string, path: string, options: CallOptions = {}): Promise<ApiResult<T>> {
  const auth = options.auth ?? true
  const apiKey = options.apiKey ?? session.apiKey
  const headers: Record<string, string> = { accept: 'application/json' }
  if (auth && apiKey) headers.authorization = `Bearer ${apiKey}`
  let bodyText: string | undefined
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json'
    bodyText = JSON.stringify(options.body)
  }
  const started = performance.now()
  let status = 0
  let text = ''
  try {
    const response = await fetch(path, { method, headers, body: bodyText, credentials: 'omit', cache: 'no-store', redirect: 'error' })
    status = response.status
    text = await response.text()
  } catch (error) {
    text = `network error: ${(error as Error).message}`
  }
  record({
    action,
    method,
    path,
    requestBody: options.body === undefined ? undefined : redactRequest(options.body),
    authorized: auth && Boolean(apiKey),
    status,
    responseText: redactResponse(text),
    durationMs: Math.round(performance.now() - started),
  })

  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  const ok = status >= 200 && status < 300
  if (ok) return { status, ok, data: parsed as T }
  const error = status === 0 ? { code: 0, status: 'NETWORK', message: 'the server could not be reached', details: [] } : toApiError(status, parsed, text || `HTTP ${status}`)
  if (status === 401 && auth && options.apiKey === undefined && session.apiKey) onUnauthenticated(error)
  return { status, ok, error, raw: parsed }
}

/** Query string from defined, non-empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}

export const REASONS: Record<number, string> = {
  0: 'No response',
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  301: 'Moved Permanently',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

export const statusLine = (status: number): string => `${status} ${REASONS[status] ?? ''}`.trim()

/** One line for an error: "400 INVALID_ARGUMENT: endpointUrl: must be an http or https URL". */
export function describeError(error: ApiError): string {
  return error.code === 0 ? error.message : `${error.code} ${error.status}: ${error.message}`
}
