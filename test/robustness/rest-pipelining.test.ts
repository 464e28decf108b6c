// Pipelined requests that touch the database.
//
// Upstream uWS closes a connection as soon as it parses a request behind one whose response is
// still pending, before any JavaScript sees the second request. The addon we compile holds such
// requests and parses them once the pending response ends (third_party/uWebSockets.js/NOTES.md,
// change 6; test/robustness/uws-async-pipelining.test.ts tests the addon itself), so pipelines are
// answered in order. The REST wrapper still starts a request with side effects only after uWS
// has parsed everything read with it: a malformed request later in the same read makes uWS close
// the connection, and work begun before that would take effect with no one to tell.
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { bodiesIn, exchangeRaw, rawRequest } from '../support/raw-http.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const PIPELINED_CREATES = 10
const INFO_ROUNDS = 60

describe('pipelined REST requests', () => {
  let server: TestServer
  let port: number
  let rootKey: string
  const authorised = () => ({ authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' })
  const keyCount = async () =>
    (await httpRequest(`${server.restUrl}/v1/apikeys?maxResults=100`, { headers: authorised() })).json().keys
      .length as number

  beforeAll(async () => {
    server = await startTestServer({ engine: ENGINES[0]! })
    port = Number(new URL(server.restUrl).port)
    rootKey = (await httpRequest(`${server.restUrl}/v1/system/init`, { method: 'POST' })).json().rootApiKey
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('ten pipelined creates: every key the server made was delivered to the client (none created unseen)', async () => {
    const before = await keyCount()
    const creates = Array.from({ length: PIPELINED_CREATES }, (_, index) =>
      rawRequest('POST', '/v1/apikeys', authorised(), JSON.stringify({ labels: { pipelined: String(index) } })),
    )
    const reply = await exchangeRaw(port, Buffer.concat(creates), { expectResponses: PIPELINED_CREATES })
    const delivered = reply.statuses.filter((status) => status === 201).length
    expect(await keyCount()).toBe(before + delivered)
    expect(delivered).toBe(PIPELINED_CREATES)
  })

  it('after a pipeline, the server answers normally on a new connection', async () => {
    const info = rawRequest('GET', '/v1/system/info')
    await exchangeRaw(port, Buffer.concat([info, info]), { expectResponses: 2 })
    expect((await httpRequest(`${server.restUrl}/v1/system/info`)).status).toBe(200)
  })

  it('a synchronous route answers a pipeline in order', async () => {
    const probes = ['/livez', '/readyz', '/startupz'].map((path) => rawRequest('GET', path))
    const reply = await exchangeRaw(port, Buffer.concat(probes), { expectResponses: 3 })
    expect(reply.statuses).toEqual([200, 200, 200])
    const bodies = [...reply.received.matchAll(/\r\n\r\n(\{[^}]*\})/g)].map(
      (match) => Object.keys(JSON.parse(match[1]!))[0],
    )
    expect(bodies).toEqual(['state', 'ready', 'started'])
  })

  it(`two pipelined GET /v1/system/info are answered in order, ${INFO_ROUNDS} connections`, async () => {
    const info = rawRequest('GET', '/v1/system/info')
    let answered = 0
    for (let round = 0; round < INFO_ROUNDS; round++) {
      const reply = await exchangeRaw(port, Buffer.concat([info, info]), { expectResponses: 2 })
      expect(reply.statuses).toEqual([200, 200])
      answered += reply.statuses.length
    }
    console.log(
      `pipelined GET /v1/system/info: ${answered} of ${2 * INFO_ROUNDS} answered over ${INFO_ROUNDS} connections`,
    )
  })

  it('ten pipelined creates are all answered, in order, each with its one-time raw key', async () => {
    const creates = Array.from({ length: PIPELINED_CREATES }, (_, index) =>
      rawRequest('POST', '/v1/apikeys', authorised(), JSON.stringify({ labels: { order: String(index) } })),
    )
    const reply = await exchangeRaw(port, Buffer.concat(creates), { expectResponses: PIPELINED_CREATES })
    expect(reply.statuses).toEqual(Array(PIPELINED_CREATES).fill(201))
    const created = bodiesIn(reply.received).map((body) => JSON.parse(body))
    expect(created.map((key) => Number(key.apiKeyMetadata.labels.order))).toEqual([...Array(PIPELINED_CREATES).keys()])
    const rawKeys = created.map((key) => key.rawApiKey as string)
    expect(rawKeys.every((rawKey) => rawKey.length > 0)).toBe(true)
    expect(new Set(rawKeys).size).toBe(PIPELINED_CREATES)
  })

  it('a POST with a body pipelined behind a GET that reads the database is answered second, with its body applied', async () => {
    const reply = await exchangeRaw(
      port,
      Buffer.concat([
        rawRequest('GET', '/v1/system/info'),
        rawRequest('POST', '/v1/apikeys', authorised(), JSON.stringify({ labels: { behind: 'info' } })),
      ]),
      { expectResponses: 2 },
    )
    expect(reply.statuses).toEqual([200, 201])
    expect(reply.received).toContain('"behind":"info"')
  })

  it('a client that closes mid-pipeline: the server stays up and answers the next connection', async () => {
    const info = rawRequest('GET', '/v1/system/info')
    const create = rawRequest(
      'POST',
      '/v1/apikeys',
      authorised(),
      JSON.stringify({ labels: { closed: 'mid-pipeline' } }),
    )
    for (let round = 0; round < 5; round++) {
      await new Promise<void>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(Buffer.concat([info, create, info, create]))
          socket.destroy()
          resolve()
        })
        socket.on('error', () => {})
      })
    }
    const reply = await exchangeRaw(port, Buffer.concat([info, info]), { expectResponses: 2 })
    expect(reply.statuses).toEqual([200, 200])
  })
})
