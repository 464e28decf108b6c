import http from 'node:http'
import http2 from 'node:http2'
import net from 'node:net'
import { MemoryServiceService } from '../../src/generated/memsvc/v1/memories.js'
import { retrievalEventBody, retrieveMessage, type Transport } from './api-client.js'

/**
 * Clients for retrieval answers of many megabytes that never hold one whole: each event is
 * checked against the memories' known texts as it arrives and then dropped, so that a test
 * measuring the process's memory measures the server's. A reader can read at once, slowly
 * (a pause after each piece), or never (a client that asks and then takes nothing).
 */

/** gRPC's length-prefixed message framing: a compression flag and a four-byte length. */
const GRPC_FRAME_HEADER_BYTES = 5

export interface AnswerTarget {
  restUrl: string
  grpcAddress: string
  apiKey: string
  /** Memory id → its text: what memoryDefinition's originalContent and each chunkText must match. */
  texts: Map<string, string>
}

export interface AnswerOutcome {
  /** 'OK' or the refusal's status name, the same on both transports. */
  status: string
  /** REST Retry-After header; gRPC retry-after trailer. */
  retryAfter?: string
  /** gRPC grpc-retry-pushback-ms trailer. */
  pushbackMs?: string
  definitions: number
  items: number
  /** The END boundary arrived. */
  ended: boolean
  /** Every event that did not match the stored texts, described. */
  mismatches: string[]
}

/** Pause after each piece read by a slow reader. */
const SLOW_READ_PAUSE_MS = 5

export interface ReadOptions {
  /** 'slow': a pause after each piece read. */
  pace?: 'fast' | 'slow'
  /** Called once, when half the items expected (BEGIN's expectedItems) have arrived. */
  onHalfway?: () => void
}

class AnswerChecker {
  readonly outcome: AnswerOutcome = { status: 'OK', definitions: 0, items: 0, ended: false, mismatches: [] }
  #halfway: number | undefined

  constructor(
    readonly texts: Map<string, string>,
    readonly onHalfway?: () => void,
  ) {}

  take(event: Record<string, any>): void {
    if (event.resultSetBoundary?.kind === 'BEGIN') this.#halfway = Math.ceil(event.resultSetBoundary.expectedItems / 2)
    this.#check(event)
    if (this.outcome.items === this.#halfway) {
      this.#halfway = undefined
      this.onHalfway?.()
    }
  }

  #check(event: Record<string, any>): void {
    if ('memoryDefinition' in event) {
      const memory = event.memoryDefinition.memory
      this.outcome.definitions++
      if (memory.originalContent !== this.texts.get(memory.memoryId))
        this.#mismatch(`content of ${memory.memoryId} (${String(memory.originalContent).length} characters)`)
    } else if ('retrievedItem' in event) {
      const chunk = event.retrievedItem.chunk
      this.outcome.items++
      const text = this.texts.get(chunk.memoryId)?.slice(chunk.startOffset, chunk.endOffset)
      if (chunk.chunkText !== text || text === '') this.#mismatch(`text of chunk ${chunk.chunkId}`)
    } else if (event.resultSetBoundary?.kind === 'END') this.outcome.ended = true
    else if ('status' in event) this.#mismatch(`status event ${JSON.stringify(event.status)}`)
  }

  #mismatch(what: string): void {
    if (this.outcome.mismatches.length < 5) this.outcome.mismatches.push(what)
  }
}

/** Reads one answer to its end (or its refusal), checking each event as it comes. */
export function readAnswer(
  transport: Transport,
  target: AnswerTarget,
  input: unknown,
  options: ReadOptions = {},
): Promise<AnswerOutcome> {
  return transport === 'rest' ? readRestAnswer(target, input, options) : readGrpcAnswer(target, input, options)
}

function readRestAnswer(target: AnswerTarget, input: unknown, options: ReadOptions): Promise<AnswerOutcome> {
  const checker = new AnswerChecker(target.texts, options.onHalfway)
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${target.restUrl}/v1/memories:retrieve`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
        agent: false,
      },
      (response) => {
        response.setEncoding('utf8')
        let buffered = ''
        response.on('data', (piece: string) => {
          buffered += piece
          let end = buffered.indexOf('\n')
          while (end >= 0) {
            const line = buffered.slice(0, end)
            buffered = buffered.slice(end + 1)
            if (line.trim() !== '') {
              const event = JSON.parse(line)
              if (response.statusCode === 200) checker.take(event)
              else {
                checker.outcome.status = event.error?.status ?? String(response.statusCode)
                checker.outcome.retryAfter = response.headers['retry-after']
              }
            }
            end = buffered.indexOf('\n')
          }
          if (options.pace === 'slow') {
            response.pause()
            setTimeout(() => response.resume(), SLOW_READ_PAUSE_MS)
          }
        })
        response.on('end', () => {
          // An error body has no newline at its end.
          if (response.statusCode !== 200 && buffered.trim() !== '') {
            const body = JSON.parse(buffered)
            checker.outcome.status = body.error?.status ?? String(response.statusCode)
            checker.outcome.retryAfter = response.headers['retry-after']
          }
          resolve(checker.outcome)
        })
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(JSON.stringify(input))
  })
}

/**
 * A gRPC call on an HTTP/2 connection of its own, framed by hand: grpc-js's client keeps
 * taking messages into its memory while a call is paused, so neither a slow reader nor one
 * that never reads would make the server wait; an HTTP/2 stream that is not read does.
 */
function openGrpcCall(
  target: AnswerTarget,
  input: unknown,
): { session: http2.ClientHttp2Session; stream: http2.ClientHttp2Stream } {
  const session = http2.connect(`http://${target.grpcAddress}`)
  session.on('error', () => {})
  const payload = MemoryServiceService.retrieveMemory.requestSerialize(retrieveMessage(input) as never)
  const frame = Buffer.alloc(GRPC_FRAME_HEADER_BYTES + payload.length)
  frame.writeUInt32BE(payload.length, 1)
  payload.copy(frame, GRPC_FRAME_HEADER_BYTES)
  const stream = session.request({
    ':method': 'POST',
    ':path': MemoryServiceService.retrieveMemory.path,
    'content-type': 'application/grpc',
    te: 'trailers',
    authorization: `Bearer ${target.apiKey}`,
  })
  stream.on('error', () => {})
  stream.end(frame)
  return { session, stream }
}

function readGrpcAnswer(target: AnswerTarget, input: unknown, options: ReadOptions): Promise<AnswerOutcome> {
  const checker = new AnswerChecker(target.texts, options.onHalfway)
  const { session, stream } = openGrpcCall(target, input)
  // A refusal comes as headers only; an answer's status in its trailers.
  const takeStatus = (headers: http2.IncomingHttpHeaders) => {
    const code = headers['grpc-status']
    if (code === undefined || code === '0') return
    checker.outcome.status = String(headers['x-error-status'] ?? `gRPC status ${code}`)
    if (headers['retry-after'] !== undefined) checker.outcome.retryAfter = String(headers['retry-after'])
    if (headers['grpc-retry-pushback-ms'] !== undefined)
      checker.outcome.pushbackMs = String(headers['grpc-retry-pushback-ms'])
  }
  stream.on('response', takeStatus)
  stream.on('trailers', takeStatus)
  // Pieces are joined only once a frame's header, then its whole message, has arrived.
  let pieces: Buffer[] = []
  let buffered = 0
  let messageEnd: number | undefined
  stream.on('data', (piece: Buffer) => {
    pieces.push(piece)
    buffered += piece.length
    for (;;) {
      const needed = messageEnd ?? GRPC_FRAME_HEADER_BYTES
      if (buffered < needed) break
      const bytes = Buffer.concat(pieces, buffered)
      if (messageEnd === undefined) {
        messageEnd = GRPC_FRAME_HEADER_BYTES + bytes.readUInt32BE(1)
        pieces = [bytes]
        continue
      }
      const message = MemoryServiceService.retrieveMemory.responseDeserialize(
        bytes.subarray(GRPC_FRAME_HEADER_BYTES, messageEnd),
      )
      checker.take(retrievalEventBody(message))
      const rest = bytes.subarray(messageEnd)
      pieces = rest.length > 0 ? [rest] : []
      buffered = rest.length
      messageEnd = undefined
    }
    if (options.pace === 'slow') {
      stream.pause()
      setTimeout(() => stream.resume(), SLOW_READ_PAUSE_MS)
    }
  })
  return new Promise((resolve) =>
    stream.on('close', () => {
      session.close()
      if (stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR)
        checker.outcome.status = `reset with code ${stream.rstCode}`
      resolve(checker.outcome)
    }),
  )
}

/**
 * A client that asks for an answer and takes nothing of it: nothing is read from the
 * connection, so the server's writes fill the kernel's buffers (REST) or HTTP/2's flow
 * control windows (gRPC) and then wait.
 */
export interface StalledAnswer {
  /**
   * Resolves with how the answer ended for the client: REST 'closed' (the connection), gRPC
   * 'RESOURCE_EXHAUSTED' for a reset by the server, or the reset's code. A client that reads
   * nothing sees the end only once it reads what was sent before (`resume`).
   */
  readonly closed: Promise<string>
  /** Reads (and drops) whatever comes from now on. */
  resume(): void
  /** Goes away. */
  cancel(): void
}

export function stallAnswer(transport: Transport, target: AnswerTarget, input: unknown): StalledAnswer {
  return transport === 'rest' ? stallRestAnswer(target, input) : stallGrpcAnswer(target, input)
}

function stallRestAnswer(target: AnswerTarget, input: unknown): StalledAnswer {
  const url = new URL(target.restUrl)
  const body = JSON.stringify(input)
  const socket = net.connect(Number(url.port), url.hostname, () => {
    socket.write(
      `POST /v1/memories:retrieve HTTP/1.1\r\nhost: test\r\nauthorization: Bearer ${target.apiKey}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
  })
  // Paused before anything arrives: the kernel's buffers fill, then the server's writes back up.
  socket.pause()
  socket.on('error', () => {})
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve('closed')))
  return { closed, resume: () => socket.resume(), cancel: () => socket.destroy() }
}

/** A gRPC call whose HTTP/2 stream is never read (see openGrpcCall), on a connection of its own: the server judges a stalled stream by its connection, which HTTP/2's streams share. */
function stallGrpcAnswer(target: AnswerTarget, input: unknown): StalledAnswer {
  const { session, stream } = openGrpcCall(target, input)
  stream.pause()
  const closed = new Promise<string>((resolve) =>
    stream.on('close', () =>
      resolve(
        stream.rstCode === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM
          ? 'RESOURCE_EXHAUSTED'
          : `closed with code ${stream.rstCode}`,
      ),
    ),
  ).finally(() => session.destroy())
  return {
    closed,
    resume: () => stream.resume(),
    cancel: () => {
      stream.close(http2.constants.NGHTTP2_CANCEL)
      session.destroy()
    },
  }
}
