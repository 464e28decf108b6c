import type { AppError } from '../../errors/app-error.js'
import type { RestRequest, RestStream } from './rest-messages.js'

/**
 * How a stream of JSON events goes over HTTP: NDJSON by default (one event per line), SSE
 * when the client's Accept asks for text/event-stream (`data: <json>` and a blank line per
 * event). Heartbeats are what each format ignores: an empty line in NDJSON, a comment line in
 * SSE. An error after events went out is a last `status` event.
 */

export const NDJSON_TYPE = 'application/x-ndjson'
export const SSE_TYPE = 'text/event-stream'

const wantsSse = (accept: string | undefined) =>
  accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)

export function eventStream(request: RestRequest, events: AsyncIterable<unknown>): RestStream {
  const sse = wantsSse(request.headers.accept)
  const frame = sse
    ? (event: unknown) => `data: ${JSON.stringify(event)}\n\n`
    : (event: unknown) => `${JSON.stringify(event)}\n`
  const source = events[Symbol.asyncIterator]()
  const pieces: AsyncIterator<string> = {
    next: async () => {
      const result = await source.next()
      return result.done ? { done: true, value: undefined } : { done: false, value: frame(result.value) }
    },
    return: async () => {
      await source.return?.()
      return { done: true, value: undefined }
    },
  }
  return {
    contentType: sse ? `${SSE_TYPE}; charset=utf-8` : `${NDJSON_TYPE}; charset=utf-8`,
    pieces,
    heartbeat: sse ? ': keep-alive\n\n' : '\n',
    failurePiece: (error: AppError) => frame({ status: { code: error.code, message: error.message } }),
  }
}
