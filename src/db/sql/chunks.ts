import type { Queryable } from '../database.js'
import { fitOneRoundTrip, type RowKind, workOf, writePaced } from '../paced-writes.js'

export interface NewChunk {
  id: string
  chunk_index: number
  text: string
  start_offset: number
  end_offset: number
  /** The embedders that saw only the start of the text (over their token limit), by embedder id (migration 12). */
  embedding_truncation?: EmbeddingTruncation | null
  /** A document's chunk: where it came from (migration 13); null or absent for text memories. */
  source?: Record<string, unknown> | null
}

/** By embedder id: the chunk's tokens, and how many of them its vector was computed from. */
export type EmbeddingTruncation = Record<string, { tokens: number; keptTokens: number }>

export interface ChunkRow extends NewChunk {
  memory_id: string
  space_id: string
}

export interface ChunkVector {
  chunkId: string
  embedderId: string
  embedding: number[]
}

/** pgvector's text form; JavaScript prints every double exactly enough for a float4. */
const vectorText = (embedding: number[]) => `[${embedding.join(',')}]`

/**
 * The embedded database's work per row (paced-writes.ts), at the slowest PGlite was seen: a
 * chunk's row, tsvector and index entries, and its words counted into the space's keyword
 * statistics (migration 11's triggers, which took a 600-character chunk from about 0.5 to
 * 0.95 ms); a vector's HNSW index entry, which grows with the dimensions (32 ms at 1,024 once
 * the index holds a few hundred).
 */
const CHUNK_ROW_MS = 0.1
const CHUNK_TEXT_CHAR_MS = 0.0009
const VECTOR_ROW_MS = 0.75
const VECTOR_VALUE_MS = 0.03
/** About what one vector value takes as text: a double printed in full, and its comma. */
const CHARS_PER_VECTOR_VALUE = 20

type PlacedChunk = NewChunk & { memoryId: string; spaceId: string }
type PlacedVector = ChunkVector & { memoryId: string; spaceId: string }

const chunkRows = (tx: Queryable): RowKind<PlacedChunk> => ({
  estimateMs: (chunk) => CHUNK_ROW_MS + chunk.text.length * CHUNK_TEXT_CHAR_MS,
  chars: (chunk) => chunk.text.length,
  insert: (chunks) => chunksInsert(tx, chunks),
})

const vectorRows = (tx: Queryable): RowKind<PlacedVector> => ({
  estimateMs: (vector) => VECTOR_ROW_MS + vector.embedding.length * VECTOR_VALUE_MS,
  chars: (vector) => vector.embedding.length * CHARS_PER_VECTOR_VALUE,
  insert: (vectors) => vectorsInsert(tx, vectors),
})

/** One memory's chunks and their vectors, as an ingest run stores them. */
export interface MemoryChunks {
  memoryId: string
  spaceId: string
  chunks: NewChunk[]
  vectors: ChunkVector[]
}

/**
 * Replaces these memories' chunks and all their vectors with the given ones, in the
 * caller's transaction: a re-run after a crash leaves exactly one set. Arrays through unnest
 * keep it three statements, whatever the number of memories and chunks, and one round trip
 * unless that would hold the event loop too long (paced-writes.ts).
 */
export async function replaceChunks(tx: Queryable, memories: MemoryChunks[]): Promise<void> {
  if (memories.length === 0) return
  const chunks = memories.flatMap(({ memoryId, spaceId, chunks }) =>
    chunks.map((chunk) => ({ ...chunk, memoryId, spaceId })),
  )
  const vectors = memories.flatMap(({ memoryId, spaceId, vectors }) =>
    vectors.map((vector) => ({ ...vector, memoryId, spaceId })),
  )
  const removal = () =>
    tx`delete from chunks where memory_id = any(${memories.map((memory) => memory.memoryId)}::uuid[])`
  const [chunkKind, vectorKind] = [chunkRows(tx), vectorRows(tx)]
  if (fitOneRoundTrip([workOf(chunks, chunkKind), workOf(vectors, vectorKind)])) {
    // Sent together, in this order (a query goes out when it is awaited; Promise.all awaits
    // them in array order, and one connection runs them in that order): one round trip, not three.
    await Promise.all([
      removal(),
      ...(chunks.length === 0 ? [] : [chunkKind.insert(chunks)]),
      ...(vectors.length === 0 ? [] : [vectorKind.insert(vectors)]),
    ])
    return
  }
  await removal()
  await writePaced(chunks, chunkKind)
  await writePaced(vectors, vectorKind)
}

function chunksInsert(tx: Queryable, chunks: PlacedChunk[]) {
  return tx`
    insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset, embedding_truncation, source)
    select id, memory_id, space_id, chunk_index, text, start_offset, end_offset, embedding_truncation::jsonb, source::jsonb
    from unnest(${chunks.map((chunk) => chunk.id)}::uuid[], ${chunks.map((chunk) => chunk.memoryId)}::uuid[],
      ${chunks.map((chunk) => chunk.spaceId)}::uuid[], ${chunks.map((chunk) => chunk.chunk_index)}::int[],
      ${chunks.map((chunk) => chunk.text)}::text[], ${chunks.map((chunk) => chunk.start_offset)}::int[],
      ${chunks.map((chunk) => chunk.end_offset)}::int[], ${chunks.map(truncationText)}::text[],
      ${chunks.map(sourceText)}::text[])
      as input (id, memory_id, space_id, chunk_index, text, start_offset, end_offset, embedding_truncation, source)`
}

const sourceText = (chunk: NewChunk) =>
  chunk.source && Object.keys(chunk.source).length > 0 ? JSON.stringify(chunk.source) : null

const truncationText = (chunk: NewChunk) =>
  chunk.embedding_truncation && Object.keys(chunk.embedding_truncation).length > 0
    ? JSON.stringify(chunk.embedding_truncation)
    : null

/**
 * Adds embedders' truncations to existing chunks (a back-fill embedded them with a new
 * embedder), beside those recorded before.
 */
export async function recordTruncations(tx: Queryable, truncations: Map<string, EmbeddingTruncation>): Promise<void> {
  if (truncations.size === 0) return
  const ids = [...truncations.keys()]
  await tx`
    update chunks set embedding_truncation = coalesce(chunks.embedding_truncation, '{}'::jsonb) || input.truncation::jsonb
    from unnest(${ids}::uuid[], ${ids.map((id) => JSON.stringify(truncations.get(id)))}::text[]) as input (id, truncation)
    where chunks.id = input.id`
}

/** Vectors of existing chunks; a vector already stored for a chunk and embedder is replaced. */
export async function insertVectors(
  tx: Queryable,
  memoryId: string,
  spaceId: string,
  vectors: ChunkVector[],
): Promise<void> {
  await writePaced(
    vectors.map((vector) => ({ ...vector, memoryId, spaceId })),
    vectorRows(tx),
  )
}

/** The statement itself, not yet sent (postgres.js sends a query when it is awaited), so callers can order it among others. */
function vectorsInsert(tx: Queryable, vectors: PlacedVector[]) {
  return tx`
    insert into chunk_vectors (chunk_id, embedder_id, space_id, memory_id, embedding)
    select chunk_id, embedder_id, space_id, memory_id, embedding::vector
    from unnest(${vectors.map((vector) => vector.chunkId)}::uuid[], ${vectors.map((vector) => vector.embedderId)}::uuid[],
      ${vectors.map((vector) => vector.spaceId)}::uuid[], ${vectors.map((vector) => vector.memoryId)}::uuid[],
      ${vectors.map((vector) => vectorText(vector.embedding))}::text[]) as input (chunk_id, embedder_id, space_id, memory_id, embedding)
    on conflict (chunk_id, embedder_id) do update set embedding = excluded.embedding`
}

export async function listChunks(sql: Queryable, memoryId: string): Promise<ChunkRow[]> {
  return sql<ChunkRow[]>`
    select id, memory_id, space_id, chunk_index, text, start_offset, end_offset
    from chunks where memory_id = ${memoryId} order by chunk_index`
}

/** The whole text of the given chunks that still exist (retrieval's chunks too long for the search to carry). */
export async function findChunkTexts(sql: Queryable, ids: string[]): Promise<Array<{ id: string; text: string }>> {
  if (ids.length === 0) return []
  return sql<Array<{ id: string; text: string }>>`select id, text from chunks where id in ${sql(ids)}`
}

export async function countChunks(sql: Queryable, memoryId: string): Promise<number> {
  const rows = await sql<
    Array<{ count: number }>
  >`select count(*)::int as count from chunks where memory_id = ${memoryId}`
  return rows[0]!.count
}

/** Completed memories of a space with a chunk that has no vector from this embedder. */
function missingVectors(sql: Queryable, spaceId: string, embedderId: string) {
  return sql`
    m.space_id = ${spaceId} and m.status = 'COMPLETED'
    and exists (
      select 1 from chunks c where c.memory_id = m.id
        and not exists (select 1 from chunk_vectors v where v.chunk_id = c.id and v.embedder_id = ${embedderId}))`
}

/**
 * What a back-fill still has to do. Asking again after each batch, rather than walking a
 * cursor, also catches memories whose ingest finished after the back-fill began.
 */
export async function memoriesMissingVectors(
  sql: Queryable,
  spaceId: string,
  embedderId: string,
  limit: number,
): Promise<string[]> {
  const rows = await sql<
    Array<{ id: string }>
  >`select m.id from memories m where ${missingVectors(sql, spaceId, embedderId)} order by m.id limit ${limit}`
  return rows.map((row) => row.id)
}

export async function countMemoriesMissingVectors(
  sql: Queryable,
  spaceId: string,
  embedderId: string,
): Promise<number> {
  const rows = await sql<
    Array<{ count: number }>
  >`select count(*)::int as count from memories m where ${missingVectors(sql, spaceId, embedderId)}`
  return rows[0]!.count
}

export async function countVectors(
  sql: Queryable,
  memoryId: string,
): Promise<Array<{ embedder_id: string; count: number }>> {
  return sql<
    Array<{ embedder_id: string; count: number }>
  >`select embedder_id, count(*)::int as count from chunk_vectors where memory_id = ${memoryId} group by embedder_id`
}
