// The vector search sets hnsw.ef_search and hnsw.iterative_scan inside its own statement
// (src/db/sql/retrieval.ts nearestChunks: a one-time condition that PostgreSQL evaluates before
// the index scan starts). Without iterative scan, pgvector's HNSW scan returns at most about
// ef_search rows. So a small efSearch shows that the setting reached the scan, and iterative scan
// shows that the second setting did too. Both are checked on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nearestChunks } from '../../src/db/sql/retrieval.js'
import * as spaces from '../../src/domain/spaces.js'
import { chunkRowsOf, insertChunkRows, insertMemoryRows, insertVectorRows } from '../support/chunk-rows.js'
import { ENGINES } from '../support/databases.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { seededRandom } from '../support/seeded-random.js'

const DIMENSIONS = 8
/** Enough vectors that the planner takes the HNSW index for an ORDER BY … LIMIT. */
const CHUNKS = 3_000
const LIMIT = 100
const SMALL_EF_SEARCH = 5
const LARGE_EF_SEARCH = 400

describe.each(ENGINES)('the vector search settings over %s', (engine) => {
  let fixture: MemoryFixture
  let spaceId: string
  let embedderId: string
  const sql = () => fixture.server.server.context.sql
  const random = seededRandom(7)
  const vector = () => Array.from({ length: DIMENSIONS }, () => random() - 0.5)
  const query = vector()
  const search = (efSearch: number, iterativeScan: boolean) =>
    nearestChunks(sql(), {
      spaceId,
      embedderId,
      dimensionality: DIMENSIONS,
      embedding: query,
      limit: LIMIT,
      efSearch,
      iterativeScan,
    })

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: DIMENSIONS })
    embedderId = await fixture.registerEmbedder(fixture.alice)
    const context = fixture.server.server.context
    const space = await spaces.createSpace(context, fixture.as(fixture.alice), {
      name: `settings-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    spaceId = space.spaceId
    // Written as rows (the ingest's own tables), not through 3,000 ingest jobs.
    const rows = chunkRowsOf(Array.from({ length: CHUNKS }, (_, index) => `vector ${index}`))
    const target = { spaceId, userId: fixture.alice.userId, embedderId }
    await sql().begin((tx) => [
      insertMemoryRows(tx, target, rows),
      insertChunkRows(tx, target, rows),
      insertVectorRows(
        tx,
        target,
        rows,
        rows.map(() => `[${vector().join(',')}]`),
      ),
    ])
    await sql()`analyze chunk_vectors`
  }, 120_000)
  afterAll(async () => {
    await fixture?.stop()
  })

  it('a small efSearch without iterative scan bounds what the index scan returns', async () => {
    const found = await search(SMALL_EF_SEARCH, false)
    expect(found.length).toBeGreaterThan(0)
    expect(found.length).toBeLessThan(LIMIT)
  })

  it('a large efSearch returns the whole limit, nearest first', async () => {
    const found = await search(LARGE_EF_SEARCH, false)
    expect(found).toHaveLength(LIMIT)
    const scores = found.map((chunk) => chunk.score)
    expect(scores).toEqual([...scores].sort((a, b) => a - b))
  })

  it('iterative scan keeps scanning past a small efSearch until the limit is met', async () => {
    expect(await search(SMALL_EF_SEARCH, true)).toHaveLength(LIMIT)
  })
})
