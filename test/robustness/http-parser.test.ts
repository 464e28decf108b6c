// What the REST port's HTTP parser (uWebSockets.js, compiled from third_party with the
// changes in its NOTES.md) answers to valid-but-odd and malformed requests, sent as raw
// bytes. Each must be answered, not held open until the idle timeout (the old addon held
// such connections 8–12 s and closed them without a word).
// The parser is the same whatever the database, so one engine is enough.
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { sendRawRequest } from '../support/http-client.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

/** An answer must come at once; the old behaviour was silence until the 10 s idle timeout. */
const ANSWER_WITHIN_MS = 1000
/** uWS keeps up to 100 header slots (request line and terminator included). */
const MANY_HEADERS = 60
const TOO_MANY_HEADERS = 120

interface RawCase {
  name: string
  request: string
  status: number
}

const headers = (count: number) =>
  Array.from({ length: count }, (_, index) => `x-filler-${index}: ${index}\r\n`).join('')

/** Requests the parser must refuse with 4xx. */
const REFUSED: RawCase[] = [
  {
    name: 'a folded (obs-fold) header line',
    request: 'GET /livez HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n two\r\n\r\n',
    status: 400,
  },
  {
    name: 'a header line without a colon',
    request: 'GET /livez HTTP/1.1\r\nHost: a\r\nno-colon-here\r\n\r\n',
    status: 400,
  },
  { name: 'the asterisk target', request: 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n', status: 400 },
  { name: 'an absolute-URI target', request: 'GET http://a/livez HTTP/1.1\r\nHost: a\r\n\r\n', status: 400 },
  { name: 'an HTTP version other than 1.0 and 1.1', request: 'GET /livez HTTP/1.2\r\nHost: a\r\n\r\n', status: 400 },
  {
    name: 'an invalid chunk size',
    request: 'POST /v1/users HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n',
    status: 400,
  },
  {
    name: 'a malformed Content-Length',
    request: 'POST /v1/users HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\nab',
    status: 400,
  },
  {
    name: 'a negative Content-Length',
    request: 'POST /v1/users HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n',
    status: 400,
  },
  { name: 'two Host headers', request: 'GET /livez HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', status: 400 },
  {
    name: 'two differing Content-Lengths',
    request: 'POST /v1/users HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
    status: 400,
  },
  {
    name: 'two equal Content-Lengths',
    request: 'POST /v1/users HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab',
    status: 400,
  },
  {
    name: 'Content-Length together with Transfer-Encoding',
    request: 'POST /v1/users HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\nab',
    status: 400,
  },
  { name: 'HTTP/1.1 without Host', request: 'GET /livez HTTP/1.1\r\n\r\n', status: 400 },
  {
    name: `${TOO_MANY_HEADERS} headers`,
    request: `GET /livez HTTP/1.1\r\nHost: a\r\n${headers(TOO_MANY_HEADERS)}\r\n`,
    status: 431,
  },
]

/** Requests that are odd but valid: served. */
const SERVED: RawCase[] = [
  {
    name: 'HTTP/1.0 GET /livez without Host (as health checkers send it)',
    request: 'GET /livez HTTP/1.0\r\n\r\n',
    status: 200,
  },
  { name: 'HTTP/1.0 GET /livez with Host', request: 'GET /livez HTTP/1.0\r\nHost: a\r\n\r\n', status: 200 },
  {
    name: `${MANY_HEADERS} headers before Host`,
    request: `GET /livez HTTP/1.1\r\n${headers(MANY_HEADERS)}Host: a\r\n\r\n`,
    status: 200,
  },
  {
    name: `${MANY_HEADERS} headers after Host`,
    request: `GET /livez HTTP/1.1\r\nHost: a\r\n${headers(MANY_HEADERS)}\r\n`,
    status: 200,
  },
]

describe('REST HTTP parser: odd and malformed requests are answered at once', () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startTestServer({ engine: ENGINES[0]! })
  })
  afterAll(async () => {
    await server?.stop()
  })

  const send = (request: string) =>
    sendRawRequest(server.restUrl, Buffer.from(request, 'latin1'), { timeoutMs: ANSWER_WITHIN_MS })

  it.each(REFUSED)('refuses $name with $status', async ({ request, status }) => {
    const response = await send(request)
    expect(response.status).toBe(status)
    expect(response.headers.connection).toBe('close')
  })

  it.each(SERVED)('serves $name', async ({ request, status }) => {
    const response = await send(request)
    expect(response.status).toBe(status)
    expect(JSON.parse(response.body)).toMatchObject({ state: 'READY' })
  })

  it('closes an HTTP/1.0 connection after the response, as HTTP/1.0 clients expect', async () => {
    // sendRawRequest settles on the close as well as on a complete body; a server that
    // kept the connection open would still settle, so watch for the close itself.
    const closedAfterAnswer = await new Promise<boolean>((resolve, reject) => {
      const target = new URL(server.restUrl)
      const socket = net.connect(Number(target.port), target.hostname, () =>
        socket.write('GET /livez HTTP/1.0\r\n\r\n'),
      )
      let answered = false
      const timer = setTimeout(() => {
        socket.destroy()
        resolve(false)
      }, ANSWER_WITHIN_MS)
      socket.on('data', (chunk: Buffer) => (answered ||= chunk.toString('latin1').startsWith('HTTP/1.1 200')))
      socket.on('close', () => {
        clearTimeout(timer)
        resolve(answered)
      })
      socket.on('error', reject)
    })
    expect(closedAfterAnswer).toBe(true)
  })

  it('still serves a normal request on a fresh connection after all of the above', async () => {
    const response = await send('GET /livez HTTP/1.1\r\nHost: a\r\n\r\n')
    expect(response.status).toBe(200)
  })
})
