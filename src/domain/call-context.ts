import crypto from 'node:crypto'
import type { Principal } from './permissions.js'

/** What a transport hands the domain about a call, before authentication. */
export interface CallContext {
  requestId: string
  transport: 'rest' | 'grpc'
  /** The raw Authorization header / metadata value, if any. */
  authorization?: string
  /** Set when the transport already authenticated `authorization` for this call (REST does, before reading a body). */
  principal?: Principal
  /**
   * Aborted when the caller goes away (a closed connection, a cancelled RPC): work done only
   * for the caller, such as a provider call whose answer is streamed back, stops with it.
   */
  signal?: AbortSignal
}

/** A caller's X-Request-Id is kept when it is a plain token; otherwise (or when absent) a new one is made. */
const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/

export function requestIdFrom(incoming: unknown): string {
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : crypto.randomUUID()
}
