// Memories of one chunk each, written straight as rows of memories, chunks and chunk_vectors
// (their triggers run as for an ingest): for tests and benchmarks that need a large space
// without an ingest job per memory. Each function is one statement over the whole batch.
import crypto from 'node:crypto'
import type postgres from 'postgres'

/** A pool or a transaction, of any type map (the tests' and the bench's differ): what a tagged statement needs. */
type Statements = (template: TemplateStringsArray, ...parameters: any[]) => postgres.PendingQuery<any>

export interface ChunkRow {
  memoryId: string
  chunkId: string
  text: string
}

export interface RowsTarget {
  spaceId: string
  /** The memories' creator and last updater. */
  userId: string
}

/** Fresh ids for each text: one memory holding one chunk. */
export const chunkRowsOf = (texts: readonly string[]): ChunkRow[] =>
  texts.map((text) => ({ memoryId: crypto.randomUUID(), chunkId: crypto.randomUUID(), text }))

/** COMPLETED memories of chunking NONE, one per row. */
export const insertMemoryRows = (sql: Statements, target: RowsTarget, rows: readonly ChunkRow[]) => sql`
  insert into memories (id, space_id, content, content_type, content_sha256, metadata, chunking, status, chunk_count,
    created_at, updated_at, created_by, updated_by)
  select id, ${target.spaceId}, text, 'text/plain', sha256(convert_to(text, 'UTF8')), '{}', '{"strategy":"NONE"}', 'COMPLETED', 1,
    now(), now(), ${target.userId}, ${target.userId}
  from unnest(${rows.map((row) => row.memoryId)}::uuid[], ${rows.map((row) => row.text)}::text[]) as input (id, text)`

/** Each memory's one chunk, its whole text. */
export const insertChunkRows = (sql: Statements, target: RowsTarget, rows: readonly ChunkRow[]) => sql`
  insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
  select id, memory_id, ${target.spaceId}, 0, text, 0, length(text)
  from unnest(${rows.map((row) => row.chunkId)}::uuid[], ${rows.map((row) => row.memoryId)}::uuid[],
    ${rows.map((row) => row.text)}::text[]) as input (id, memory_id, text)`

/** Each chunk's vector of one embedder (`vectors[i]` as pgvector text, `[1,2,…]`), through its HNSW index. */
export const insertVectorRows = (
  sql: Statements,
  target: RowsTarget & { embedderId: string },
  rows: readonly ChunkRow[],
  vectors: readonly string[],
) => sql`
  insert into chunk_vectors (chunk_id, embedder_id, space_id, memory_id, embedding)
  select chunk_id, ${target.embedderId}, ${target.spaceId}, memory_id, embedding::vector
  from unnest(${rows.map((row) => row.chunkId)}::uuid[], ${rows.map((row) => row.memoryId)}::uuid[],
    ${vectors as string[]}::text[]) as input (chunk_id, memory_id, embedding)`
