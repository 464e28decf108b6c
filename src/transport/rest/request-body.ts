import type { HttpResponse } from 'uWebSockets.js'
import type { Principal } from '../../domain/permissions.js'
import { AppError } from '../../errors/app-error.js'

/**
 * The most a request may send before an API key has been verified (on routes without one, such as
 * POST /v1/system/init, and on unknown routes): nothing such a request does needs more, and it keeps
 * what an anonymous client can make the server hold small.
 */
export const UNAUTHENTICATED_BODY_LIMIT_BYTES = 16 * 1024

/** The exchange a body is read for (rest-exchange.ts). */
export interface BodyReceiver {
  /** True while body bytes may still arrive: answering then closes the connection instead of reading on. */
  bodyPending: boolean
  /** Answered or aborted: nothing more is done for it. */
  readonly settled: boolean
  /** Runs `step` so that nothing it throws can leave a uWS callback. */
  guarded(step: () => void): void
  fail(error: unknown): void
  start(body: Buffer, principal?: Principal): void
}

export interface BodyRules {
  maxBodyBytes: number
  /** Given on routes that need an API key: checks the Authorization header value, rejecting (401) a missing or invalid one. */
  authenticate?: (authorization: string | undefined) => Promise<Principal>
}

/**
 * Reads a request body under its cap. On a route that needs an API key the key is checked
 * from the headers while at most UNAUTHENTICATED_BODY_LIMIT_BYTES of body are read: a larger
 * (or chunked) body waits with the socket paused, and a caller without a valid key is answered
 * 401 without it being read. A small body is read to its end first, so that the 401 leaves the
 * connection usable instead of resetting it under the client's feet.
 */
export function readBody(
  res: HttpResponse,
  headers: Record<string, string>,
  rules: BodyRules,
  receiver: BodyReceiver,
): void {
  new BodyReader(res, rules, receiver).read(headers)
}

class BodyReader {
  readonly #res: HttpResponse
  readonly #receiver: BodyReceiver
  readonly #authenticate: BodyRules['authenticate']
  readonly #anonymousLimit: number
  readonly #limit: number
  readonly #chunks: Buffer[] = []
  #received = 0
  #body: Buffer | undefined
  #principal: Principal | undefined
  #authenticated: boolean
  /** The authentication failure, held until a small body has been read to its end. */
  #refusal: { error: unknown } | undefined
  #paused = false

  constructor(res: HttpResponse, rules: BodyRules, receiver: BodyReceiver) {
    this.#res = res
    this.#receiver = receiver
    this.#authenticate = rules.authenticate
    this.#anonymousLimit = Math.min(rules.maxBodyBytes, UNAUTHENTICATED_BODY_LIMIT_BYTES)
    this.#limit = rules.authenticate ? rules.maxBodyBytes : this.#anonymousLimit
    this.#authenticated = !rules.authenticate
  }

  read(headers: Record<string, string>): void {
    const declared = headers['content-length']
    this.#receiver.bodyPending = true
    if (declared !== undefined && Number(declared) > this.#limit) {
      const whose = this.#authenticate ? '' : ' for requests without an API key'
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `request body of ${declared} bytes exceeds the limit of ${this.#limit} bytes${whose}`,
      )
    }
    this.#res.onData((chunk, isLast) => this.#receiver.guarded(() => this.#take(chunk, isLast)))
    if (!this.#authenticate) return
    const smallBody = declared !== undefined && Number(declared) <= this.#anonymousLimit
    if (!smallBody) this.#pause()
    this.#authenticate(headers.authorization).then(
      (who) => this.#receiver.guarded(() => this.#admit(who)),
      (error: unknown) => this.#refuse(error, smallBody),
    )
  }

  #take(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.#receiver.settled) return
    this.#received += chunk.byteLength
    if (this.#received > this.#limit)
      throw new AppError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${this.#limit} bytes`)
    if (!this.#authenticated && this.#received > this.#anonymousLimit) this.#pause()
    // uWS reuses the chunk's memory after this callback returns: copy it.
    this.#chunks.push(Buffer.from(new Uint8Array(chunk)))
    if (!isLast) return
    this.#receiver.bodyPending = false
    this.#body = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks)
    this.#proceed()
  }

  #admit(principal: Principal): void {
    this.#principal = principal
    this.#authenticated = true
    // uWS 20.30 resets the connection when a socket that is not paused is resumed.
    if (this.#paused && !this.#receiver.settled) this.#res.resume()
    this.#proceed()
  }

  #refuse(error: unknown, smallBody: boolean): void {
    if (this.#body === undefined && smallBody) {
      this.#refusal = { error }
      return
    }
    // Reading again lets the answer's lingering close (uWS change 8) drain what the client is still sending.
    if (this.#paused && !this.#receiver.settled) this.#res.resume()
    this.#receiver.fail(error)
  }

  /** Paused, uWS reads nothing more from the socket: what it already read (one receive buffer at most) is all that is held. */
  #pause(): void {
    if (this.#paused) return
    this.#paused = true
    this.#res.pause()
  }

  #proceed(): void {
    if (this.#receiver.settled) return
    if (this.#refusal && this.#body !== undefined) this.#receiver.fail(this.#refusal.error)
    else if (this.#body !== undefined && this.#authenticated) this.#receiver.start(this.#body, this.#principal)
  }
}
