import postgres from 'postgres'
import { afterEach, describe, expect, it } from 'vitest'
import { TRANSPORTS } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { HealthProbe, ServingStatus } from '../support/grpc-clients.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { waitFor } from '../support/wait.js'

const started: IdentityFixture[] = []
async function freshServer(engine: (typeof ENGINES)[number]): Promise<IdentityFixture> {
  const fixture = await startIdentityFixture(engine)
  started.push(fixture)
  return fixture
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((fixture) => fixture.stop()))
})

const readyz = async (fixture: IdentityFixture) => (await fetch(`${fixture.server.restUrl}/readyz`)).status
const livez = async (fixture: IdentityFixture) =>
  (await (await fetch(`${fixture.server.restUrl}/livez`)).json()) as { state: string }

describe.each(ENGINES)('drain (%s)', (engine) => {
  it.each(TRANSPORTS)('needs DRAIN_SERVER over %s: 401 without a key, 403 for a user', async (transport) => {
    const fixture = await freshServer(engine)
    expect((await fixture.call(transport, 'drain', {}, undefined)).status).toBe('UNAUTHENTICATED')
    expect((await fixture.call(transport, 'drain', {}, fixture.alice.apiKey)).status).toBe('PERMISSION_DENIED')
    expect((await fixture.call(transport, 'drain', { timeoutSec: -1 }, fixture.root.apiKey)).fields).toContain(
      'timeoutSec',
    )
    expect(fixture.server.server.lifecycle.state).toBe('READY')
  })

  it.each(TRANSPORTS)(
    'over %s: readiness and health flip, new requests are refused, it quiesces, and a second call reports the state',
    async (transport) => {
      const fixture = await freshServer(engine)
      const health = new HealthProbe({ address: fixture.server.grpcAddress })
      const watch = health.watch()
      await watch.waitFor(ServingStatus.SERVING)
      const result = await fixture.call(
        transport,
        'drain',
        { reason: 'test', waitForQuiesce: true, timeoutSec: 10 },
        fixture.root.apiKey,
      )
      expect(result.status).toBe('OK')
      expect(result.body).toMatchObject({ state: 'QUIESCED', quiesced: true })
      expect(await readyz(fixture)).toBe(503)
      expect(await livez(fixture)).toEqual({ state: 'QUIESCED' })
      expect(await health.check()).toBe(ServingStatus.NOT_SERVING)
      await watch.waitFor(ServingStatus.NOT_SERVING)
      for (const other of TRANSPORTS)
        expect((await fixture.call(other, 'getMe', {}, fixture.alice.apiKey)).status).toBe('UNAVAILABLE')
      const again = await fixture.call(transport, 'drain', {}, fixture.root.apiKey)
      expect(again.body).toMatchObject({ state: 'QUIESCED', quiesced: true })
      watch.cancel()
      health.client.close()
    },
  )
})

describe('drain under load (postgresql)', () => {
  it('lets requests already accepted on both transports finish, refuses new ones only after readiness flipped, then quiesces', async () => {
    const fixture = await freshServer('postgresql')
    // Hold requests in flight deterministically: a lock they must wait for.
    const locker = postgres(fixture.server.database!.url, { max: 1, onnotice: () => {} })
    const timeline: Array<[string, number]> = []
    const t0 = performance.now()
    const mark = (event: string) => timeline.push([event, Math.round(performance.now() - t0)])
    try {
      // Fresh keys are not in the auth cache yet, so requests with them must read api_keys and wait for the lock.
      const holders = [await fixture.newKey(fixture.alice), await fixture.newKey(fixture.bob)]
      await locker`begin`
      await locker`lock table api_keys in access exclusive mode`
      const inFlight = TRANSPORTS.flatMap((transport) =>
        holders.map((key) =>
          fixture.call(transport, 'listApiKeys', {}, key.apiKey).then((result) => {
            mark(`in-flight ${transport} request finished`)
            return result
          }),
        ),
      )
      await waitFor('4 requests in flight', () => fixture.server.server.lifecycle.inFlight === 4)
      mark('4 requests in flight')

      const drain = fixture.call(
        'rest',
        'drain',
        { reason: 'load test', waitForQuiesce: true, timeoutSec: 30 },
        fixture.root.apiKey,
      )
      await waitFor('readiness to flip', async () => (await readyz(fixture)) === 503, { intervalMs: 5 })
      mark('readiness flipped (readyz 503)')
      expect((await livez(fixture)).state).toBe('DRAINING')
      const refused = await fixture.call('grpc', 'getSystemInfo', {})
      expect(refused.status).toBe('UNAVAILABLE')
      mark('new request refused (UNAVAILABLE)')
      const early = await fixture.call('rest', 'drain', { waitForQuiesce: true, timeoutSec: 0 }, fixture.root.apiKey)
      expect(early.body).toMatchObject({ state: 'DRAINING', quiesced: false })

      await locker`rollback`
      mark('lock released')
      const results = await Promise.all(inFlight)
      for (const result of results) expect(result.status).toBe('OK')
      const drained = await drain
      mark('QUIESCED (drain call returned)')
      expect(drained.body).toMatchObject({ state: 'QUIESCED', quiesced: true })
      process.stdout.write(
        `drain timeline (ms since start):\n${timeline.map(([event, at]) => `  ${String(at).padStart(6)}  ${event}`).join('\n')}\n`,
      )
      const logLines = fixture.server.logs.filter((line) => /drain/.test(line))
      process.stdout.write(`${logLines.join('\n')}\n`)
    } finally {
      await locker.end()
    }
  })
})
