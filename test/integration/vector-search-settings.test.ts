// The vector search sets hnsw.ef_search and hnsw.iterative_scan inside its own statement
// (src/db/sql/retrieval.ts nearestChunks: a one-time condition that PostgreSQL evaluates before
// the index scan starts). Without iterative scan, pgvector's HNSW scan returns at most about
// ef_search rows. So a small efSearch shows that the setting reached the scan, and iterative scan
// shows that the second setting did too. Both are checked on both engines.
import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nearestChunks } from '../../src/db/sql/retrieval.js'
import * as spaces from '../../src/domain/spaces.js'
import { ENGINES } from '../support/databases.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

const DIMENSIONS = 8
/** Enough vectors that the planner takes the HNSW index for an ORDER BY … LIMIT. */
const CHUNKS = 3_000
const LIMIT = 100
const SMALL_EF_SEARCH = 5
const LARGE_EF_SEARCH = 400

/** mulberry32, so that every run writes the same vectors. */
function generator(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

describe.each(ENGINES)('the vector search settings over %s', (engine) => {
  let fixture: MemoryFixture
  let spaceId: string
  let embedderId: string
  const sql = () => fixture.server.server.context.sql
  const random = generator(7)
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
    const memoryIds = Array.from({ length: CHUNKS }, () => crypto.randomUUID())
    const chunkIds = Array.from({ length: CHUNKS }, () => crypto.randomUUID())
    const texts = memoryIds.map((_, index) => `vector ${index}`)
    const vectors = memoryIds.map(() => `[${vector().join(',')}]`)
    const userId = fixture.alice.userId
    await sql().begin((tx) => [
      tx`
        insert into memories (id, space_id, content, content_type, content_sha256, metadata, chunking, status, chunk_count,
          created_at, updated_at, created_by, updated_by)
        select id, ${spaceId}, text, 'text/plain', sha256(convert_to(text, 'UTF8')), '{}', '{"strategy":"NONE"}', 'COMPLETED', 1,
          now(), now(), ${userId}, ${userId}
        from unnest(${memoryIds}::uuid[], ${texts}::text[]) as input (id, text)`,
      tx`
        insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
        select id, memory_id, ${spaceId}, 0, text, 0, length(text)
        from unnest(${chunkIds}::uuid[], ${memoryIds}::uuid[], ${texts}::text[]) as input (id, memory_id, text)`,
      tx`
        insert into chunk_vectors (chunk_id, embedder_id, space_id, memory_id, embedding)
        select chunk_id, ${embedderId}, ${spaceId}, memory_id, embedding::vector
        from unnest(${chunkIds}::uuid[], ${memoryIds}::uuid[], ${vectors}::text[]) as input (chunk_id, memory_id, embedding)`,
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
