import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Transport } from '../support/api-client.js'
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/databases.js'
import { type Actor, type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { FAST_MEMORY_JOBS } from '../support/memory-fixture.js'
import { type ReplicaCluster, startReplicaCluster } from '../support/replica-cluster.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

/**
 * Reads through a real streaming replica of the test cluster (pg_basebackup -R, another
 * port): lag injected with pg_wal_replay_pause(), the replica stopped under load. Server
 * `steady` keeps a paused replica in rotation for a minute (its read-your-writes cases need
 * one that is behind); server `strict`, on the same database, sets a lagging replica aside
 * after a second.
 */
const STEADY_MAX_LAG_MS = 60_000
const STRICT_MAX_LAG_MS = 1_000
const READ_YOUR_WRITES_WAIT_MS = 300
const STATE_TIMEOUT_MS = 20_000
const METRICS_HEADERS = { 'x-service-metrics-key': 'test-metrics-secret' }

interface ReplicaStatusBody {
  name: string
  state: string
  inRotation: boolean
  lagSeconds?: number
  reason?: string
}

async function readyz(
  server: TestServer,
): Promise<{ status: number; body: { ready: boolean; replicas?: ReplicaStatusBody[] } }> {
  const response = await fetch(`${server.restUrl}/readyz`)
  return { status: response.status, body: await response.json() }
}

async function replicaState(server: TestServer, wanted: string): Promise<ReplicaStatusBody> {
  const deadline = Date.now() + STATE_TIMEOUT_MS
  for (;;) {
    const { body } = await readyz(server)
    const replica = body.replicas?.[0]
    if (replica?.state === wanted) return replica
    if (Date.now() > deadline) throw new Error(`replica still ${JSON.stringify(replica)}, wanted ${wanted}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function metric(server: TestServer, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${server.restUrl}/metrics`, { headers: METRICS_HEADERS })).text()
  const line = text.split('\n').find((entry) => entry.startsWith(`${name}{${labels}}`))
  return line ? Number(line.split(' ').at(-1)) : 0
}

describe.skipIf(!ENGINES.includes('postgresql'))('read replicas: a real streaming replica of the test cluster', () => {
  let replica: ReplicaCluster
  let database: TestDatabase
  let fixture: IdentityFixture
  let strict: TestServer
  /** A second process like the fixture's, on the same database: a key's requests may reach either. */
  let peer: TestServer
  let alice: Actor
  /** A second key of alice's that never writes: it reads what the replica has. */
  let aliceReader: Actor

  beforeAll(async () => {
    replica = await startReplicaCluster()
    database = await createTestDatabase()
    const replicaFlags = {
      'db-url': database.jdbcUrl,
      'db-read-url': replica.urlOf(database.name),
      'db-read-your-writes-wait-ms': READ_YOUR_WRITES_WAIT_MS,
    }
    fixture = await startIdentityFixture(
      'postgresql',
      { ...replicaFlags, 'db-read-max-lag-ms': STEADY_MAX_LAG_MS },
      FAST_MEMORY_JOBS,
    )
    peer = await startTestServer({
      engine: 'postgresql',
      database,
      flags: { ...replicaFlags, 'db-read-max-lag-ms': STEADY_MAX_LAG_MS },
    })
    strict = await startTestServer({
      engine: 'postgresql',
      database,
      flags: { ...replicaFlags, 'db-read-max-lag-ms': STRICT_MAX_LAG_MS },
    })
    alice = fixture.alice
    aliceReader = await fixture.newKey(alice)
    await replica.caughtUp()
    await replicaState(fixture.server, 'IN_ROTATION')
    await replicaState(strict, 'IN_ROTATION')
    await replicaState(peer, 'IN_ROTATION')
  }, 120_000)

  afterAll(async () => {
    await strict?.stop()
    await peer?.stop()
    await fixture?.stop()
    await database?.drop()
    await replica?.remove()
  }, 60_000)

  it.each<Transport>(['rest', 'grpc'])(
    'a key reads its own write while the replica is paused (%s); another key reads the replica until it replays',
    async (transport) => {
      await replica.pauseReplay()
      try {
        const created = await fixture.call(transport, 'createSpace', { name: `paused-${transport}` }, alice.apiKey)
        expect(created.status).toBe('OK')
        const spaceId = created.body.spaceId as string
        const fromPrimaryBefore = await metric(fixture.server, 'memsvc_db_reads_total', 'route="primary-own-write"')

        const othersRead = await fixture.call(transport, 'getSpace', { spaceId }, aliceReader.apiKey)
        expect(othersRead.status).toBe('NOT_FOUND')
        const ownRead = await fixture.call(transport, 'getSpace', { spaceId }, alice.apiKey)
        expect(ownRead.status).toBe('OK')
        expect(ownRead.body.name).toBe(`paused-${transport}`)
        const ownList = await fixture.call(transport, 'listSpaces', {}, alice.apiKey)
        expect(ownList.body.spaces.map((space: { spaceId: string }) => space.spaceId)).toContain(spaceId)
        expect(await metric(fixture.server, 'memsvc_db_reads_total', 'route="primary-own-write"')).toBe(
          fromPrimaryBefore + 2,
        )
        // The other process heard that alice writes: her read there waits too, and aliceReader's does not.
        const viaPeer = (apiKey: string) =>
          fetch(`${peer.restUrl}/v1/spaces/${spaceId}`, { headers: { authorization: `Bearer ${apiKey}` } })
        expect((await viaPeer(alice.apiKey)).status).toBe(200)
        expect((await viaPeer(aliceReader.apiKey)).status).toBe(404)
      } finally {
        await replica.resumeReplay()
      }
      await replica.caughtUp()
      const spaces = await fixture.call(transport, 'listSpaces', {}, aliceReader.apiKey)
      expect(spaces.body.spaces.map((space: { name: string }) => space.name)).toContain(`paused-${transport}`)
    },
    30_000,
  )

  it('a key reads its own write from the replica once the replica has replayed it', async () => {
    const space = await fixture.call('rest', 'createSpace', { name: 'replayed' }, alice.apiKey)
    const afterWaitBefore = await metric(fixture.server, 'memsvc_db_reads_total', 'route="replica-after-wait"')
    for (let index = 0; index < 10; index++) {
      const created = await fixture.call(
        'rest',
        'createMemory',
        { spaceId: space.body.spaceId, originalContent: `note ${index} about the replica` },
        alice.apiKey,
      )
      const read = await fixture.call('rest', 'getMemory', { memoryId: created.body.memoryId }, alice.apiKey)
      expect(read.status).toBe('OK')
    }
    expect(await metric(fixture.server, 'memsvc_db_reads_total', 'route="replica-after-wait"')).toBeGreaterThan(
      afterWaitBefore,
    )
  })

  it('a lagging replica leaves the rotation (log, metric, /readyz) and comes back by itself', async () => {
    await replica.pauseReplay()
    let lagging: ReplicaStatusBody
    try {
      // Writes move the primary's WAL on while the replica applies none of it.
      const writing = (async () => {
        for (let index = 0; index < 200; index++) {
          await fixture.call('rest', 'createSpace', { name: `lag-${index}` }, alice.apiKey)
          if ((await readyz(strict)).body.replicas?.[0]?.state === 'LAGGING') return
        }
      })()
      lagging = await replicaState(strict, 'LAGGING')
      await writing
      const probe = await readyz(strict)
      expect(probe.status).toBe(200)
      expect(probe.body.ready).toBe(true)
      expect(lagging.inRotation).toBe(false)
      expect(lagging.lagSeconds).toBeGreaterThan(STRICT_MAX_LAG_MS / 1000)
      expect(await metric(strict, 'memsvc_db_replica_in_rotation', `replica="${lagging.name}",state="LAGGING"`)).toBe(0)
      expect(
        strict.logs.some((line) => line.includes('read replica out of rotation') && line.includes('LAGGING')),
      ).toBe(true)

      // Out of rotation, another key's reads go to the primary: nothing stale.
      const created = await fixture.call('rest', 'createSpace', { name: 'while-lagging' }, alice.apiKey)
      const viaStrict = await fetch(`${strict.restUrl}/v1/spaces/${created.body.spaceId}`, {
        headers: { authorization: `Bearer ${aliceReader.apiKey}` },
      })
      expect(viaStrict.status).toBe(200)
    } finally {
      await replica.resumeReplay()
    }
    const back = await replicaState(strict, 'IN_ROTATION')
    expect(back.inRotation).toBe(true)
    expect(strict.logs.some((line) => line.includes('read replica in rotation') && line.includes('LAGGING'))).toBe(true)
  }, 60_000)

  it('stopping the replica under load fails no request, and it comes back once restarted', async () => {
    const space = await fixture.call('rest', 'createSpace', { name: 'under-load' }, alice.apiKey)
    const spaceId = space.body.spaceId as string
    // The reader's key reads what the replica has: the space, once replayed.
    await replica.caughtUp()
    const failures: string[] = []
    let ownWritesRead = 0
    let reads = 0
    let running = true
    const reader = async (transport: Transport) => {
      while (running) {
        for (const [operation, input] of [
          ['getSpace', { spaceId }],
          ['listSpaces', {}],
          ['listMemories', { spaceId }],
          ['retrieveMemories', { message: 'replica note', spaceKeys: [{ spaceId }], mode: 'KEYWORD' }],
        ] as const) {
          const answer = await fixture.call(transport, operation, input, aliceReader.apiKey)
          reads++
          if (answer.status !== 'OK') failures.push(`${transport} ${operation}: ${answer.status} ${answer.message}`)
        }
      }
    }
    const writer = async () => {
      for (let index = 0; running; index++) {
        const created = await fixture.call(
          'rest',
          'createMemory',
          { spaceId, originalContent: `replica note ${index}` },
          alice.apiKey,
        )
        if (created.status !== 'OK') {
          failures.push(`createMemory: ${created.status} ${created.message}`)
          continue
        }
        const read = await fixture.call('grpc', 'getMemory', { memoryId: created.body.memoryId }, alice.apiKey)
        if (read.status === 'OK') ownWritesRead++
        else failures.push(`own write not read: ${read.status} ${read.message}`)
      }
    }
    const load = Promise.all([reader('rest'), reader('grpc'), reader('rest'), writer()])
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    await replica.stop()
    const down = await replicaState(fixture.server, 'DOWN')
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    running = false
    await load
    expect(failures).toEqual([])
    expect(ownWritesRead).toBeGreaterThan(0)
    expect(down.inRotation).toBe(false)
    expect((await readyz(fixture.server)).body.ready).toBe(true)
    expect(await metric(fixture.server, 'memsvc_db_reads_total', 'route="primary-no-replica"')).toBeGreaterThan(0)
    const failedOver = await metric(fixture.server, 'memsvc_db_reads_total', 'route="primary-replica-failed"')
    console.info(
      `replica stopped under load: ${reads} reads by another key and ${ownWritesRead} own-write reads, none failed; ` +
        `${failedOver} reads failed over to the primary mid-request; DOWN after: ${down.reason}`,
    )

    await replica.start()
    await replica.caughtUp()
    await replicaState(fixture.server, 'IN_ROTATION')
    const afterRestart = await fixture.call('rest', 'getSpace', { spaceId }, aliceReader.apiKey)
    expect(afterRestart.status).toBe('OK')
  }, 90_000)
})
