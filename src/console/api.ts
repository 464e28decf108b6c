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
  /** A streamed answer (NDJSON): curl needs -N, and responseText grows line by line while it arrives. */
  streamed?: boolean
  /** A multipart/form-data upload instead of a JSON body: curl's -F arguments, e.g. ["file=@report.pdf"]. */
  form?: string[]
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

function notify(): void {
  for (const listener of listeners) listener()
}

/** Records an exchange made outside call() and streamCall() (uploads, binary downloads: transfers.ts). */
export function record(entry: Omit<DebugEntry, 'id'>): DebugEntry {
  const recorded = { ...entry, id: ++nextEntryId }
  debugLog.unshift(recorded)
  debugLog.length = Math.min(debugLog.length, MAX_ENTRIES)
  notify()
  return recorded
}

function mapJson(value: unknown, replace: (key: string, value: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => mapJson(item, replace))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(key, mapJson(item, replace))]))
}

function redactRequest(body: unknown): string {
  return JSON.stringify(
    mapJson(body, (key, value) => (key === 'inlineSecret' && typeof value === 'string' ? SECRET_PLACEHOLDER : value)),
  )
}

function redactResponse(text: string): string {
  if (text === '') return ''
  try {
    const parsed: unknown = JSON.parse(text)
    const redacted = mapJson(parsed, (key, value) =>
      (key === 'rawApiKey' || key === 'rootApiKey') && typeof value === 'string'
        ? `${value.slice(0, 12)}… ${SHOWN_ONCE}`
        : value,
    )
    return JSON.stringify(redacted, null, 2)
  } catch {
    return text
  }
}

export function toApiError(status: number, parsed: unknown, fallback: string): ApiError {
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
/** Tells the page the session's key stopped working, as a 401 from call() does. */
export const reportUnauthenticated = (error: ApiError): void => onUnauthenticated(error)
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

export async function call<T>(
  action: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResult<T>> {
  const auth = options.auth ?? true
  const apiKey = options.apiKey ?? session.apiKey
  const headers = requestHeaders(auth, apiKey, options.body !== undefined)
  const bodyText = options.body === undefined ? undefined : JSON.stringify(options.body)
  const started = performance.now()
  let status = 0
  let text = ''
  try {
    const response = await fetch(path, {
      method,
      headers,
      body: bodyText,
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    })
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
  const error =
    status === 0
      ? { code: 0, status: 'NETWORK', message: 'the server could not be reached', details: [] }
      : toApiError(status, parsed, text || `HTTP ${status}`)
  if (status === 401 && auth && options.apiKey === undefined && session.apiKey) onUnauthenticated(error)
  return { status, ok, error, raw: parsed }
}

/** The headers of a call: JSON, and the session's key unless the endpoint is public. */
export function requestHeaders(
  auth: boolean,
  apiKey: string | null | undefined,
  hasBody: boolean,
  accept = 'application/json',
): Record<string, string> {
  const headers: Record<string, string> = { accept }
  if (auth && apiKey) headers.authorization = `Bearer ${apiKey}`
  if (hasBody) headers['content-type'] = 'application/json'
  return headers
}

/** What a stream the user stopped ends with, in the result and in debug mode. */
export const STOPPED = 'stopped before the end'

export interface StreamResult {
  /** HTTP status; 0 when the server could not be reached. */
  status: number
  ok: boolean
  /** Set when the answer was not a stream (a 4xx or 5xx before it began, or no connection). */
  error?: ApiError
  /** Set when the stream broke off after it began (connection lost, a line that is not JSON). */
  brokenOff?: string
}

/**
 * A call whose answer is a stream of NDJSON lines (POST /v1/memories:retrieve): each line
 * is handed to onLine as soon as it arrives, and debug mode shows the lines as they come.
 * An error answer before the stream begins is the usual JSON error, returned like call()'s.
 */
export async function streamCall(
  action: string,
  method: string,
  path: string,
  body: unknown,
  onLine: (value: unknown) => void,
  signal?: AbortSignal,
): Promise<StreamResult> {
  const apiKey = session.apiKey
  const headers = requestHeaders(true, apiKey, true, 'application/x-ndjson')
  const started = performance.now()
  const entry = record({
    action,
    method,
    path,
    requestBody: redactRequest(body),
    authorized: Boolean(apiKey),
    status: 0,
    responseText: '',
    durationMs: 0,
    streamed: true,
  })
  const finish = (status: number, text: string): void => {
    entry.status = status
    entry.responseText = text
    entry.durationMs = Math.round(performance.now() - started)
    notify()
  }
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
      signal,
    })
  } catch (error) {
    if (signal?.aborted) {
      finish(0, STOPPED)
      return { status: 0, ok: false, brokenOff: STOPPED }
    }
    finish(0, `network error: ${(error as Error).message}`)
    return {
      status: 0,
      ok: false,
      error: { code: 0, status: 'NETWORK', message: 'the server could not be reached', details: [] },
    }
  }
  const ok = response.ok && (response.headers.get('content-type') ?? '').includes('ndjson')
  if (!ok || !response.body) {
    const text = await response.text().catch(() => '')
    finish(response.status, redactResponse(text))
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    const error = toApiError(response.status, parsed, text || `HTTP ${response.status}`)
    if (response.status === 401 && session.apiKey) onUnauthenticated(error)
    return { status: response.status, ok: false, error }
  }
  entry.status = response.status
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let pending = ''
  let raw = ''
  let brokenOff: string | undefined
  const handle = (line: string): void => {
    if (line.trim() === '') return
    raw += `${line}\n`
    try {
      onLine(JSON.parse(line))
    } catch {
      brokenOff ??= `a line of the stream is not JSON: ${line.slice(0, 80)}`
    }
  }
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      pending += value
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) handle(line)
      finish(response.status, raw)
    }
    handle(pending)
  } catch (error) {
    brokenOff = signal?.aborted ? STOPPED : `the stream broke off: ${(error as Error).message}`
  }
  finish(response.status, signal?.aborted ? `${raw}(${STOPPED})\n` : raw)
  return { status: response.status, ok: brokenOff === undefined, brokenOff }
}

/** Query string from defined, non-empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(name, String(value))
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
