import { COMMIT_WITHOUT_FLUSH, type Queryable, type Sql } from '../database.js'
import { type CompiledFilter, filterFragment } from './filter-fragment.js'

export type MemoryStatus = 'PENDING' | 'EXTRACTING' | 'PROCESSING' | 'COMPLETED' | 'FAILED'

/** A memory without its content: lists and status reads never carry the (possibly large) text. */
export interface MemoryRow {
  id: string
  space_id: string
  content_type: string
  content_sha256: Buffer
  metadata: Record<string, unknown>
  /** A ChunkingConfig (src/chunking/chunking-config.ts). */
  chunking: Record<string, unknown>
  status: MemoryStatus
  processing_error: string | null
  chunk_count: number
  created_at: Date
  updated_at: Date
  created_by: string
  updated_by: string
  /** Documents only (migration 13): the original file's name and size, and how it is extracted. */
  file_name: string | null
  content_bytes: number | null
  document_options: Record<string, unknown> | null
  /** Documents only: extraction's stage and pages (src/documents/extracted-document.ts). */
  extraction: Record<string, unknown> | null
  /** 1 when created, one more with each update (migration 14). */
  version: number
  valid_until: Date | null
  /** A content update waits here while it is chunked and embedded; null otherwise. */
  pending_content_sha256: Buffer | null
}

export interface NewMemoryRow extends MemoryRow {
  content: string
  /** A document's stored bytes (memory_content_parts); null for text. */
  content_id: string | null
}

const MEMORY_COLUMNS = [
  'id',
  'space_id',
  'content_type',
  'content_sha256',
  'metadata',
  'chunking',
  'status',
  'processing_error',
  'chunk_count',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
  'file_name',
  'content_bytes',
  'document_options',
  'extraction',
  'version',
  'valid_until',
  'pending_content_sha256',
] as const

export interface MemoryFilter {
  spaceId: string
  status?: MemoryStatus
  /** Metadata that must be contained in the memory's (jsonb @>). */
  metadataContains?: Record<string, unknown>
  /** A compiled metadata filter over the column `metadata`. */
  metadataFilter?: CompiledFilter
  after?: { createdAt: Date; id: string }
  descending?: boolean
  limit: number
}

/**
 * Memories in one statement, however many; a row whose id is taken is skipped, not an
 * error. Returns the ids stored, so the caller can tell which were not.
 */
export async function insertMemoriesSkippingTakenIds(sql: Queryable, rows: NewMemoryRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set()
  const stored = await sql<Array<{ id: string }>>`
    insert into memories ${sql(
      rows.map((row) => ({
        ...row,
        metadata: sql.json(row.metadata as never),
        chunking: sql.json(row.chunking as never),
      })) as never,
    )}
    on conflict (id) do nothing
    returning id`
  return new Set(stored.map((row) => row.id))
}

export async function findMemory(sql: Queryable, id: string): Promise<MemoryRow | undefined> {
  const rows = await sql<MemoryRow[]>`select ${sql(MEMORY_COLUMNS)} from memories where id = ${id}`
  return rows[0]
}

export async function findMemoryContent(
  sql: Queryable,
  id: string,
): Promise<{ content: string; content_type: string } | undefined> {
  const rows = await sql<
    Array<{ content: string; content_type: string }>
  >`select content, content_type from memories where id = ${id}`
  return rows[0]
}

/**
 * The given memories, without their content: with the size of each one's content when asked
 * for, so that retrieval can reserve memory for the contents it will load as it streams
 * them (findMemoryContents). octet_length reads the size from the stored value's header,
 * without decompressing or fetching a long text.
 */
export async function findMemories(
  sql: Queryable,
  ids: string[],
  options: { withContentBytes: boolean },
): Promise<Array<MemoryRow & { text_bytes?: number }>> {
  if (ids.length === 0) return []
  return sql<Array<MemoryRow & { text_bytes?: number }>>`
    select ${sql(MEMORY_COLUMNS)} ${options.withContentBytes ? sql`, octet_length(content) as text_bytes` : sql``}
    from memories where id in ${sql(ids)}`
}

/** The content of the given memories that still exist (retrieval's memoryDefinition events, a few at a time). */
export async function findMemoryContents(sql: Queryable, ids: string[]): Promise<Array<{ id: string; text: string }>> {
  if (ids.length === 0) return []
  return sql<Array<{ id: string; text: string }>>`select id, content as text from memories where id in ${sql(ids)}`
}

/** The oldest memory of this space with this content, for create with dedupe. */
export async function findMemoryByContent(
  sql: Queryable,
  spaceId: string,
  sha256: Buffer,
): Promise<MemoryRow | undefined> {
  const rows = await sql<MemoryRow[]>`
    select ${sql(MEMORY_COLUMNS)} from memories where space_id = ${spaceId} and content_sha256 = ${sha256}
    order by created_at, id limit 1`
  return rows[0]
}

export async function listMemories(sql: Queryable, filter: MemoryFilter): Promise<MemoryRow[]> {
  const after = filter.after
  return sql<MemoryRow[]>`
    select ${sql(MEMORY_COLUMNS)} from memories
    where space_id = ${filter.spaceId}
      ${filter.status ? sql`and status = ${filter.status}` : sql``}
      ${filter.metadataContains ? sql`and metadata @> ${sql.json(filter.metadataContains as never)}` : sql``}
      ${filter.metadataFilter ? sql`and ${filterFragment(sql, filter.metadataFilter)}` : sql``}
      ${after && !filter.descending ? sql`and (created_at, id) > (${after.createdAt}, ${after.id})` : sql``}
      ${after && filter.descending ? sql`and (created_at, id) < (${after.createdAt}, ${after.id})` : sql``}
    order by ${filter.descending ? sql`created_at desc, id desc` : sql`created_at, id`}
    limit ${filter.limit}`
}

/** A memory taken into processing: its content, and a document's sections (where each span of the content came from). */
export type ProcessingMemoryRow = MemoryRow & { content: string; document_sections: unknown[] | null }

/**
 * Takes memories into processing (PENDING, or PROCESSING again after a crash) and returns
 * them with their content; those gone or already finished are not returned. The rows are
 * locked in id order, as every statement that changes several memories' status does, so two
 * such statements over the same memories wait for each other instead of deadlocking. A crash
 * may lose this (the ingest job runs again), so its commit is not waited for.
 */
export async function startProcessing(sql: Sql, ids: string[]): Promise<ProcessingMemoryRow[]> {
  if (ids.length === 0) return []
  return sql<ProcessingMemoryRow[]>`
    with locked as materialized (
      select id from memories where id = any(${ids}::uuid[]) and status in ('PENDING', 'PROCESSING')
      order by id for update
    )
    update memories m set status = 'PROCESSING', processing_error = null, updated_at = now()
    from locked where m.id = locked.id and ${sql.unsafe(COMMIT_WITHOUT_FLUSH)}
    returning m.*`
}

/** Memories whose ingest failed for good: FAILED with the error, no chunks (unless another run finished them meanwhile). */
export async function failProcessing(sql: Queryable, ids: string[], error: string): Promise<void> {
  if (ids.length === 0) return
  await sql`
    with locked as materialized (
      select id from memories where id = any(${ids}::uuid[]) and status = 'PROCESSING' order by id for update
    )
    update memories m set status = 'FAILED', processing_error = ${error}, chunk_count = 0, updated_at = now()
    from locked where m.id = locked.id`
}

/**
 * PROCESSING → COMPLETED with each memory's chunk count, as the first statement of the
 * transaction that stores the chunks: it takes the memories' row locks (in id order) and
 * checks their state at once, so a concurrent run (an expired lease) waits here until this
 * transaction ends and then finds them no longer PROCESSING (PostgreSQL re-checks the
 * condition on a row it waited for). Returns the ids it completed: the caller must write
 * nothing for the others (gone, or no longer PROCESSING).
 */
export async function completeProcessing(
  tx: Queryable,
  memories: Array<{ id: string; chunkCount: number }>,
): Promise<Set<string>> {
  if (memories.length === 0) return new Set()
  const rows = await tx<Array<{ id: string }>>`
    with locked as materialized (
      select id from memories where id = any(${memories.map((memory) => memory.id)}::uuid[]) and status = 'PROCESSING'
      order by id for update
    )
    update memories m set status = 'COMPLETED', processing_error = null, chunk_count = input.chunk_count, updated_at = now()
    from locked join unnest(${memories.map((memory) => memory.id)}::uuid[], ${memories.map((memory) => memory.chunkCount)}::int[])
      as input (id, chunk_count) on input.id = locked.id
    where m.id = locked.id
    returning m.id`
  return new Set(rows.map((row) => row.id))
}

/** Deletes the given memories of these spaces; returns the ids deleted. */
export async function deleteMemories(sql: Queryable, ids: string[]): Promise<Array<{ id: string; space_id: string }>> {
  if (ids.length === 0) return []
  return sql<
    Array<{ id: string; space_id: string }>
  >`delete from memories where id in ${sql(ids)} returning id, space_id`
}

export async function deleteMemoriesInSpace(
  sql: Queryable,
  spaceId: string,
  status: MemoryStatus | undefined,
  metadataFilter?: CompiledFilter,
): Promise<number> {
  const rows = await sql`
    delete from memories where space_id = ${spaceId} ${status ? sql`and status = ${status}` : sql``}
      ${metadataFilter ? sql`and ${filterFragment(sql, metadataFilter)}` : sql``}
    returning id`
  return rows.length
}

/** The space of each given memory that exists, for checking access before a batch delete. */
export async function spacesOfMemories(
  sql: Queryable,
  ids: string[],
): Promise<Array<{ id: string; space_id: string }>> {
  if (ids.length === 0) return []
  return sql<Array<{ id: string; space_id: string }>>`select id, space_id from memories where id in ${sql(ids)}`
}
