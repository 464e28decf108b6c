import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import * as chunksSql from '../../src/db/sql/chunks.js'
import { embedderIndexName } from '../../src/db/vector-storage.js'
import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import { createTestDatabase, ENGINES, type Engine, type TestDatabase } from '../support/databases.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { waitFor } from '../support/wait.js'

/** A claimed job whose server stopped is taken again once its lease has passed. */
const SHORT_LEASE = { ...FAST_MEMORY_JOBS, jobs: { ...FAST_MEMORY_JOBS.jobs, leaseSeconds: 2 } }
const TEXT = Array.from({ length: 40 }, (_, i) => `Line ${i} of a memory that outlives its server.`).join('\n')

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A database both servers of a test open in turn (removed after the test), and the first server's flags for it. */
async function storageForTwoServers(engine: Engine, prefix: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }))
  let database: TestDatabase | undefined
  if (engine === 'postgresql') {
    const created = await createTestDatabase()
    cleanups.push(() => created.drop())
    database = created
  }
  const shared: Record<string, string> = database ? { 'db-url': database.jdbcUrl } : { 'data-dir': dataDir }
  return { database, dataDir, shared }
}

describe.each(ENGINES)('a server stopped mid-ingest (%s)', (engine) => {
  it('leaves the memory PROCESSING with nothing written; the next server finishes it with no duplicate chunks', async () => {
    const { database, dataDir, shared } = await storageForTwoServers(engine, 'memsvc-restart-')
    const first: MemoryFixture = await startMemoryFixture(
      engine,
      SHORT_LEASE,
      {},
      { ...shared, 'shutdown-timeout-sec': 1 },
    )
    let firstStopped = false
    cleanups.push(async () => {
      if (!firstStopped) await first.stop()
    })
    const embedderId = await first.registerEmbedder(first.alice)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const alice = first.as(first.alice)
    const space = await spaces.createSpace(first.server.server.context, alice, {
      name: 'restart',
      spaceEmbedders: [{ embedderId }],
      defaultChunkingConfig: { recursive: { chunkSize: 100, chunkOverlap: 10 } },
    })
    // The provider takes the requests but answers none until released: the ingest is mid-way.
    const release = first.embedder.hold()
    const { memory } = await memories.createMemory(first.server.server.context, alice, {
      spaceId: space.spaceId,
      originalContent: TEXT,
    })
    await waitFor('the ingest to call the provider', () =>
      first.embedder.requests.some((request) => request.inputs.some((input) => input.startsWith('Line'))),
    )
    await first.server.stop()
    firstStopped = true
    // The first server is gone; what it asked for is answered only now, to nobody.
    release()

    const second: TestServer = await startTestServer({
      engine,
      ...(engine === 'postgresql' ? { database } : { dataDir }),
      startOptions: SHORT_LEASE,
    })
    cleanups.push(() => second.stop())
    // One statement, so one snapshot: the embedded engine's second server runs the job again at
    // once (releaseClaimsOfEarlierProcess), and may commit it between two separate reads.
    const stranded = await second.server.context.sql<Array<{ status: string; chunks: number; vectors: number }>>`
      select m.status, (select count(*)::int from chunks c where c.memory_id = m.id) as chunks,
        (select count(*)::int from chunk_vectors v where v.memory_id = m.id) as vectors
      from memories m where m.id = ${memory.memoryId}`
    expect(stranded).toEqual([{ status: 'PROCESSING', chunks: 0, vectors: 0 }])
    const done = await waitFor(
      'the second server to finish the memory',
      async () => {
        const current = await memories.getMemory(second.server.context, alice, memory.memoryId)
        return current.processingStatus === 'COMPLETED' ? current : undefined
      },
      { timeoutMs: 60_000 },
    )
    const chunks = await chunksSql.listChunks(second.server.context.sql, memory.memoryId)
    expect(done.chunkCount).toBe(chunks.length)
    expect(new Set(chunks.map((chunk) => chunk.chunk_index)).size).toBe(chunks.length)
    expect(await chunksSql.countVectors(second.server.context.sql, memory.memoryId)).toEqual([
      { embedder_id: embedderId, count: chunks.length },
    ])
    await first.embedder.close()
    first.client.close()
  }, 300_000)
})

describe.each(ENGINES)('a server started on a database from an earlier build (%s)', (engine) => {
  it('rebuilds its full-precision vector index in half precision: after READY on PostgreSQL, before it (keeping start-up alive) on the embedded database', async () => {
    const { database, dataDir, shared } = await storageForTwoServers(engine, 'memsvc-upgrade-')
    const first: MemoryFixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, {}, shared)
    let firstStopped = false
    cleanups.push(async () => {
      if (!firstStopped) await first.stop()
    })
    const embedderId = await first.registerEmbedder(first.alice)
    const alice = first.as(first.alice)
    const space = await spaces.createSpace(first.server.server.context, alice, {
      name: 'upgrade',
      spaceEmbedders: [{ embedderId }],
    })
    const { memory } = await memories.createMemory(first.server.server.context, alice, {
      spaceId: space.spaceId,
      originalContent: TEXT,
    })
    await first.settled(memory.memoryId)
    const indexName = embedderIndexName(embedderId)
    const sql = first.server.server.context.sql
    const [embedder] = await sql<
      Array<{ dimensionality: number }>
    >`select dimensionality from embedders where id = ${embedderId}`
    const dimensionality = embedder!.dimensionality
    // What an earlier build made.
    await sql.unsafe(`drop index ${indexName}`)
    await sql.unsafe(
      `create index ${indexName} on chunk_vectors using hnsw ((embedding::vector(${dimensionality})) vector_cosine_ops) where embedder_id = '${embedderId}'`,
    )
    await first.server.stop()
    firstStopped = true

    // What `memsvc serve` passes on to systemd (EXTEND_TIMEOUT_USEC), said every millisecond here.
    const keepalives: string[] = []
    const second: TestServer = await startTestServer({
      engine,
      ...(engine === 'postgresql' ? { database } : { dataDir }),
      startOptions: {
        ...FAST_MEMORY_JOBS,
        startupKeepalive: (status) => keepalives.push(status),
        startupKeepaliveMs: 1,
      },
    })
    cleanups.push(() => second.stop())
    // Only a rebuild that start-up waits for (embedded) keeps systemd's start deadline moving.
    if (engine === 'embedded') expect(keepalives[0]).toMatch(/vector indexes/)
    else expect(keepalives).toEqual([])
    const indexDefinition = async () =>
      (
        await second.server.context.sql<
          Array<{ indexdef: string }>
        >`select indexdef from pg_indexes where indexname = ${indexName}`
      )[0]?.indexdef
    if (engine === 'embedded') expect(await indexDefinition()).toContain(`halfvec(${dimensionality})`)
    await waitFor('the index to be rebuilt', async () =>
      (await indexDefinition())?.includes(`halfvec(${dimensionality})`),
    )
    expect(second.logs.some((line) => line.includes('vector index rebuilt'))).toBe(true)
    await first.embedder.close()
    first.client.close()
  }, 300_000)
})
