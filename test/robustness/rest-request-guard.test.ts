// Nothing a request does may end the process: a malformed
// percent escape in a route parameter answers 400 naming it, and whatever is thrown on the
// request path (a synchronous throw, a rejected promise, a body that cannot be serialised)
// becomes one logged 500 carrying the request id. Both walk every route the REST server
// registers, so a route added later is covered without editing this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServerContext } from '../../src/domain/context.js'
import { Lifecycle } from '../../src/lifecycle/lifecycle.js'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { pathFor, registeredRestRoutes, restServerOver, sendsBody } from '../support/rest-routes.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const SAMPLE_ID = '7f4f1c2e-3b7a-4d47-9a55-2f1f0f5b9c11'
/** A raw-key-shaped credential: it must never reach a log line. */
const FORGED_KEY = `msk_${'Z'.repeat(40)}`

/**
 * Routes that never touch the server context: the console's static files, the OpenAPI document,
 * /metrics (its own secret) and the probes (they read the lifecycle the routes were given when registered).
 */
const CONTEXT_FREE = new Set(['/livez', '/readyz', '/startupz', '/metrics', '/v1/openapi.json'])
const touchesContext = (pattern: string) => !pattern.startsWith('/console') && !CONTEXT_FREE.has(pattern)

type Trap = 'throw' | 'bigint' | 'cyclic'

/**
 * A REST server wired exactly as `serve` wires it, to a server context (and its facts, as the
 * routes see them) that is booby-trapped once armed: every property read then throws, or hands
 * back a value JSON cannot serialise. The server's own lifecycle stays real and READY.
 */
function trappedRestServer(logs: string[]) {
  let trap: Trap | undefined
  const trapped = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, property) {
        if (trap === undefined) {
          const value = Reflect.get(object, property, object)
          return property === 'facts' ? trapped(value as object) : value
        }
        if (trap === 'throw') throw new TypeError(`trapped read of ${String(property)}`)
        if (trap === 'bigint') return 10n
        const cyclic: Record<string, unknown> = {}
        cyclic.self = cyclic
        return cyclic
      },
    })
  const lifecycle = new Lifecycle()
  lifecycle.setDatabaseReachable(true)
  lifecycle.transition('READY')
  const http = restServerOver({
    lifecycle,
    log: (line) => logs.push(line),
    wrap: (server: ServerContext) => trapped(server),
  })
  return { http, arm: (next: Trap) => (trap = next) }
}

describe('last-resort guard on every REST route', () => {
  const logs: string[] = []
  const { http, arm } = trappedRestServer(logs)
  let baseUrl: string

  beforeAll(async () => {
    baseUrl = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}`
  })
  afterAll(() => http.close())

  it.each<Trap>(['throw', 'bigint', 'cyclic'])(
    'a domain that fails (%s) gives 500 with the request id, logged once without the key',
    async (trap) => {
      arm(trap)
      const routes = http.routes.filter((route) => touchesContext(route.pattern))
      expect(routes.length).toBeGreaterThanOrEqual(24)
      for (const [index, { method, pattern }] of routes.entries()) {
        const requestId = `guard-${trap}-${index}`
        const response = await httpRequest(`${baseUrl}${pathFor({ method, pattern }, SAMPLE_ID)}`, {
          method,
          headers: {
            'x-request-id': requestId,
            authorization: `Bearer ${FORGED_KEY}`,
            'content-type': 'application/json',
          },
          body: sendsBody(method) ? '{"labels":{"a":"b"}}' : undefined,
        })
        const label = `${method} ${pattern}`
        expect(response.status, label).toBe(500)
        expect(response.headers['x-request-id'], label).toBe(requestId)
        expect(response.json().error, label).toMatchObject({
          code: 500,
          status: 'INTERNAL',
          message: 'internal error',
          requestId,
        })
        expect(
          logs.filter((line) => line.includes(`requestId=${requestId} `)),
          label,
        ).toHaveLength(1)
      }
      expect(logs.join('\n')).not.toContain(FORGED_KEY.slice(4))
    },
  )
})

describe('route parameters with a malformed percent escape', () => {
  let server: TestServer
  let rootKey: string
  const parameterised = registeredRestRoutes().filter((route) => route.pattern.includes('/:'))

  beforeAll(async () => {
    server = await startTestServer({ engine: ENGINES[0]! })
    rootKey = (await httpRequest(`${server.restUrl}/v1/system/init`, { method: 'POST' })).json().rootApiKey
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('answer 400 naming the parameter on every parameterised route, and the server keeps serving', async () => {
    expect(parameterised.length).toBeGreaterThanOrEqual(11)
    for (const { method, pattern } of parameterised) {
      for (const badEscape of ['%ZZ', '%', '%E0%A4%A', '%C0%AF', '%ED%A0%80']) {
        const response = await httpRequest(`${server.restUrl}${pathFor({ method, pattern }, badEscape)}`, {
          method,
          headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
          body: sendsBody(method) ? '{}' : undefined,
        })
        const label = `${method} ${pattern} with ${badEscape}`
        expect(response.status, label).toBe(400)
        const parameter = /\/:(\w+)/.exec(pattern)![1]
        expect(response.json().error.details, label).toEqual([
          { field: parameter, description: 'is not a valid percent-encoded path segment' },
        ])
      }
    }
    expect((await httpRequest(`${server.restUrl}/readyz`)).status).toBe(200)
    expect(server.logs.filter((line) => line.includes(' ERROR '))).toEqual([])
  })
})
