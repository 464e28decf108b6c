// An answer given before the request body has all arrived (401 without a key, 413 over a limit)
// reaches a client that is still writing that body: the server sends its answer and FIN, then
// reads and drops what still comes for a few seconds before it closes (a lingering close, uWS
// change 8 in third_party/uWebSockets.js/NOTES.md). Before, it closed at once, and a client that
// writes its whole body before reading met a reset (EPIPE) instead of the answer: 19 of 20.
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { connectRaw } from '../support/raw-http.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const MB = 1024 * 1024
const CLIENTS = 20
const BODY_BYTES = 8 * MB
/** Under the limit, so that the answer is the 401 given while the body waits unread. */
const UNAUTHENTICATED_BODY_BYTES = 2 * MB
const BODY_LIMIT_MB = 4
/** uWS's timers tick every 4 s: a 5 s linger ends between 4 and 8 s after the answer. */
const LINGER_BOUND_MS = 12_000

interface WriterOutcome {
  status: number | undefined
  error: string | undefined
}

/** A client that writes its whole request, body and all, before it reads anything, as most simple HTTP clients do. */
function writeAllThenRead(port: number, overTls: boolean, head: string, bodyBytes: number): Promise<WriterOutcome> {
  return new Promise((resolve) => {
    let received = ''
    let error: string | undefined
    const socket: net.Socket = connectRaw(port, overTls, () => {
      socket.write(head)
      socket.write(Buffer.alloc(bodyBytes, 'a'))
    })
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
    })
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error = cause.code ?? cause.message
    })
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]) || undefined, error }))
  })
}

function requestHead(path: string, contentLength: number, authorization?: string): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: localhost', 'Content-Type: application/json']
  if (authorization) lines.push(`Authorization: ${authorization}`)
  lines.push(`Content-Length: ${contentLength}`)
  return `${lines.join('\r\n')}\r\n\r\n`
}

describe.each([
  ['plaintext', false],
  ['TLS', true],
])('an early answer over %s reaches a client that is still sending its body', (_, overTls) => {
  let server: TestServer
  let port: number
  let rootKey: string

  beforeAll(async () => {
    server = await startTestServer({
      engine: ENGINES[0]!,
      flags: { 'grpc-max-message-size-mb': BODY_LIMIT_MB, 'tls-disabled': !overTls },
    })
    port = Number(new URL(server.restUrl).port)
    rootKey = (await httpRequest(`${server.restUrl}/v1/system/init`, { method: 'POST', insecure: true })).json()
      .rootApiKey
  })
  afterAll(async () => {
    await server?.stop()
  })

  const everyClientGets = async (head: string, bodyBytes: number) =>
    Promise.all(Array.from({ length: CLIENTS }, () => writeAllThenRead(port, overTls, head, bodyBytes)))

  it(`${CLIENTS} clients writing ${UNAUTHENTICATED_BODY_BYTES / MB} MiB without a key all read their 401`, async () => {
    // A route whose own limit (64 MiB) is above the server's 4 MiB, so that 2 MiB waits for the key check.
    const head = requestHead('/v1/memories:batchCreate', UNAUTHENTICATED_BODY_BYTES)
    const outcomes = await everyClientGets(head, UNAUTHENTICATED_BODY_BYTES)
    expect(outcomes).toEqual(Array(CLIENTS).fill({ status: 401, error: undefined }))
  })

  it(`${CLIENTS} clients writing ${BODY_BYTES / MB} MiB to a route without a key all read their 413`, async () => {
    const outcomes = await everyClientGets(requestHead('/v1/system/init', BODY_BYTES), BODY_BYTES)
    expect(outcomes).toEqual(Array(CLIENTS).fill({ status: 413, error: undefined }))
  })

  it(`${CLIENTS} clients with a key declaring more than the ${BODY_LIMIT_MB} MiB limit all read their 413`, async () => {
    const outcomes = await everyClientGets(requestHead('/v1/spaces', BODY_BYTES, `Bearer ${rootKey}`), BODY_BYTES)
    expect(outcomes).toEqual(Array(CLIENTS).fill({ status: 413, error: undefined }))
  })

  // A client that keeps its half of the connection open after the server's FIN (Node's default
  // closes on FIN, which is what a lingering close counts on) and sends without end.
  if (!overTls)
    it('a client that never stops sending is closed a few seconds after its answer, and others are served meanwhile', async () => {
      let answeredAt = 0
      let livezMs = Number.POSITIVE_INFINITY
      let received = ''
      const closed = new Promise<void>((resolve) => {
        const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
          socket.write(requestHead('/v1/spaces', 900 * MB))
          const chunk = Buffer.alloc(64 * 1024, 'a')
          const pump = () => {
            while (socket.writable && socket.write(chunk)) {}
          }
          socket.on('drain', pump)
          pump()
        })
        socket.on('data', (data: Buffer) => {
          received += data.toString('latin1')
          if (answeredAt) return
          answeredAt = Date.now()
          const asked = Date.now()
          void httpRequest(`${server.restUrl}/livez`).then(() => {
            livezMs = Date.now() - asked
          })
        })
        socket.on('error', () => {})
        socket.on('close', () => resolve())
      })
      await closed
      expect(received).toMatch(/^HTTP\/1\.1 413 /)
      expect(Date.now() - answeredAt).toBeLessThan(LINGER_BOUND_MS)
      expect(livezMs).toBeLessThan(LINGER_BOUND_MS)
    })
})
