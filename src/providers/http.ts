/**
 * One JSON POST to a model provider, for every call: embedding, rerank, chat and probes.
 * Failures come back as ProviderCallError saying whether trying again may help (timeouts,
 * unreachable, 5xx, 429) and how long the provider asked to wait; messages have the
 * credential redacted.
 */

const MAX_ERROR_SNIPPET = 300
const TOO_MANY_REQUESTS = 429
const SERVER_ERROR = 500
/** A Retry-After far in the future is not worth holding a job for; the job queue retries later instead. */
const MAX_RETRY_AFTER_MS = 10 * 60_000
/**
 * A provider call made while a caller waits (a retrieval's query embedding, its rerank)
 * gives up after this long, retries included: a stalled provider costs the caller at most
 * this, and the error names the provider. Background calls (ingestion) wait longer.
 */
export const QUERY_PROVIDER_TIMEOUT_MS = 10_000

export class ProviderCallError extends Error {
  constructor(
    message: string,
    /** True when the same call may succeed later. */
    readonly transient: boolean,
    readonly status?: number,
    /** From the provider's Retry-After header. */
    readonly retryAfterMs?: number,
    /** No answer (or no whole answer) came within the timeout: the provider may be stalled. */
    readonly timedOut = false,
  ) {
    super(message)
    this.name = 'ProviderCallError'
  }
}

/** A call to a provider as protocol.ts shapes it: a JSON body POSTed to the registration's endpoint. */
export interface ProviderRequest {
  url: string
  headers: Record<string, string>
  body: unknown
}

export interface ProviderCallOptions {
  timeoutMs: number
  maxResponseBytes: number
  /** Removes the credential from any text that may reach a response or a log line. */
  redact: (text: string) => string
  /** Aborts the call early, when the caller it answers for has gone away. */
  signal?: AbortSignal
}

/** Retry-After is delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  const ms = /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now
  if (!Number.isFinite(ms)) return undefined
  return Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS)
}

export async function postJson(request: ProviderRequest, options: ProviderCallOptions): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(request.body),
      signal: options.signal
        ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal])
        : AbortSignal.timeout(options.timeoutMs),
      // A redirect could carry the credential to another host.
      redirect: 'error',
    })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    if ((error as Error).name === 'TimeoutError')
      throw new ProviderCallError(`no answer within ${options.timeoutMs} ms`, true, undefined, undefined, true)
    if ((error as Error).name === 'AbortError') throw new ProviderCallError('the call was cancelled', true)
    throw new ProviderCallError(
      `cannot reach ${new URL(request.url).origin}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      true,
    )
  }
  let text: string
  try {
    text = await readBounded(response, options.maxResponseBytes)
  } catch (error) {
    if (error instanceof ProviderCallError) throw error
    // The body stalled past the timeout or the connection dropped mid-answer.
    const timedOut = (error as Error).name === 'TimeoutError'
    throw new ProviderCallError(
      timedOut
        ? `no complete answer within ${options.timeoutMs} ms`
        : `the answer broke off: ${(error as Error).message}`,
      true,
      response.status,
      undefined,
      timedOut,
    )
  }
  if (!response.ok) {
    const transient = response.status === TOO_MANY_REQUESTS || response.status >= SERVER_ERROR
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
    throw new ProviderCallError(
      `HTTP ${response.status} from the provider: ${options.redact(text).slice(0, MAX_ERROR_SNIPPET)}`,
      transient,
      response.status,
      retryAfterMs,
    )
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new ProviderCallError(
      `the provider answered with something that is not JSON: ${options.redact(text).slice(0, MAX_ERROR_SNIPPET)}`,
      false,
      response.status,
    )
  }
}

async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (declared > maxBytes)
    throw new ProviderCallError(
      `the response is ${declared} bytes, more than the ${maxBytes} expected`,
      false,
      response.status,
    )
  const text = await response.text()
  if (text.length > maxBytes)
    throw new ProviderCallError(`the response is larger than the ${maxBytes} bytes expected`, false, response.status)
  return text
}
