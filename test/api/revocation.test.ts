import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AUTH_CACHE_TTL_MS } from '../../src/domain/auth.js'
import { ApiClient, TRANSPORTS } from '../support/api-client.js'
import { createSandbox, type Sandbox, ServerProcess } from '../support/executable.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { TEST_ENCRYPTION_KEY_FILE } from '../support/test-server.js'
import { waitFor } from '../support/wait.js'

const TRIALS_PER_WRITE = 10

/**
 * Two server processes on one PostgreSQL database: this test process (A) and the
 * built executable (B). Keys are used on B until B has cached them, then
 * deactivated or deleted through A; B must refuse them.
 */
describe('revocation across server processes (postgresql)', () => {
  let fixture: IdentityFixture
  let sandbox: Sandbox
  let processB: ServerProcess
  let clientB: ApiClient

  beforeAll(async () => {
    fixture = await startIdentityFixture('postgresql')
    sandbox = createSandbox()
    processB = ServerProcess.start(sandbox, [
      '--db-url',
      fixture.server.database!.jdbcUrl,
      '--tls-disabled',
      '--rest-port',
      '0',
      '--grpc-port',
      '0',
      '--bind-address',
      '127.0.0.1',
      '--data-dir',
      sandbox.makeDir('data'),
      // Servers sharing a database share its encryption key.
      '--encryption-key-file',
      TEST_ENCRYPTION_KEY_FILE,
    ])
    await processB.waitForReady()
    const listening = await processB.listening()
    clientB = new ApiClient({ restUrl: processB.restBase, grpcAddress: `127.0.0.1:${listening.grpcPort}` })
    await processB.waitForLog(/listening for API key changes/)
  })

  afterAll(async () => {
    clientB?.close()
    await processB?.stop()
    sandbox?.remove()
    await fixture?.stop()
  })

  const warmOnB = async (apiKey: string) => {
    for (const transport of TRANSPORTS) expect((await clientB.call(transport, 'getMe', {}, apiKey)).status).toBe('OK')
  }

  /** Milliseconds from A's write response until B refuses the key; also whether B's very next request already did. */
  const measure = async (apiKey: string, write: () => Promise<void>) => {
    await warmOnB(apiKey)
    await write()
    const written = performance.now()
    const first = await clientB.call('rest', 'getMe', {}, apiKey)
    await waitFor(
      'process B to refuse the key',
      async () => (await clientB.call('rest', 'getMe', {}, apiKey)).status === 'UNAUTHENTICATED',
      {
        timeoutMs: AUTH_CACHE_TTL_MS,
        intervalMs: 1,
      },
    )
    return { nextRequestRefused: first.status === 'UNAUTHENTICATED', refusedAfterMs: performance.now() - written }
  }

  it('a key deactivated or deleted on A is refused by B, well inside the cache bound', async () => {
    const results: Array<{ write: string; nextRequestRefused: boolean; refusedAfterMs: number }> = []
    for (let trial = 0; trial < TRIALS_PER_WRITE; trial++) {
      const deactivated = await fixture.newKey(fixture.alice)
      results.push({
        write: 'deactivate',
        ...(await measure(deactivated.apiKey, async () => {
          const result = await fixture.call(
            'rest',
            'updateApiKey',
            { apiKeyId: deactivated.apiKeyId, status: 'INACTIVE' },
            fixture.alice.apiKey,
          )
          expect(result.status).toBe('OK')
        })),
      })
      const deleted = await fixture.newKey(fixture.alice)
      results.push({
        write: 'delete',
        ...(await measure(deleted.apiKey, async () => {
          const result = await fixture.call(
            'grpc',
            'deleteApiKey',
            { apiKeyId: deleted.apiKeyId },
            fixture.alice.apiKey,
          )
          expect(result.status).toBe('OK')
        })),
      })
    }
    const worst = Math.max(...results.map((result) => result.refusedAfterMs))
    const immediate = results.filter((result) => result.nextRequestRefused).length
    process.stdout.write(
      `revocation across processes: ${immediate}/${results.length} refused on B's very next request; ` +
        `worst ${worst.toFixed(1)} ms after A's response (bound ${AUTH_CACHE_TTL_MS} ms)\n`,
    )
    // A answers only after every listening server confirmed the eviction.
    expect(immediate).toBe(results.length)
  })

  it('while B’s change feed is down, B does not serve keys from its cache', async () => {
    const key = await fixture.newKey(fixture.alice)
    await warmOnB(key.apiKey)
    const admin = postgres(fixture.server.database!.url, { max: 1, onnotice: () => {} })
    try {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name like ${`memsvc-listen-${processB.pid}-%`}`
    } finally {
      await admin.end()
    }
    await processB.waitForLog(/API key change feed down/)
    await fixture.call('rest', 'updateApiKey', { apiKeyId: key.apiKeyId, status: 'INACTIVE' }, fixture.alice.apiKey)
    expect((await clientB.call('rest', 'getMe', {}, key.apiKey)).status).toBe('UNAUTHENTICATED')
    // The feed comes back by itself.
    await waitFor(
      'the feed to come back',
      () => processB.logs.filter((line) => /listening for API key changes/.test(line)).length >= 2,
    )
  })
})
