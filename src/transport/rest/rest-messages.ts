import type { Principal } from '../../domain/permissions.js'
import type { AppError } from '../../errors/app-error.js'

/** What a handler sees: plain data, copied out of uWS before anything awaits. */
export interface RestRequest {
  method: string
  path: string
  params: Record<string, string>
  /** Read-only: requests without a query string share one empty instance. */
  query: URLSearchParams
  /** Only the headers the wrapper copies (READ_HEADERS in rest-exchange.ts), by their lower-case names; absent ones are missing. */
  headers: Record<string, string>
  body: Buffer
  requestId: string
  /** Set on routes that need an API key and read a body: the key was checked from the headers before the body was read. */
  principal?: Principal
}

export interface RestResponse {
  status: number
  headers?: Record<string, string>
  /** Serialised as JSON unless `text` is given. */
  json?: unknown
  /** Sent as it is; JSON unless `contentType` says otherwise. */
  text?: string
  contentType?: string
}

export type RestHandler = (request: RestRequest) => Promise<RestResponse> | RestResponse

export function errorBody(error: AppError, requestId: string): unknown {
  return {
    error: {
      code: error.httpStatus,
      status: error.code,
      message: error.message,
      details: error.details,
      requestId,
    },
  }
}

/** A list body whose items arrive as JSON texts: joined as they are, never parsed again. */
export function listBody(field: string, itemsJson: string[], nextToken?: string): string {
  const next = nextToken === undefined ? '' : `,"nextToken":${JSON.stringify(nextToken)}`
  return `{"${field}":[${itemsJson.join(',')}]${next}}`
}
