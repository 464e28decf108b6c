import * as grpc from '@grpc/grpc-js'
import type { MemoryServiceClient } from '../../src/generated/memsvc/v1/memories.js'
import { type ApiClient, grpcFailure, retrievalEventBody, retrieveMessage } from './api-client.js'

/**
 * Clients that read a retrieval stream one event at a time, as it arrives, over REST NDJSON,
 * REST SSE and gRPC: a test can hold the provider, read what came before, and release it.
 * Every event is in REST's shape ({<kind>: value}).
 */

export type StreamKind = 'rest-ndjson' | 'rest-sse' | 'grpc'
export const STREAM_KINDS: StreamKind[] = ['rest-ndjson', 'rest-sse', 'grpc']

export interface StreamReader {
  /** The next event, or undefined once the stream has ended. Rejects with the failure when it did not start. */
  next(): Promise<Record<string, any> | undefined>
  /** Goes away mid-stream: closes the connection or cancels the RPC. */
  cancel(): void
  /** Heartbeats seen so far (blank NDJSON lines, SSE comments). */
  readonly heartbeats: number
  /** REST: the response's content type. */
  readonly contentType?: string
}

export class StreamRefused extends Error {
  constructor(
    readonly status: string,
    message: string,
  ) {
    super(`${status}: ${message}`)
  }
}

/** Queue of events fed by a source and read by `next`. */
class EventQueue {
  readonly #events: Array<Record<string, any>> = []
  readonly #waiters: Array<{
    resolve: (event: Record<string, any> | undefined) => void
    reject: (error: Error) => void
  }> = []
  #ended = false
  #failure: Error | undefined

  push(event: Record<string, any>): void {
    const waiter = this.#waiters.shift()
    if (waiter) waiter.resolve(event)
    else this.#events.push(event)
  }

  end(failure?: Error): void {
    if (this.#ended) return
    this.#ended = true
    this.#failure = failure
    for (const waiter of this.#waiters.splice(0)) failure ? waiter.reject(failure) : waiter.resolve(undefined)
  }

  next(): Promise<Record<string, any> | undefined> {
    const event = this.#events.shift()
    if (event) return Promise.resolve(event)
    if (this.#ended) return this.#failure ? Promise.reject(this.#failure) : Promise.resolve(undefined)
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }))
  }
}

export async function openStream(
  kind: StreamKind,
  client: ApiClient,
  apiKey: string,
  input: unknown,
): Promise<StreamReader> {
  return kind === 'grpc'
    ? openGrpcStream(client, apiKey, input)
    : openRestStream(client.target.restUrl, apiKey, input, kind === 'rest-sse')
}

async function openRestStream(restUrl: string, apiKey: string, input: unknown, sse: boolean): Promise<StreamReader> {
  const abort = new AbortController()
  const response = await fetch(`${restUrl}/v1/memories:retrieve`, {
    method: 'POST',
    body: JSON.stringify(input),
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${apiKey}`,
      ...(sse ? { accept: 'text/event-stream' } : {}),
    },
    signal: abort.signal,
  })
  if (!response.ok) {
    const body = (await response.json()) as { error: { status: string; message: string } }
    throw new StreamRefused(body.error.status, body.error.message)
  }
  const queue = new EventQueue()
  let heartbeats = 0
  const separator = sse ? '\n\n' : '\n'
  const take = (frame: string) => {
    if (sse) {
      if (frame.startsWith(':')) heartbeats++
      else if (frame.startsWith('data: ')) queue.push(JSON.parse(frame.slice('data: '.length)))
      else throw new Error(`not an SSE event: ${frame}`)
    } else if (frame.trim() === '') heartbeats++
    else queue.push(JSON.parse(frame))
  }
  void (async () => {
    const decoder = new TextDecoder()
    let buffered = ''
    try {
      for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(bytes, { stream: true })
        let end = buffered.indexOf(separator)
        while (end >= 0) {
          take(buffered.slice(0, end))
          buffered = buffered.slice(end + separator.length)
          end = buffered.indexOf(separator)
        }
      }
      if (buffered.length > 0)
        throw new Error(`the stream ended inside an event: ${JSON.stringify(buffered.slice(0, 100))}`)
      queue.end()
    } catch (error) {
      queue.end(error as Error)
    }
  })()
  return {
    next: () => queue.next(),
    cancel: () => abort.abort(),
    get heartbeats() {
      return heartbeats
    },
    contentType: response.headers.get('content-type') ?? undefined,
  }
}

function openGrpcStream(client: ApiClient, apiKey: string, input: unknown): Promise<StreamReader> {
  const memories = client.client('memories') as unknown as MemoryServiceClient
  const metadata = new grpc.Metadata()
  metadata.set('authorization', `Bearer ${apiKey}`)
  const call = memories.retrieveMemory(retrieveMessage(input) as never, metadata)
  const queue = new EventQueue()
  return new Promise((resolve, reject) => {
    let started = false
    const reader: StreamReader = { next: () => queue.next(), cancel: () => call.cancel(), heartbeats: 0 }
    call.on('metadata', () => {
      started = true
      resolve(reader)
    })
    call.on('data', (message) => {
      if (!started) {
        started = true
        resolve(reader)
      }
      queue.push(retrievalEventBody(message))
    })
    call.on('error', (error: grpc.ServiceError) => {
      const failure = grpcFailure(error)
      const refused = new StreamRefused(failure.status, failure.message)
      queue.end(refused)
      if (!started) reject(refused)
    })
    call.on('end', () => queue.end())
  })
}

/** Reads until an event satisfies `found`; returns every event read. */
export async function readUntil(
  reader: StreamReader,
  found: (event: Record<string, any>) => boolean,
): Promise<Array<Record<string, any>>> {
  const seen: Array<Record<string, any>> = []
  for (;;) {
    const event = await reader.next()
    if (!event)
      throw new Error(`the stream ended before the event looked for; saw ${JSON.stringify(seen).slice(0, 500)}`)
    seen.push(event)
    if (found(event)) return seen
  }
}
