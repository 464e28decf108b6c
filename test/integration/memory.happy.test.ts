import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { currentSchemaVectorSupport } from '../../src/db/schema-state.js'
import * as chunksSql from '../../src/db/sql/chunks.js'
import { INDEX_UPKEEP_LOCK_KEY, upkeepVectorIndexes } from '../../src/db/vector-index-upkeep.js'
import { embedderIndexName, indexedVectorType } from '../../src/db/vector-storage.js'
import * as embedders from '../../src/domain/embedders.js'
import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import { ENGINES } from '../support/databases.js'
import { hashedBagOfWords } from '../support/fake-embedder.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'

const ARTICLE = Array.from(
  { length: 30 },
  (_, i) => `Paragraph ${i} explains how memory ${i % 5} is stored.\nIt has a second line about vectors and chunks.`,
).join('\n\n')

describe.each(ENGINES)('spaces and memories (%s)', (engine) => {
  let fixture: MemoryFixture
  let embedderId: string
  const context = () => fixture.server.server.context
  const sql = () => fixture.server.server.context.sql

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    embedderId = await fixture.registerEmbedder(fixture.alice)
  }, 240_000)
  afterAll(() => fixture?.stop())

  it('creates, lists, gets, updates and deletes a space; the embedder is READY with its weight', async () => {
    const alice = fixture.as(fixture.alice)
    const spaceId = crypto.randomUUID()
    const created = await spaces.createSpace(context(), alice, {
      spaceId,
      name: 'notes',
      labels: { team: 'a' },
      spaceEmbedders: [{ embedderId, defaultRetrievalWeight: 0.7 }],
    })
    expect(created).toMatchObject({
      spaceId,
      ownerId: fixture.alice.userId,
      name: 'notes',
      publicRead: false,
      spaceEmbedders: [
        {
          embedderId,
          defaultRetrievalWeight: 0.7,
          indexState: 'READY',
          backfillProgress: { completedMemories: 0, totalMemories: 0 },
        },
      ],
      defaultChunkingConfig: { recursive: { chunkSize: 512, chunkOverlap: 64, keepStrategy: 'KEEP_END' } },
    })
    expect(await spaces.getSpace(context(), alice, spaceId)).toEqual(created)
    const listed = await spaces.listSpaces(context(), alice, { labelFilter: { team: 'a' } })
    expect(listed.spaces.map((space) => space.spaceId)).toContain(spaceId)
    const updated = await spaces.updateSpace(context(), alice, spaceId, {
      name: 'renamed',
      publicRead: true,
      mergeLabels: { tier: 'gold' },
    })
    expect(updated).toMatchObject({ name: 'renamed', publicRead: true, labels: { team: 'a', tier: 'gold' } })
    expect(updated.updatedAt).toBeGreaterThanOrEqual(created.updatedAt)
    const unchanged = await spaces.updateSpace(context(), alice, spaceId, { name: 'renamed' })
    expect(unchanged.updatedAt).toBe(updated.updatedAt)
    await spaces.deleteSpace(context(), alice, spaceId)
    await expect(spaces.getSpace(context(), alice, spaceId)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('ingests a memory end to end: chunks with offsets into the content, one vector per chunk, COMPLETED', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `ingest-${engine}`,
      spaceEmbedders: [{ embedderId }],
      defaultChunkingConfig: { recursive: { chunkSize: 200, chunkOverlap: 20 } },
    })
    const { memory, created } = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: ARTICLE,
      metadata: { source: 'test', n: 1 },
    })
    expect(created).toBe(true)
    expect(memory).toMatchObject({
      processingStatus: 'PENDING',
      chunkCount: 0,
      contentType: 'text/plain',
      metadata: { source: 'test', n: 1 },
    })
    const done = await fixture.settled(memory.memoryId)
    expect(done.processingStatus).toBe('COMPLETED')
    const chunks = await chunksSql.listChunks(sql(), memory.memoryId)
    expect(done.chunkCount).toBe(chunks.length)
    expect(chunks.length).toBeGreaterThan(5)
    for (const chunk of chunks) {
      expect(ARTICLE.slice(chunk.start_offset, chunk.end_offset)).toBe(chunk.text)
      expect(chunk.text.length).toBeLessThanOrEqual(200)
    }
    expect(await chunksSql.countVectors(sql(), memory.memoryId)).toEqual([
      { embedder_id: embedderId, count: chunks.length },
    ])
    // The stored vector is what the provider answered for that chunk's text.
    const [stored] = await sql()<
      Array<{ embedding: string }>
    >`select embedding::text from chunk_vectors where chunk_id = ${chunks[0]!.id}`
    const expected = hashedBagOfWords(chunks[0]!.text, fixture.embedder.dimensions)
    for (const [index, value] of (JSON.parse(stored!.embedding) as number[]).entries()) {
      expect(value).toBeCloseTo(expected[index]!, 5)
    }
    const content = await memories.getMemoryContent(context(), alice, memory.memoryId)
    expect(content).toEqual({ memoryId: memory.memoryId, contentType: 'text/plain', originalContent: ARTICLE })
  })

  it('takes base64 content, a per-memory chunking config, and sends chunks to the provider in batches', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `b64-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const text = Array.from({ length: 20 }, (_, i) => `Sentence ${i} is here.`).join(' ')
    const before = fixture.embedder.requests.length
    const { memory } = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContentB64: Buffer.from(text).toString('base64'),
      contentType: 'text/markdown',
      chunkingConfig: { sentence: { maxChunkSize: 30 } },
    })
    const done = await fixture.settled(memory.memoryId)
    expect(done).toMatchObject({
      processingStatus: 'COMPLETED',
      chunkCount: 20,
      contentType: 'text/markdown',
      chunkingConfig: { sentence: { maxChunkSize: 30, minChunkSize: 0 } },
    })
    const sent = fixture.embedder.requests
      .slice(before)
      .filter((request) => request.inputs.some((input) => input.startsWith('Sentence')))
    // batchSize 8 in FAST_MEMORY_JOBS: 20 chunks in 3 requests.
    expect(sent.map((request) => request.inputs.length)).toEqual([8, 8, 4])
  })

  it('dedupe answers with the memory already holding the same content; without it a second copy is stored', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `dedupe-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const first = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: 'same words',
    })
    const again = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: 'same words',
      dedupe: true,
    })
    expect(again).toEqual({ memory: expect.objectContaining({ memoryId: first.memory.memoryId }), created: false })
    const copy = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: 'same words',
    })
    expect(copy.created).toBe(true)
    expect(copy.memory.originalContentSha256).toBe(first.memory.originalContentSha256)
  })

  it('batch create answers per item in order, lists by status and sort order with paging, batch deletes by ids and by filter', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `batch-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const batch = await memories.batchCreateMemories(context(), alice, {
      requests: [
        { spaceId: space.spaceId, originalContent: 'first memory' },
        { spaceId: space.spaceId, originalContent: '' },
        { spaceId: space.spaceId, originalContent: 'third memory', metadata: { k: 'v' } },
        { spaceId: space.spaceId, originalContent: 'fourth memory' },
      ],
    })
    expect(batch.results.map((result) => ('error' in result ? result.error.status : 'OK'))).toEqual([
      'OK',
      'INVALID_ARGUMENT',
      'OK',
      'OK',
    ])
    expect('error' in batch.results[1]! && batch.results[1].error.details[0]!.field).toBe('requests.1.originalContent')
    const ids = batch.results.flatMap((result) => ('memory' in result ? [result.memory.memoryId] : []))
    for (const id of ids) await fixture.settled(id)
    const page1 = await memories.listMemories(context(), alice, { spaceId: space.spaceId, maxResults: 2 })
    const page2 = await memories.listMemories(context(), alice, {
      spaceId: space.spaceId,
      maxResults: 2,
      nextToken: page1.nextToken,
    })
    expect([...page1.memories, ...page2.memories].map((memory) => memory.memoryId)).toEqual(ids)
    expect(page2.nextToken).toBeUndefined()
    const descending = await memories.listMemories(context(), alice, {
      spaceId: space.spaceId,
      sortOrder: 'DESCENDING',
    })
    expect(descending.memories.map((memory) => memory.memoryId)).toEqual([...ids].reverse())
    expect(
      (await memories.listMemories(context(), alice, { spaceId: space.spaceId, statusFilter: 'FAILED' })).memories,
    ).toEqual([])
    const byIds = await memories.batchDeleteMemories(context(), alice, { memoryIds: [ids[0]!, crypto.randomUUID()] })
    expect(byIds.deletedCount).toBe(1)
    expect(byIds.results!.map((result) => result.deleted)).toEqual([true, false])
    const byFilter = await memories.batchDeleteMemories(context(), alice, {
      spaceId: space.spaceId,
      statusFilter: 'COMPLETED',
      expectedCount: 2,
    })
    expect(byFilter.deletedCount).toBe(2)
    expect((await memories.listMemories(context(), alice, { spaceId: space.spaceId })).memories).toEqual([])
  })

  it('batch create answers as item-by-item creates would: a taken id, an id given twice, a repeated content with dedupe, a space of another user', async () => {
    const alice = fixture.as(fixture.alice)
    const bob = fixture.as(fixture.bob)
    const space = await spaces.createSpace(context(), alice, {
      name: `edges-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const bobsEmbedder = await fixture.registerEmbedder(fixture.bob)
    const bobsSpace = await spaces.createSpace(context(), bob, {
      name: `bobs-${engine}`,
      spaceEmbedders: [{ embedderId: bobsEmbedder }],
    })
    const status = (results: Awaited<ReturnType<typeof memories.batchCreateMemories>>['results']) =>
      results.map((result) => ('error' in result ? result.error.status : result.created ? 'CREATED' : 'EXISTING'))

    // Every item storable at once; the repeated content with dedupe answers the earlier item's memory.
    const plain = await memories.batchCreateMemories(context(), alice, {
      requests: [
        { spaceId: space.spaceId, originalContent: 'alpha' },
        { spaceId: bobsSpace.spaceId, originalContent: 'into a space alice may not write' },
        { spaceId: space.spaceId, originalContent: 'alpha', dedupe: true },
        { spaceId: space.spaceId, originalContent: 'alpha' },
      ],
    })
    expect(status(plain.results)).toEqual(['CREATED', 'NOT_FOUND', 'EXISTING', 'CREATED'])
    const first = plain.results[0] as { memory: memories.Memory }
    expect((plain.results[2] as { memory: memories.Memory }).memory.memoryId).toBe(first.memory.memoryId)
    expect((plain.results[3] as { memory: memories.Memory }).memory.memoryId).not.toBe(first.memory.memoryId)

    // A taken id and an id given twice: the others are stored, those two answer ALREADY_EXISTS.
    const reused = crypto.randomUUID()
    const conflicts = await memories.batchCreateMemories(context(), alice, {
      requests: [
        { spaceId: space.spaceId, originalContent: 'beta' },
        { spaceId: space.spaceId, originalContent: 'gamma', memoryId: first.memory.memoryId },
        { spaceId: space.spaceId, originalContent: 'delta', memoryId: reused },
        { spaceId: space.spaceId, originalContent: 'epsilon', memoryId: reused },
        { spaceId: space.spaceId, originalContent: 'beta', dedupe: true },
      ],
    })
    expect(status(conflicts.results)).toEqual(['CREATED', 'ALREADY_EXISTS', 'CREATED', 'ALREADY_EXISTS', 'EXISTING'])
    expect((conflicts.results[2] as { memory: memories.Memory }).memory.memoryId).toBe(reused)
    for (const result of [...plain.results, ...conflicts.results])
      if ('memory' in result && result.created)
        expect((await fixture.settled(result.memory.memoryId)).processingStatus).toBe('COMPLETED')
    const listed = await memories.listMemories(context(), alice, { spaceId: space.spaceId })
    expect(listed.memories).toHaveLength(4) // alpha twice, beta, delta
  })

  it('deleting a space removes its memories, chunks and vectors', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `cascade-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const { memory } = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: ARTICLE,
    })
    await fixture.settled(memory.memoryId)
    await spaces.deleteSpace(context(), alice, space.spaceId)
    const [counts] = await sql()<Array<{ memories: number; chunks: number; vectors: number }>>`
      select (select count(*)::int from memories where space_id = ${space.spaceId}) as memories,
        (select count(*)::int from chunks where space_id = ${space.spaceId}) as chunks,
        (select count(*)::int from chunk_vectors where space_id = ${space.spaceId}) as vectors`
    expect(counts).toEqual({ memories: 0, chunks: 0, vectors: 0 })
  })

  it('a full-precision vector index of an earlier build is rebuilt in half precision beside it, once, and a failed rebuild keeps it', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `rebuild-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const { memory } = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: ARTICLE,
    })
    await fixture.settled(memory.memoryId)
    const indexName = embedderIndexName(embedderId)
    const [embedder] = await sql()<
      Array<{ dimensionality: number }>
    >`select dimensionality from embedders where id = ${embedderId}`
    const dimensionality = embedder!.dimensionality
    const embedderIndexes = async () =>
      Object.fromEntries(
        (
          await sql()<Array<{ indexname: string; indexdef: string }>>`
            select indexname, indexdef from pg_indexes where indexname like ${`${indexName}%`}`
        ).map((row) => [row.indexname, row.indexdef]),
      )
    expect((await embedderIndexes())[indexName]).toContain(`halfvec(${dimensionality})`)
    const upgrade = async () => (await upkeepVectorIndexes(sql(), context().log, new AbortController().signal)).rebuilt
    expect(await upgrade()).toBe(0)
    await sql().unsafe(`drop index ${indexName}`)
    await sql().unsafe(
      `create index ${indexName} on chunk_vectors using hnsw ((embedding::vector(${dimensionality})) vector_cosine_ops) where embedder_id = '${embedderId}'`,
    )
    // Start-up does not wait for it: the schema is current.
    expect(await currentSchemaVectorSupport(sql(), context().secrets.keyId)).toMatchObject({ available: true })

    // A rebuild that fails (here: a registration whose width the stored vectors do not have)
    // keeps the earlier index and says so.
    await sql()`update embedders set dimensionality = ${dimensionality + 1} where id = ${embedderId}`
    try {
      expect(await upgrade()).toBe(0)
    } finally {
      await sql()`update embedders set dimensionality = ${dimensionality} where id = ${embedderId}`
    }
    expect((await embedderIndexes())[indexName]).toContain(`vector(${dimensionality})`)
    expect(fixture.server.logs.some((line) => line.includes('the earlier index is kept'))).toBe(true)

    // Another process holding the rebuild lock does it; this one leaves it alone. (The
    // embedded database has one connection: no other can hold it.)
    if (engine === 'postgresql') {
      const other = await sql().reserve()
      try {
        await other`select pg_advisory_lock(${INDEX_UPKEEP_LOCK_KEY})`
        expect(await upgrade()).toBe(0)
        await other`select pg_advisory_unlock(${INDEX_UPKEEP_LOCK_KEY})`
      } finally {
        other.release()
      }
      expect(
        fixture.server.logs.some((line) =>
          line.includes('another memsvc process is bringing the vector indexes up to date'),
        ),
      ).toBe(true)
    }

    // The next try clears what the failed build left, and the new index takes the old one's name.
    expect(await upgrade()).toBe(1)
    expect(await embedderIndexes()).toEqual({ [indexName]: expect.stringContaining(`halfvec(${dimensionality})`) })
    expect(await upgrade()).toBe(0)
    const plan = await sql().begin(async (tx) => {
      await tx`set local enable_seqscan = off`
      const query = `[${hashedBagOfWords('vectors and chunks', dimensionality).join(',')}]`
      const type = indexedVectorType(dimensionality)
      return tx.unsafe(
        `explain select chunk_id from chunk_vectors where embedder_id = '${embedderId}' order by embedding::${type} <=> '${query}'::${type} limit 5`,
      )
    })
    expect(plan.map((row) => Object.values(row)[0]).join('\n')).toContain(indexName)
  })

  it("deleting an embedder deletes its vectors and drops its index; an index whose embedder is gone is dropped by the next start's upkeep", async () => {
    const alice = fixture.as(fixture.alice)
    const doomed = await fixture.registerEmbedder(fixture.alice)
    const space = await spaces.createSpace(context(), alice, {
      name: `delete-embedder-${engine}`,
      spaceEmbedders: [{ embedderId: embedderId }, { embedderId: doomed }],
    })
    const { memory } = await memories.createMemory(context(), alice, {
      spaceId: space.spaceId,
      originalContent: ARTICLE,
    })
    await fixture.settled(memory.memoryId)
    const indexExists = async (name: string) =>
      (await sql()<Array<{ found: boolean }>>`select to_regclass(${name}) is not null as found`)[0]!.found
    expect(await indexExists(embedderIndexName(doomed))).toBe(true)

    await embedders.deleteEmbedder(context(), alice, doomed)
    expect(await indexExists(embedderIndexName(doomed))).toBe(false)
    const vectors = await chunksSql.countVectors(sql(), memory.memoryId)
    expect(vectors.map((row) => row.embedder_id)).toEqual([embedderId])

    // What a process stopped between the delete and the drop leaves behind.
    const orphan = crypto.randomUUID()
    await sql().unsafe(
      `create index ${embedderIndexName(orphan)} on chunk_vectors using hnsw ((embedding::halfvec(16)) halfvec_cosine_ops) where embedder_id = '${orphan}'`,
    )
    expect(await upkeepVectorIndexes(sql(), context().log, new AbortController().signal)).toEqual({
      rebuilt: 0,
      dropped: 1,
    })
    expect(await indexExists(embedderIndexName(orphan))).toBe(false)
    expect(await indexExists(embedderIndexName(embedderId))).toBe(true)
  })

  it('an embedder added to a space with memories back-fills their vectors (BACKFILLING → READY); removing it drops them', async () => {
    const alice = fixture.as(fixture.alice)
    const second = await fixture.registerEmbedder(fixture.alice, {
      providerType: 'VENDORA',
      endpointUrl: `${fixture.embedder.url}/dims/24`,
      dimensionality: 24,
    })
    const space = await spaces.createSpace(context(), alice, {
      name: `backfill-${engine}`,
      spaceEmbedders: [{ embedderId }],
    })
    const created = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        memories.createMemory(context(), alice, { spaceId: space.spaceId, originalContent: `${ARTICLE} copy ${i}` }),
      ),
    )
    for (const { memory } of created) await fixture.settled(memory.memoryId)
    const added = await spaces.addSpaceEmbedder(context(), alice, space.spaceId, {
      embedderId: second,
      defaultRetrievalWeight: 2,
    })
    expect(added.spaceEmbedders[1]).toMatchObject({
      embedderId: second,
      defaultRetrievalWeight: 2,
      indexState: 'BACKFILLING',
      backfillProgress: { completedMemories: 0, totalMemories: 3 },
    })
    const ready = await waitFor('the back-fill to finish', async () => {
      const current = await spaces.getSpace(context(), alice, space.spaceId)
      return current.spaceEmbedders[1]!.indexState === 'READY' ? current : undefined
    })
    expect(ready.spaceEmbedders[1]!.backfillProgress).toEqual({ completedMemories: 3, totalMemories: 3 })
    for (const { memory } of created) {
      const chunkCount = (await chunksSql.listChunks(sql(), memory.memoryId)).length
      const counts = await chunksSql.countVectors(sql(), memory.memoryId)
      expect(Object.fromEntries(counts.map((entry) => [entry.embedder_id, entry.count]))).toEqual({
        [embedderId]: chunkCount,
        [second]: chunkCount,
      })
    }
    const [index] = await sql()<
      Array<{ indexdef: string }>
    >`select indexdef from pg_indexes where indexname = ${`chunk_vectors_hnsw_${second.replace(/-/g, '')}`}`
    expect(index!.indexdef).toContain('halfvec(24)')
    const removed = await spaces.removeSpaceEmbedder(context(), alice, space.spaceId, { embedderId: second })
    expect(removed.spaceEmbedders.map((entry) => entry.embedderId)).toEqual([embedderId])
    const [left] = await sql()<
      Array<{ count: number }>
    >`select count(*)::int as count from chunk_vectors where space_id = ${space.spaceId} and embedder_id = ${second}`
    expect(left!.count).toBe(0)
  })
})
