import type { Queryable } from '../database.js'

export interface NewChunk {
  id: string
  chunk_index: number
  text: string
  start_offset: number
  end_offset: number
}

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
 * Replaces a memory's chunks and all their vectors with these, in the caller's
 * transaction: a re-run after a crash leaves exactly one set. Arrays through unnest keep
 * it one statement each, whatever the number of chunks.
 */
export async function replaceChunks(
  tx: Queryable,
  memoryId: string,
  spaceId: string,
  chunks: NewChunk[],
  vectors: ChunkVector[],
): Promise<void> {
  const deleted = tx`delete from chunks where memory_id = ${memoryId}`
  if (chunks.length === 0) return void (await deleted)
  // Sent together, in this order (a query goes out when it is awaited; Promise.all awaits
  // them in array order, and one connection runs them in that order): one round trip, not three.
  await Promise.all([
    deleted,
    tx`
    insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
    select id, ${memoryId}, ${spaceId}, chunk_index, text, start_offset, end_offset
    from unnest(${chunks.map((chunk) => chunk.id)}::uuid[], ${chunks.map((chunk) => chunk.chunk_index)}::int[], ${chunks.map((chunk) => chunk.text)}::text[],
      ${chunks.map((chunk) => chunk.start_offset)}::int[], ${chunks.map((chunk) => chunk.end_offset)}::int[])
      as input (id, chunk_index, text, start_offset, end_offset)`,
    ...(vectors.length === 0 ? [] : [vectorsInsert(tx, memoryId, spaceId, vectors)]),
  ])
}

/** Vectors of existing chunks; a vector already stored for a chunk and embedder is replaced. */
export async function insertVectors(
  tx: Queryable,
  memoryId: string,
  spaceId: string,
  vectors: ChunkVector[],
): Promise<void> {
  if (vectors.length === 0) return
  await vectorsInsert(tx, memoryId, spaceId, vectors)
}

/** The statement itself, not yet sent (postgres.js sends a query when it is awaited), so callers can order it among others. */
function vectorsInsert(tx: Queryable, memoryId: string, spaceId: string, vectors: ChunkVector[]) {
  return tx`
    insert into chunk_vectors (chunk_id, embedder_id, space_id, memory_id, embedding)
    select chunk_id, embedder_id, ${spaceId}, ${memoryId}, embedding::vector
    from unnest(${vectors.map((vector) => vector.chunkId)}::uuid[], ${vectors.map((vector) => vector.embedderId)}::uuid[],
      ${vectors.map((vector) => vectorText(vector.embedding))}::text[]) as input (chunk_id, embedder_id, embedding)
    on conflict (chunk_id, embedder_id) do update set embedding = excluded.embedding`
}

export async function listChunks(sql: Queryable, memoryId: string): Promise<ChunkRow[]> {
  return sql<
    ChunkRow[]
  >`select id, memory_id, space_id, chunk_index, text, start_offset, end_offset from chunks where memory_id = ${memoryId} order by chunk_index`
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
