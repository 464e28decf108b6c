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
  /** On routes that stream their body (RouteOptions.streamBody), when they do: the body as it arrives; `body` is then empty. */
  bodyStream?: AsyncIterable<Buffer>
  requestId: string
  /** Set on routes that need an API key and read a body: the key was checked from the headers before the body was read. */
  principal?: Principal
  /** Aborted when the client goes away; made on first use, as few handlers need it. */
  cancellation(): AbortSignal
}

export interface RestResponse {
  status: number
  headers?: Record<string, string>
  /** Serialised as JSON unless `text` is given. */
  json?: unknown
  /** Sent as it is; JSON unless `contentType` says otherwise. */
  text?: string
  contentType?: string
  /** A 200 answer written piece by piece as it is produced (rest-stream.ts); `status` and `json` are then unused. */
  stream?: RestStream
  /** A 200 answer of bytes (a stored file), written part by part (binary-stream.ts), or one buffer. */
  binary?: { contentType: string; headers?: Record<string, string>; parts: AsyncIterable<Buffer> | Iterable<Buffer> }
}

/**
 * An answer streamed in pieces, each written as soon as it is known. Nothing is written
 * before the first piece exists, so a failure to produce it is still an ordinary JSON error.
 */
export interface RestStream {
  contentType: string
  /** The framed pieces (NDJSON lines, SSE events), in order. */
  pieces: AsyncIterator<string>
  /** Written when nothing else has been for a while, so that neither end nor a proxy takes the connection for dead. */
  heartbeat: string
  /** The last piece for an error thrown after pieces went out. */
  failurePiece(error: AppError): string
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
