// Moving a space from the embedded database to PostgreSQL, as a user who outgrows the embedded
// one does: one in-process server on PGlite, one on PostgreSQL, each with the same fake
// embedding model registered. The export of the first is imported into a new space of the
// second: the counts of memories, chunks and vectors are equal and a retrieval finds the same
// chunks first. The same stream cut at an arbitrary byte and resumed ends with the same counts
// and no duplicates; a corrupted line and a vector of the wrong dimension are refused naming
// their line; a target embedder of another fingerprint embeds every memory again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sql } from '../../src/db/database.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { exportSpaceText, getImport, importSpaceStream, linesOf, textOf } from '../support/space-transfer.js'
import { variedSentences } from '../support/varied-sentences.js'
import { waitFor } from '../support/wait.js'

/** The same fingerprint on both servers: the fake embedders hash words the same way. */
const MODEL = 'hashed-bow-shared'
const MEMORIES = 24
/** Compared to this many decimal places (see topChunks). */
const SCORE_PLACES = 5
/** Many dimensions: few chunks share a vector. */
const DIMENSIONS = 384
const SMALL_CHUNKS = { recursive: { chunkSize: 60, chunkOverlap: 0 } }
/** Distinct texts sharing words, so that retrieval has close and far neighbours to rank (and no ties). */
const SENTENCES = variedSentences(MEMORIES * 3, 35)
const noteText = (index: number) => SENTENCES.slice(index * 3, index * 3 + 3).join(' ')

/** A small deterministic generator (mulberry32): an arbitrary cut, the same every run. */
function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let value = Math.imul(state ^ (state >>> 15), 1 | state)
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }
}

const sqlOf = (fixture: MemoryFixture): Sql => fixture.server.server.context.sql

async function countsOf(fixture: MemoryFixture, spaceId: string) {
  const [row] = await sqlOf(fixture)<Array<{ memories: number; chunks: number; vectors: number; contents: number }>>`
    select (select count(*)::int from memories where space_id = ${spaceId}) as memories,
      (select count(distinct content_sha256)::int from memories where space_id = ${spaceId}) as contents,
      (select count(*)::int from chunks where space_id = ${spaceId}) as chunks,
      (select count(*)::int from chunk_vectors where space_id = ${spaceId}) as vectors`
  return row!
}

describe('space transfer between engines: embedded → PostgreSQL', () => {
  let embedded: MemoryFixture
  let postgres: MemoryFixture
  let sourceSpace: string
  let postgresEmbedder: string
  let exported: string

  beforeAll(async () => {
    ;[embedded, postgres] = await Promise.all([
      startMemoryFixture('embedded', FAST_MEMORY_JOBS, { dimensions: DIMENSIONS }),
      startMemoryFixture('postgresql', FAST_MEMORY_JOBS, { dimensions: DIMENSIONS }),
    ])
    const sourceEmbedder = await embedded.registerEmbedder(embedded.alice, { modelIdentifier: MODEL })
    postgresEmbedder = await postgres.registerEmbedder(postgres.alice, { modelIdentifier: MODEL })
    const space = await embedded.call(
      'rest',
      'createSpace',
      { name: 'notes', spaceEmbedders: [{ embedderId: sourceEmbedder }], defaultChunkingConfig: SMALL_CHUNKS },
      embedded.alice.apiKey,
    )
    sourceSpace = space.body.spaceId
    const created = await embedded.call(
      'rest',
      'batchCreateMemories',
      {
        requests: Array.from({ length: MEMORIES }, (_, index) => ({
          spaceId: sourceSpace,
          originalContent: noteText(index),
          metadata: { index },
        })),
      },
      embedded.alice.apiKey,
    )
    for (const result of created.body.results) await embedded.settled(result.memory.memoryId)
    const answer = await exportSpaceText(embedded, embedded.alice, 'rest', sourceSpace)
    expect(answer.status, answer.message).toBe('OK')
    exported = answer.text
  }, 240_000)

  afterAll(async () => {
    await Promise.all([embedded?.stop(), postgres?.stop()])
  })

  /**
   * The top chunks with their scores to five places, ties in text order: the two engines'
   * pgvector builds differ in the last digits of a cosine, and chunks of equal score come in
   * the order of their ids, which the import gives anew.
   */
  async function topChunks(fixture: MemoryFixture, spaceId: string, message: string) {
    const answer = await fixture.call(
      'grpc',
      'retrieveMemories',
      { message, spaceKeys: [{ spaceId }], mode: 'VECTOR', requestedSize: 5 },
      fixture.alice.apiKey,
    )
    expect(answer.status, answer.message).toBe('OK')
    return (answer.body.events as Array<Record<string, any>>)
      .filter((event) => event.retrievedItem)
      .map((event) => ({
        text: event.retrievedItem.chunk.chunkText as string,
        score: (event.retrievedItem.chunk.relevanceScore as number).toFixed(SCORE_PLACES),
      }))
      .sort((a, b) => b.score.localeCompare(a.score) || a.text.localeCompare(b.text))
  }

  it('imports the export of the embedded database into a new PostgreSQL space with equal counts and results', async () => {
    const source = await countsOf(embedded, sourceSpace)
    expect(source).toMatchObject({ memories: MEMORIES, contents: MEMORIES })
    expect(source.vectors).toBe(source.chunks)
    const imported = await importSpaceStream(postgres, postgres.alice, 'grpc', { newSpaceName: 'notes' }, exported)
    expect(imported.status, imported.message).toBe('OK')
    expect(imported.body).toMatchObject({
      state: 'COMPLETED',
      memoriesImported: MEMORIES,
      memoriesReembedding: 0,
      chunksImported: source.chunks,
      vectorsImported: source.vectors,
    })
    const target = imported.body.spaceId as string
    expect(await countsOf(postgres, target)).toEqual(source)
    const space = await postgres.call('rest', 'getSpace', { spaceId: target }, postgres.alice.apiKey)
    expect(space.body.spaceEmbedders).toMatchObject([{ embedderId: postgresEmbedder, indexState: 'READY' }])
    for (const message of [SENTENCES[4]!, SENTENCES[40]!, 'the committee questioned the river']) {
      const [moved, original] = [
        await topChunks(postgres, target, message),
        await topChunks(embedded, sourceSpace, message),
      ]
      expect(moved.map((item) => item.score)).toEqual(original.map((item) => item.score))
      // Chunks tied at the last score are cut in id order: which of them make the list is not compared.
      const lowest = original.at(-1)!.score
      const above = (items: typeof original) => items.filter((item) => item.score !== lowest)
      expect(above(moved)).toEqual(above(original))
    }
    // Exported again from PostgreSQL, the memories, chunks and vectors are the ones that left the embedded database.
    const back = await exportSpaceText(postgres, postgres.alice, 'rest', target)
    const payload = (text: string) =>
      linesOf(text)
        .slice(1)
        .map((line) =>
          line.kind === 'memory'
            ? { memory: { ...line.memory, memoryId: '', createdById: '', updatedById: '' }, chunks: line.chunks }
            : line,
        )
    expect(payload(back.text)).toEqual(payload(exported))
  })

  it('resumes an import cut at an arbitrary byte and ends with equal counts and no duplicates', async () => {
    const random = seeded(35)
    const bytes = Buffer.from(exported)
    // Somewhere after the header, before the end line.
    const headerEnd = bytes.indexOf(0x0a) + 1
    const cutAt = headerEnd + Math.floor(random() * (bytes.length - headerEnd - 200))
    const first = await importSpaceStream(
      postgres,
      postgres.alice,
      'rest',
      { newSpaceName: `resumed-${crypto.randomUUID()}` },
      bytes.subarray(0, cutAt),
    )
    expect(first.status).toBe('INVALID_ARGUMENT')
    const importId = /import ([0-9a-f-]{36})/.exec(first.message)![1]!
    const stopped = await getImport(postgres, postgres.alice, 'grpc', importId)
    expect(stopped.body.state).toBe('RECEIVING')
    const applied = stopped.body.memoriesImported as number
    expect(applied).toBe(bytes.subarray(0, cutAt).toString().split('\n').length - 2)
    const resumed = await importSpaceStream(postgres, postgres.alice, 'grpc', { importId }, bytes)
    expect(resumed.status, resumed.message).toBe('OK')
    expect(resumed.body).toMatchObject({ state: 'COMPLETED', memoriesImported: MEMORIES, memoriesSkipped: 0 })
    expect(await countsOf(postgres, resumed.body.spaceId)).toEqual(await countsOf(embedded, sourceSpace))
  })

  it('refuses a corrupted line and a vector of the wrong dimension, naming the line, applying nothing of its batch', async () => {
    const lines = linesOf(exported)
    const corrupted = textOf(lines).split('\n')
    corrupted[9] = corrupted[9]!.replace('"chunks":[', '"chunks":[}')
    const broken = await importSpaceStream(
      postgres,
      postgres.alice,
      'rest',
      { newSpaceName: `corrupt-${crypto.randomUUID()}` },
      corrupted.join('\n'),
    )
    expect(broken.status).toBe('INVALID_ARGUMENT')
    expect(broken.message).toMatch(/^line 10: line: is not JSON/)
    const brokenImport = await getImport(
      postgres,
      postgres.alice,
      'rest',
      /import ([0-9a-f-]{36})/.exec(broken.message)![1]!,
    )
    expect(brokenImport.body).toMatchObject({ state: 'FAILED', linesApplied: 1, memoriesImported: 0 })
    expect((await countsOf(postgres, brokenImport.body.spaceId)).memories).toBe(0)

    const wrong = structuredClone(lines)
    wrong[5]!.chunks[0].vectors['0'].push(0.5)
    const refused = await importSpaceStream(
      postgres,
      postgres.alice,
      'grpc',
      { newSpaceName: `wide-${crypto.randomUUID()}` },
      textOf(wrong),
    )
    expect(refused.status).toBe('INVALID_ARGUMENT')
    expect(refused.fields[0]).toBe('line 6: chunks.0.vectors.0')
    expect(refused.message).toContain(`has ${postgres.embedder.dimensions + 1} values`)
  })

  it('applies the batches before a refused line and none of its own; the corrected stream resumes the import', async () => {
    // Into the embedded database, whose batches are small: the stream spans several.
    const lines = linesOf(exported)
    const badLine = MEMORIES - 2
    const corrupted = structuredClone(lines)
    corrupted[badLine - 1]!.memory.metadata = 'not an object'
    const refused = await importSpaceStream(
      embedded,
      embedded.alice,
      'grpc',
      { newSpaceName: `batches-${crypto.randomUUID()}` },
      textOf(corrupted),
    )
    expect(refused.status).toBe('INVALID_ARGUMENT')
    expect(refused.fields[0]).toBe(`line ${badLine}: memory.metadata`)
    const importId = /import ([0-9a-f-]{36})/.exec(refused.message)![1]!
    const stopped = await getImport(embedded, embedded.alice, 'rest', importId)
    expect(stopped.body.state).toBe('FAILED')
    const applied = stopped.body.memoriesImported as number
    expect(applied).toBeGreaterThan(0)
    expect(stopped.body.linesApplied).toBe(applied + 1)
    expect(applied).toBeLessThanOrEqual(badLine - 2)
    expect((await countsOf(embedded, stopped.body.spaceId)).memories).toBe(applied)
    const resumed = await importSpaceStream(embedded, embedded.alice, 'rest', { importId }, exported)
    expect(resumed.status, resumed.message).toBe('OK')
    expect(resumed.body).toMatchObject({ state: 'COMPLETED', memoriesImported: MEMORIES })
    // Exported from the same database, every id is taken: the copies are new memories, the contents the same.
    expect(await countsOf(embedded, stopped.body.spaceId)).toEqual(await countsOf(embedded, sourceSpace))
  })

  it('embeds every memory again for a target embedder of another fingerprint, all ending COMPLETED', async () => {
    const other = await postgres.registerEmbedder(postgres.alice, { modelIdentifier: 'another-model' })
    const imported = await importSpaceStream(
      postgres,
      postgres.alice,
      'rest',
      { newSpaceName: `reembedded-${crypto.randomUUID()}`, embedderIds: [other] },
      exported,
    )
    expect(imported.status, imported.message).toBe('OK')
    expect(imported.body).toMatchObject({ memoriesReembedding: MEMORIES, vectorsImported: 0 })
    const target = imported.body.spaceId as string
    await waitFor(
      'the re-embedded memories to be COMPLETED',
      async () => {
        const [row] = await sqlOf(postgres)<Array<{ waiting: number }>>`
          select count(*)::int as waiting from memories where space_id = ${target} and status <> 'COMPLETED'`
        return row!.waiting === 0
      },
      { timeoutMs: 60_000 },
    )
    const counts = await countsOf(postgres, target)
    expect(counts).toEqual(await countsOf(embedded, sourceSpace))
    const [vector] = await sqlOf(postgres)<Array<{ embedding: string }>>`
      select v.embedding::text as embedding from chunk_vectors v join chunks c on c.id = v.chunk_id
      where c.space_id = ${target} order by c.memory_id, c.chunk_index limit 1`
    expect(JSON.parse(vector!.embedding)).toHaveLength(postgres.embedder.dimensions)
  })
})
