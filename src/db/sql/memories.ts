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
  /** The order: (created_at, id), the default, or (updated_at, id). */
  sortBy?: 'createdAt' | 'updatedAt'
  after?: { createdAt: Date; id: string }
  /** With sortBy updatedAt: the previous page's last key, as `updated_key` gave it (exact to the microsecond). */
  afterUpdated?: { updatedAt: string; id: string }
  descending?: boolean
  limit: number
}

/** updated_at as ISO text in UTC to the microsecond: a page token keeps it exactly (a Date keeps milliseconds). */
const UPDATED_KEY = `to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

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

/** `and (key, id) > (…)`, `<` when descending: the memories after the previous page's last one. */
function afterPosition(sql: Queryable, filter: MemoryFilter) {
  const compare = sql.unsafe(filter.descending ? '<' : '>')
  if (filter.sortBy === 'updatedAt') {
    const after = filter.afterUpdated
    // Bound as text: postgres.js would send a timestamptz parameter through Date, to the millisecond.
    return after ? sql`and (updated_at, id) ${compare} (${after.updatedAt}::text::timestamptz, ${after.id})` : sql``
  }
  const after = filter.after
  return after ? sql`and (created_at, id) ${compare} (${after.createdAt}, ${after.id})` : sql``
}

export async function listMemories(
  sql: Queryable,
  filter: MemoryFilter,
): Promise<Array<MemoryRow & { updated_key?: string }>> {
  const byUpdated = filter.sortBy === 'updatedAt'
  const order = byUpdated ? 'updated_at' : 'created_at'
  return sql<Array<MemoryRow & { updated_key?: string }>>`
    select ${sql(MEMORY_COLUMNS)} ${byUpdated ? sql`, ${sql.unsafe(UPDATED_KEY)} as updated_key` : sql``} from memories
    where space_id = ${filter.spaceId}
      ${filter.status ? sql`and status = ${filter.status}` : sql``}
      ${filter.metadataContains ? sql`and metadata @> ${sql.json(filter.metadataContains as never)}` : sql``}
      ${filter.metadataFilter ? sql`and ${filterFragment(sql, filter.metadataFilter)}` : sql``}
      ${afterPosition(sql, filter)}
    order by ${sql.unsafe(filter.descending ? `${order} desc, id desc` : `${order}, id`)}
    limit ${filter.limit}`
}

/**
 * A memory taken into processing: the content to chunk (a pending update's, else its own)
 * with its chunking and content version, and a document's sections (where each span of the
 * content came from).
 */
export type ProcessingMemoryRow = MemoryRow & {
  ingest_content: string
  ingest_chunking: Record<string, unknown>
  content_version: number
  document_sections: unknown[] | null
}

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
    returning m.*, coalesce(m.pending_content, m.content) as ingest_content,
      coalesce(m.pending_chunking, m.chunking) as ingest_chunking`
}

/** Which content of a memory an ingest run chunked: the memory's content_version when the run took it. */
export interface IngestedVersion {
  id: string
  contentVersion: number
}

/**
 * Memories whose ingest failed for good: FAILED with the error (unless another run finished
 * them meanwhile, or their content changed since). A first ingest leaves no chunks; a failed
 * content update leaves the previous content and its chunks answering, its pending content
 * kept for a look at what failed.
 */
export async function failProcessing(sql: Queryable, memories: IngestedVersion[], error: string): Promise<void> {
  if (memories.length === 0) return
  await sql`
    with locked as materialized (
      select id from memories where id = any(${memories.map((memory) => memory.id)}::uuid[]) and status = 'PROCESSING'
      order by id for update
    )
    update memories m set status = 'FAILED', processing_error = ${error},
      chunk_count = case when m.pending_content is null then 0 else m.chunk_count end, updated_at = now()
    from locked join unnest(${memories.map((memory) => memory.id)}::uuid[], ${memories.map((memory) => memory.contentVersion)}::int[])
      as input (id, content_version) on input.id = locked.id
    where m.id = locked.id and m.content_version = input.content_version`
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
  memories: Array<IngestedVersion & { chunkCount: number }>,
): Promise<Set<string>> {
  if (memories.length === 0) return new Set()
  // A content update's pending content becomes the content here, with the chunks made from it.
  const rows = await tx<Array<{ id: string }>>`
    with locked as materialized (
      select id from memories where id = any(${memories.map((memory) => memory.id)}::uuid[]) and status = 'PROCESSING'
      order by id for update
    )
    update memories m set status = 'COMPLETED', processing_error = null, chunk_count = input.chunk_count, updated_at = now(),
      content = coalesce(m.pending_content, m.content), content_type = coalesce(m.pending_content_type, m.content_type),
      content_sha256 = coalesce(m.pending_content_sha256, m.content_sha256), chunking = coalesce(m.pending_chunking, m.chunking),
      pending_content = null, pending_content_type = null, pending_content_sha256 = null, pending_chunking = null
    from locked join unnest(${memories.map((memory) => memory.id)}::uuid[], ${memories.map((memory) => memory.chunkCount)}::int[],
      ${memories.map((memory) => memory.contentVersion)}::int[]) as input (id, chunk_count, content_version) on input.id = locked.id
    where m.id = locked.id and m.content_version = input.content_version
    returning m.id`
  return new Set(rows.map((row) => row.id))
}

/** The space of each given memory that exists, for checking access before a batch delete. */
export async function spacesOfMemories(
  sql: Queryable,
  ids: string[],
): Promise<Array<{ id: string; space_id: string }>> {
  if (ids.length === 0) return []
  return sql<Array<{ id: string; space_id: string }>>`select id, space_id from memories where id in ${sql(ids)}`
}

/** A memory read to be changed, with its latest content: a pending update's, else its own. */
export type LockedMemoryRow = MemoryRow & {
  content_id: string | null
  latest_content: string
  latest_content_type: string
  latest_content_sha256: Buffer
  latest_chunking: Record<string, unknown>
}

/** Memories with their latest content, read to be changed: locked until the caller's transaction ends, in id order. */
export async function lockMemories(tx: Queryable, ids: string[]): Promise<LockedMemoryRow[]> {
  if (ids.length === 0) return []
  return tx<LockedMemoryRow[]>`
    select ${tx(MEMORY_COLUMNS)}, content_id, coalesce(pending_content, content) as latest_content,
      coalesce(pending_content_type, content_type) as latest_content_type,
      coalesce(pending_content_sha256, content_sha256) as latest_content_sha256,
      coalesce(pending_chunking, chunking) as latest_chunking
    from memories where id = any(${ids}::uuid[]) order by id for update`
}

/** A new content (or chunking) waiting for its chunks; the memory goes PENDING and its ingest is queued by the caller. */
export interface PendingContent {
  content: string
  content_type: string
  content_sha256: Buffer
  chunking: Record<string, unknown>
}

export interface MemoryUpdate {
  metadata: Record<string, unknown>
  valid_until: Date | null
  updated_by: string
  pending?: PendingContent
}

/** The next version of a locked memory (lockMemories): its metadata, validity and, when given, a pending content. */
export async function updateMemory(tx: Queryable, id: string, update: MemoryUpdate): Promise<MemoryRow> {
  const pending = update.pending
  const rows = await tx<MemoryRow[]>`
    update memories set metadata = ${tx.json(update.metadata as never)}, valid_until = ${update.valid_until},
      version = version + 1, updated_at = now(), updated_by = ${update.updated_by}
      ${
        pending
          ? tx`, pending_content = ${pending.content}, pending_content_type = ${pending.content_type},
            pending_content_sha256 = ${pending.content_sha256}, pending_chunking = ${tx.json(pending.chunking as never)},
            content_version = content_version + 1, status = 'PENDING', processing_error = null`
          : tx``
      }
    where id = ${id}
    returning ${tx(MEMORY_COLUMNS)}`
  return rows[0]!
}

/** Who deletes, recorded in each deleted memory's history (memory_changes). */
export interface Deleter {
  userId: string
  apiKeyId: string
}

/**
 * Deletes the given memories and records each deletion in its history, in one statement: the
 * version deleted, its content's hash and every metadata key it had. Returns the ids deleted.
 */
export async function deleteMemoriesRecorded(
  sql: Queryable,
  ids: string[],
  by: Deleter,
): Promise<Array<{ id: string; space_id: string }>> {
  if (ids.length === 0) return []
  return sql<Array<{ id: string; space_id: string }>>`
    with gone as (
      delete from memories where id = any(${ids}::uuid[])
      returning id, space_id, version, content_sha256, metadata, valid_until
    )
    insert into memory_changes (memory_id, space_id, action, version, changed_at, changed_by, api_key_id, changes)
    select id, space_id, 'DELETE', version, now(), ${by.userId}, ${by.apiKeyId},
      jsonb_build_object(
        'fields', '[]'::jsonb,
        'metadataChanges', (select coalesce(jsonb_agg(jsonb_build_object('key', key, 'before', value) order by key), '[]'::jsonb)
          from jsonb_each(gone.metadata)),
        'contentSha256Before', encode(content_sha256, 'hex'),
        'validUntilBefore', (extract(epoch from valid_until) * 1000)::bigint)
    from gone
    returning memory_id as id, space_id`
}

/** The memories of a space matching a delete's status and metadata filter, locked in id order. */
export async function lockMatchingMemories(
  tx: Queryable,
  spaceId: string,
  status: MemoryStatus | undefined,
  metadataFilter?: CompiledFilter,
): Promise<string[]> {
  const rows = await tx<Array<{ id: string }>>`
    select id from memories where space_id = ${spaceId} ${status ? tx`and status = ${status}` : tx``}
      ${metadataFilter ? tx`and ${filterFragment(tx, metadataFilter)}` : tx``}
    order by id for update`
  return rows.map((row) => row.id)
}

export async function countMemoriesInSpace(sql: Queryable, spaceId: string): Promise<number> {
  const rows = await sql<
    Array<{ count: number }>
  >`select count(*)::int as count from memories where space_id = ${spaceId}`
  return rows[0]!.count
}
