// How REST reads request bodies: the API key is checked from
// the headers before a body is read, a request without one may send at most 16 KiB, a
// declared length over the limit is refused from the headers, and a JSON body must be UTF-8,
// JSON-typed and at most MAX_JSON_DEPTH deep: each refusal is a 4xx naming what was wrong,
// with no stack trace in the log.
import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UNAUTHENTICATED_BODY_LIMIT_BYTES } from '../../src/transport/rest/request-body.js'
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from '../../src/transport/rest/request-input.js'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { exchangeRaw, rawRequest } from '../support/raw-http.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const MB = 1024 * 1024
const BODY_LIMIT_MB = 64
const RSS_BODIES = 4
const RSS_BODY_BYTES = 48 * MB
/** The route that takes the largest bodies (MEMORY_BATCH_REQUEST_BYTES, 64 MiB); the others refuse these sizes from the headers. */
const LARGE_BODY_ROUTE = '/v1/memories:batchCreate'

describe('REST request bodies', () => {
  let server: TestServer
  let port: number
  let rootKey: string
  const withKey = (extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${rootKey}`,
    'content-type': 'application/json',
    ...extra,
  })
  const send = (bytes: Buffer | Buffer[], waitMs = 5_000) => exchangeRaw(port, bytes, { waitMs, expectResponses: 1 })
  const errorOf = (received: string) => JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)).error

  beforeAll(async () => {
    server = await startTestServer({ engine: ENGINES[0]!, flags: { 'grpc-max-message-size-mb': BODY_LIMIT_MB } })
    port = Number(new URL(server.restUrl).port)
    rootKey = (await httpRequest(`${server.restUrl}/v1/system/init`, { method: 'POST' })).json().rootApiKey
  })
  afterAll(async () => {
    await server?.stop()
    expect(server.logs.filter((line) => line.includes('stack='))).toEqual([])
  })

  describe('authentication before the body', () => {
    it.each([
      ['no Authorization header', {}],
      ['a forged key', { authorization: `Bearer msk_${'Q'.repeat(40)}` }],
      ['a malformed header', { authorization: 'Basic Zm9vOmJhcg==' }],
    ])('%s on a protected route: 401 while a 60 MiB body is still unsent, connection closed', async (_, headers) => {
      const head = rawRequest('POST', LARGE_BODY_ROUTE, {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(60 * MB),
      })
      const reply = await send(Buffer.concat([head, Buffer.alloc(64 * 1024, 'a')]))
      expect(reply.statuses).toEqual([401])
      expect(errorOf(reply.received).status).toBe('UNAUTHENTICATED')
      expect(reply.closed || (await send(rawRequest('GET', '/livez'))).statuses[0] === 200).toBe(true)
    })

    it('a valid key: the same route reads the body and answers from it', async () => {
      const reply = await send(
        rawRequest('POST', '/v1/apikeys', withKey(), JSON.stringify({ labels: { read: 'yes' } })),
      )
      expect(reply.statuses).toEqual([201])
    })

    it(`without a key a request may send ${UNAUTHENTICATED_BODY_LIMIT_BYTES} bytes: 413 above, declared or streamed`, async () => {
      const declared = await send(
        rawRequest('POST', '/v1/system/init', { 'content-length': String(UNAUTHENTICATED_BODY_LIMIT_BYTES + 1) }),
      )
      expect(declared.statuses).toEqual([413])
      const chunk = UNAUTHENTICATED_BODY_LIMIT_BYTES + 1
      const streamed = await send(
        Buffer.concat([
          rawRequest('POST', '/v1/system/init', { 'transfer-encoding': 'chunked' }),
          Buffer.from(`${chunk.toString(16)}\r\n`),
          Buffer.alloc(chunk, 'a'),
        ]),
      )
      expect(streamed.statuses).toEqual([413])
      const unknownRoute = await send(rawRequest('POST', '/v1/nothing-here', {}, Buffer.alloc(chunk, 'a')))
      expect(unknownRoute.statuses).toEqual([413])
      const atTheCap = await send(
        rawRequest('POST', '/v1/nothing-here', {}, Buffer.alloc(UNAUTHENTICATED_BODY_LIMIT_BYTES, 'a')),
      )
      expect(atTheCap.statuses).toEqual([404])
    })

    it('a declared Content-Length over the limit: 413 from the headers up to 9 digits; from 10 digits uWS answers 400 and closes before any handler runs', async () => {
      for (const length of [String(BODY_LIMIT_MB * MB + 1), '999999999']) {
        const reply = await send(rawRequest('POST', '/v1/users', withKey({ 'content-length': length })))
        expect(reply.statuses, length).toEqual([413])
        expect(errorOf(reply.received).message, length).toContain(length)
      }
      for (const length of ['1000000000', '9999999999', '18446744073709551616', '9'.repeat(40)]) {
        const reply = await send(rawRequest('POST', '/v1/users', withKey({ 'content-length': length })))
        // Never held open: uWS's parser refuses a length it cannot hold with 400 and Connection: close.
        expect(reply.closed || [400, 413].includes(reply.statuses[0]!), length).toBe(true)
        expect(
          reply.statuses.every((status) => status < 500),
          length,
        ).toBe(true)
      }
    })

    it(`${RSS_BODIES} unauthenticated ${RSS_BODY_BYTES / MB} MiB bodies leave the server's memory where it was`, async () => {
      const body = Buffer.alloc(RSS_BODY_BYTES, 'a')
      global.gc?.()
      const before = process.memoryUsage().rss
      let peak = before
      await Promise.all(
        Array.from({ length: RSS_BODIES }, async () => {
          const reply = await send(
            [
              rawRequest('POST', LARGE_BODY_ROUTE, {
                'content-type': 'application/json',
                'content-length': String(RSS_BODY_BYTES),
              }),
              body,
            ],
            30_000,
          )
          peak = Math.max(peak, process.memoryUsage().rss)
          expect(reply.statuses).toEqual([401])
        }),
      )
      const after = process.memoryUsage().rss
      const mib = (bytes: number) => `${(bytes / MB).toFixed(0)} MiB`
      console.log(
        `RSS with ${RSS_BODIES} unauthenticated ${mib(RSS_BODY_BYTES)} bodies: before ${mib(before)}, peak ${mib(peak)}, after ${mib(after)}`,
      )
      // This process is client and server; the client shares one body buffer, so what grows is the server's share.
      expect(after - before).toBeLessThan(RSS_BODY_BYTES)
    })
  })

  describe('JSON bodies', () => {
    const nested = (depth: number) => `{"labels":${'['.repeat(depth)}${']'.repeat(depth)}}`

    it(`nested 2,000 deep: 400 naming body with a key, 401 without (never parsed); ${MAX_JSON_DEPTH} levels still parse`, async () => {
      const withCredentials = await send(rawRequest('POST', '/v1/apikeys', withKey(), nested(2_000)))
      expect(withCredentials.statuses).toEqual([400])
      expect(errorOf(withCredentials.received).details).toEqual([
        { field: 'body', description: `is nested more than ${MAX_JSON_DEPTH} levels deep` },
      ])
      const withoutCredentials = await send(
        rawRequest('POST', '/v1/apikeys', { 'content-type': 'application/json' }, nested(2_000)),
      )
      expect(withoutCredentials.statuses).toEqual([401])
      const deepest = await send(rawRequest('POST', '/v1/apikeys', withKey(), nested(MAX_JSON_DEPTH - 1)))
      expect(errorOf(deepest.received).details[0].field).toMatch(/^labels/)
      const inString = await send(
        rawRequest('POST', '/v1/apikeys', withKey(), JSON.stringify({ labels: { brackets: '[{'.repeat(50) } })),
      )
      expect(inString.statuses).toEqual([201])
    })

    it(`more than ${MAX_JSON_MEMBERS} object members: 400 naming body before parsing; colons inside strings do not count`, async () => {
      const members = (count: number) =>
        JSON.stringify({ labels: Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, 'v'])) })
      const tooMany = await send(rawRequest('POST', '/v1/apikeys', withKey(), members(MAX_JSON_MEMBERS)))
      expect(errorOf(tooMany.received).details).toEqual([
        { field: 'body', description: `has more than ${MAX_JSON_MEMBERS} object members` },
      ])
      const atTheCap = await send(rawRequest('POST', '/v1/apikeys', withKey(), members(MAX_JSON_MEMBERS - 1)))
      expect(errorOf(atTheCap.received).details).toEqual([{ field: 'labels', description: 'at most 20 labels' }])
      const colonsInStrings = await send(
        rawRequest('POST', '/v1/apikeys', withKey(), JSON.stringify({ labels: { colons: ':'.repeat(200) } })),
      )
      expect(colonsInStrings.statuses).toEqual([201])
    })

    it.each([
      ['a lone continuation byte', [0x80]],
      ['0xFF', [0xff]],
      ['an overlong "/"', [0xc0, 0xaf]],
      ['an encoded surrogate', [0xed, 0xa0, 0x80]],
      ['a truncated sequence', [0xe2, 0x82]],
    ])('invalid UTF-8 (%s): 400 naming body, nothing stored', async (_, bytes) => {
      const label = `bad-${crypto.randomUUID()}`
      const body = Buffer.concat([
        Buffer.from(`{"labels":{"case":"${label}","v":"x`),
        Buffer.from(bytes),
        Buffer.from('"}}'),
      ])
      const reply = await send(rawRequest('POST', '/v1/apikeys', withKey(), body))
      expect(reply.statuses).toEqual([400])
      expect(errorOf(reply.received).details).toEqual([{ field: 'body', description: 'is not valid UTF-8' }])
      const listed = await httpRequest(`${server.restUrl}/v1/apikeys?label.case=${label}`, { headers: withKey() })
      expect(listed.json().keys).toEqual([])
    })

    it.each([
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'text/json',
    ])('a body sent as %s: 415 naming content-type', async (contentType) => {
      const reply = await send(rawRequest('POST', '/v1/apikeys', withKey({ 'content-type': contentType }), '{}'))
      expect(reply.statuses).toEqual([415])
      expect(errorOf(reply.received)).toMatchObject({
        status: 'UNSUPPORTED_MEDIA_TYPE',
        details: [{ field: 'content-type' }],
      })
    })

    it.each([
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
    ])('a body sent as %s is read', async (contentType) => {
      const reply = await send(rawRequest('POST', '/v1/apikeys', withKey({ 'content-type': contentType }), '{}'))
      expect(reply.statuses).toEqual([201])
    })

    it('no content type at all: read as JSON (what curl --data-raw with -H omitted and most clients send is still accepted)', async () => {
      const reply = await send(rawRequest('POST', '/v1/apikeys', { authorization: `Bearer ${rootKey}` }, '{}'))
      expect(reply.statuses).toEqual([201])
    })

    it('a key given twice: the last one wins, as JSON.parse reads it', async () => {
      const reply = await send(
        rawRequest('POST', '/v1/apikeys', withKey(), '{"labels":{"twice":"first"},"labels":{"twice":"last"}}'),
      )
      expect(reply.statuses).toEqual([201])
      expect(reply.received).toContain('"twice":"last"')
    })

    it('a Content-Length shorter than the body: the route answers the truncated body (400), the rest is not a 5xx', async () => {
      const body = JSON.stringify({ labels: { cut: 'here' } })
      const reply = await exchangeRaw(
        port,
        rawRequest('POST', '/v1/apikeys', withKey({ 'content-length': String(body.length - 5) }), body),
        { waitMs: 2_000 },
      )
      expect(reply.statuses[0]).toBe(400)
      expect(reply.statuses.every((status) => status < 500)).toBe(true)
    })

    it('a Content-Length longer than the body: no answer until the rest comes, and other clients are served meanwhile', async () => {
      const waiting = exchangeRaw(port, rawRequest('POST', '/v1/apikeys', withKey({ 'content-length': '100' }), '{}'), {
        waitMs: 1_000,
      })
      expect((await httpRequest(`${server.restUrl}/readyz`)).status).toBe(200)
      expect((await waiting).statuses).toEqual([])
    })
  })
})
