import { afterEach, describe, expect, it } from 'vitest'
import * as jobsSql from '../../src/db/sql/jobs.js'
import { type JobProcessorOptions, maxRunsPerLane, PermanentJobError } from '../../src/jobs/job-processor.js'
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/databases.js'
import { startIdentityFixture } from '../support/identity-fixture.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { waitFor } from '../support/wait.js'

const FAST_JOBS: Partial<JobProcessorOptions> = { pollIntervalMs: 50, retryBaseMs: 20, maxRetryDelayMs: 100 }
const running: Array<{ stop(): Promise<void> }> = []
const databases: TestDatabase[] = []

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()))
  await Promise.all(databases.splice(0).map((database) => database.drop()))
})

async function start(
  engine: 'postgresql' | 'embedded',
  database?: TestDatabase,
  jobOptions: Partial<JobProcessorOptions> = {},
): Promise<TestServer> {
  const server = await startTestServer({
    engine,
    database,
    startOptions: { jobs: { ...FAST_JOBS, ...jobOptions } },
  })
  running.push(server)
  return server
}

const jobStatus = async (server: TestServer, id: string) =>
  (await jobsSql.findJob(server.server.context.sql, id))?.status

describe.each(ENGINES)('background jobs (%s)', (engine) => {
  it('retries a failing job with backoff until it succeeds', async () => {
    const server = await start(engine)
    const jobs = server.server.jobs
    let calls = 0
    jobs.register({
      kind: 'test.flaky',
      maxAttempts: 5,
      run: async () => {
        calls++
        if (calls < 3) throw new Error(`failure ${calls}`)
      },
    })
    const id = await jobs.enqueue(jobs.sql, 'test.flaky', {})
    await waitFor('the flaky job to succeed', async () => (await jobStatus(server, id)) === 'SUCCEEDED')
    const row = await jobsSql.findJob(server.server.context.sql, id)
    expect(row).toMatchObject({ attempts: 3, last_error: 'failure 2' })
  })

  it('ends a job that keeps failing in FAILED with its last error; a permanent error is not retried', async () => {
    const server = await start(engine)
    const jobs = server.server.jobs
    jobs.register({
      kind: 'test.broken',
      maxAttempts: 3,
      run: async (_payload, attempt) => {
        throw new Error(`broken on attempt ${attempt}`)
      },
    })
    jobs.register({
      kind: 'test.hopeless',
      maxAttempts: 3,
      run: async () => {
        throw new PermanentJobError('resource is gone')
      },
    })
    const broken = await jobs.enqueue(jobs.sql, 'test.broken', {})
    const hopeless = await jobs.enqueue(jobs.sql, 'test.hopeless', {})
    await waitFor(
      'both jobs to fail',
      async () => (await jobStatus(server, broken)) === 'FAILED' && (await jobStatus(server, hopeless)) === 'FAILED',
    )
    expect(await jobsSql.findJob(server.server.context.sql, broken)).toMatchObject({
      attempts: 3,
      last_error: 'broken on attempt 3',
    })
    expect(await jobsSql.findJob(server.server.context.sql, hopeless)).toMatchObject({
      attempts: 1,
      last_error: 'resource is gone',
    })
    // One more, due in an hour: waiting, so it counts as unfinished.
    await jobs.enqueue(jobs.sql, 'test.hopeless', {}, 3_600_000)
    const metrics = await (
      await fetch(`${server.restUrl}/metrics`, { headers: { 'x-service-metrics-key': 'test-metrics-secret' } })
    ).text()
    expect(metrics).toContain('memsvc_jobs_unfinished{kind="test.hopeless"} 1')
    expect(metrics).toContain('memsvc_jobs_total{kind="test.broken",outcome="retried"} 2')
    expect(metrics).toContain('memsvc_jobs_total{kind="test.broken",outcome="failed"} 1')
    expect(metrics).toMatch(/memsvc_jobs_queue_depth\{status="FAILED"\} 2/)
    expect(metrics).toMatch(/memsvc_job_duration_seconds_count\{kind="test.broken"\} 3/)
  })

  it('runs jobs of a kind that takes batches together, each job ending on its own', async () => {
    const server = await start(engine)
    const jobs = server.server.jobs
    const runs: number[][] = []
    jobs.register<{ n: number }>({
      kind: 'test.batched',
      maxAttempts: 2,
      run: async () => {
        throw new Error('a kind that takes batches is run through runMany')
      },
      batch: {
        limit: 4,
        runMany: async (batch) => {
          runs.push(batch.map((job) => job.payload.n))
          return batch.map((job) =>
            job.payload.n === 5
              ? { status: 'rejected', reason: new PermanentJobError('five is refused') }
              : job.payload.n === 7 && job.attempt === 1
                ? { status: 'rejected', reason: new Error('seven fails once') }
                : { status: 'fulfilled', value: undefined },
          )
        },
      },
    })
    // A claim already on its way when the kind was registered would take the jobs one by
    // one (it was sent with the batch limits known then): start again from a stopped queue.
    await jobs.stopAndFinish()
    jobs.start()
    // One transaction: the queue sees all ten at once.
    await jobs.sql.begin((tx) =>
      jobs.enqueueMany(
        tx,
        'test.batched',
        Array.from({ length: 10 }, (_, n) => ({ n })),
      ),
    )
    const rows = () =>
      server.server.context.sql<Array<{ n: number; status: string; attempts: number; last_error: string | null }>>`
        select (payload->>'n')::int as n, status, attempts, last_error from jobs where kind = 'test.batched' order by 1`
    await waitFor('every batched job to end', async () =>
      (await rows()).every((row) => row.status === 'SUCCEEDED' || row.status === 'FAILED'),
    )
    const ended = await rows()
    expect(ended.filter((row) => row.status === 'SUCCEEDED').map((row) => row.n)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9])
    expect(ended[5]).toMatchObject({ status: 'FAILED', attempts: 1, last_error: 'five is refused' })
    expect(ended[7]).toMatchObject({ status: 'SUCCEEDED', attempts: 2, last_error: 'seven fails once' })
    // Ten jobs in runs of at most four (4 + 4 + 2), then seven's retry alone.
    expect(
      runs
        .slice(0, 3)
        .map((run) => run.length)
        .sort(),
    ).toEqual([2, 4, 4])
    expect(
      runs
        .slice(0, 3)
        .flat()
        .sort((a, b) => a - b),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(runs.slice(3)).toEqual([[7]])
  })

  it('records lastUsedAt through a job, without writing on the request path', async () => {
    const fixture = await startIdentityFixture(engine, {})
    running.push(fixture)
    const key = await fixture.newKey(fixture.alice)
    expect((await fixture.call('rest', 'getMe', {}, key.apiKey)).status).toBe('OK')
    const before = await fixture.call('rest', 'listApiKeys', { maxResults: 1000 }, fixture.alice.apiKey)
    expect(
      before.body.keys.find((entry: { apiKeyId: string }) => entry.apiKeyId === key.apiKeyId).lastUsedAt,
    ).toBeUndefined()
    await fixture.server.server.context.authenticator.flushUsage()
    await waitFor('lastUsedAt to be written', async () => {
      const listed = await fixture.call('rest', 'listApiKeys', { maxResults: 1000 }, fixture.alice.apiKey)
      return (
        listed.body.keys.find((entry: { apiKeyId: string }) => entry.apiKeyId === key.apiKeyId).lastUsedAt !== undefined
      )
    })
  })

  it('a run longer than its lease keeps its job: the lease is renewed, so it is not taken again and run twice', async () => {
    const server = await start(engine, undefined, { leaseSeconds: 2 })
    const jobs = server.server.jobs
    let runs = 0
    jobs.register({
      kind: 'test.long',
      maxAttempts: 5,
      run: async () => {
        runs++
        // Two and a half leases long: without renewal the queue would hand the job out again after the first.
        // (A renewal every 667 ms leaves a slow database over a second before the lease would pass.)
        await new Promise((resolve) => setTimeout(resolve, 5_000))
      },
    })
    const id = await jobs.enqueue(jobs.sql, 'test.long', {})
    await waitFor('the long job to succeed', async () => (await jobStatus(server, id)) === 'SUCCEEDED')
    expect(runs).toBe(1)
    expect(await jobsSql.findJob(server.server.context.sql, id)).toMatchObject({ attempts: 1 })
  })

  it("a lane whose runs hang holds all workers but one: another lane's job, queued after, runs meanwhile", async () => {
    const server = await start(engine, undefined, { concurrency: 4 })
    const jobs = server.server.jobs
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const under = { stuck: 0, most: 0 }
    const ran: string[] = []
    jobs.register<{ lane: string; n: number }>({
      kind: 'test.laned',
      maxAttempts: 1,
      lanes: { payloadKey: 'lane' },
      run: async ({ lane, n }) => {
        ran.push(`${lane}${n}`)
        if (lane !== 'stuck') return
        under.most = Math.max(under.most, ++under.stuck)
        await released
        under.stuck--
      },
    })
    // As in the batch test: a claim sent before the kind was known would not know its lanes.
    await jobs.stopAndFinish()
    jobs.start()
    await jobs.sql.begin((tx) =>
      jobs.enqueueMany(
        tx,
        'test.laned',
        Array.from({ length: 6 }, (_, n) => ({ lane: 'stuck', n })),
      ),
    )
    await waitFor('the stuck lane to take its share of the workers', () => under.stuck >= maxRunsPerLane(4))
    const other = await jobs.enqueue(jobs.sql, 'test.laned', { lane: 'other', n: 0 })
    await waitFor("the other lane's job to succeed", async () => (await jobStatus(server, other)) === 'SUCCEEDED')
    expect(under.stuck).toBe(3)
    release()
    await waitFor('every stuck job to have run', () => ran.filter((run) => run.startsWith('stuck')).length === 6)
    expect(under.most).toBe(3)
  })
})

describe('background jobs shared by several processes (postgresql)', () => {
  it('runs each of 200 jobs exactly once across two servers', async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const servers = [await start('postgresql', database), await start('postgresql', database)]
    const runs: Array<{ server: number; id: string }> = []
    for (const [index, server] of servers.entries()) {
      server.server.jobs.register({
        kind: 'test.count',
        maxAttempts: 1,
        run: async (payload: { n: number }) => {
          runs.push({ server: index, id: String(payload.n) })
          await new Promise((resolve) => setTimeout(resolve, 2))
        },
      })
    }
    const jobs = servers[0]!.server.jobs
    await jobs.sql.begin(async (tx) => {
      for (let n = 0; n < 200; n++) await jobs.enqueue(tx, 'test.count', { n })
    })
    await waitFor('all 200 jobs to succeed', async () => {
      const counts = await jobsSql.countJobsByStatus(jobs.sql)
      return counts.find((row) => row.status === 'SUCCEEDED')?.count === 200
    })
    expect(runs).toHaveLength(200)
    expect(new Set(runs.map((run) => run.id)).size).toBe(200)
    const perServer = [0, 1].map((index) => runs.filter((run) => run.server === index).length)
    process.stdout.write(`jobs run per server: ${perServer.join(' / ')}\n`)
    expect(perServer.every((count) => count > 0)).toBe(true)
  })

  it('keeps a job across a restart: queued on one server, run by the next', async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const first = await start('postgresql', database)
    first.server.jobs.register({ kind: 'test.later', maxAttempts: 1, run: async () => {} })
    const id = await first.server.jobs.enqueue(first.server.context.sql, 'test.later', {}, 1_000)
    await first.stop()
    running.splice(running.indexOf(first), 1)
    const second = await start('postgresql', database)
    second.server.jobs.register({ kind: 'test.later', maxAttempts: 1, run: async () => {} })
    await waitFor('the job to run on the second server', async () => (await jobStatus(second, id)) === 'SUCCEEDED')
  })

  it('drain stops intake and waits for the running job; queued jobs stay for another server', async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const server = await start('postgresql', database)
    const jobs = server.server.jobs
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    let started = 0
    jobs.register({
      kind: 'test.slow',
      maxAttempts: 1,
      run: async () => {
        started++
        await released
      },
    })
    const slow = await jobs.enqueue(jobs.sql, 'test.slow', {})
    await waitFor('the slow job to start', () => started === 1)
    const drained = server.server.context.drainController.drain('test', 30_000)
    await waitFor('DRAINING', () => server.server.lifecycle.state === 'DRAINING')
    const queued = await jobs.enqueue(jobs.sql, 'test.slow', {})
    release()
    expect((await drained).quiesced).toBe(true)
    expect(await jobStatus(server, slow)).toBe('SUCCEEDED')
    expect(await jobStatus(server, queued)).toBe('PENDING')
    expect(started).toBe(1)
  })
})
