import type { Queryable, Sql } from '../database.js'
import type { EmbedderRow } from './embedders.js'
import type { NewMemoryRow } from './memories.js'

// ---- export

/** A memory's place in the export's keyset order, and what its line will weigh. */
export interface ExportKeyRow {
  id: string
  created_at: Date
  /** UTF-8 bytes of the content the line will carry. */
  content_bytes: number
  chunk_count: number
}

/**
 * The content an export carries: a content update still being ingested is exported as the
 * memory's next content (its ingest runs again on import); otherwise the content its chunks
 * were made from. Documents whose text is not extracted yet have none and are left out.
 */
const EXPORTED_CONTENT = `case when m.status in ('PENDING', 'PROCESSING') then coalesce(m.pending_content, m.content) else m.content end`

/** The memories of a space an export carries: those with a content. */
export async function countExportedMemories(sql: Queryable, spaceId: string): Promise<number> {
  const rows = await sql<Array<{ count: number }>>`
    select count(*)::float8 as count from memories m
    where m.space_id = ${spaceId} and octet_length(${sql.unsafe(EXPORTED_CONTENT)}) > 0`
  return rows[0]!.count
}

/** The next memories of the space after `after` in (created_at, id) order, without their content. */
export async function nextExportKeys(
  sql: Queryable,
  spaceId: string,
  after: { createdAt: Date; id: string } | undefined,
  limit: number,
): Promise<ExportKeyRow[]> {
  return sql<ExportKeyRow[]>`
    select m.id, m.created_at, octet_length(${sql.unsafe(EXPORTED_CONTENT)}) as content_bytes,
      case when m.status = 'COMPLETED' then m.chunk_count else 0 end as chunk_count
    from memories m
    where m.space_id = ${spaceId} and octet_length(${sql.unsafe(EXPORTED_CONTENT)}) > 0
      ${after ? sql`and (m.created_at, m.id) > (${after.createdAt}, ${after.id})` : sql``}
    order by m.created_at, m.id
    limit ${limit}`
}

/** A memory as its export line carries it: these columns of its row, the content as exported. */
export interface ExportMemoryRow
  extends Pick<
    NewMemoryRow,
    | 'id'
    | 'content_type'
    | 'content'
    | 'content_sha256'
    | 'metadata'
    | 'chunking'
    | 'created_at'
    | 'updated_at'
    | 'created_by'
    | 'updated_by'
    | 'version'
    | 'valid_until'
    | 'file_name'
    | 'document_options'
    | 'extraction'
  > {
  /** Its chunks are exported (COMPLETED, and its line not too large): they follow in exportChunks' answer. */
  with_chunks: boolean
}

/** A chunk as its export line carries it: `source` as JSON text, `vectors` as the members of the line's vectors object. */
export interface ExportChunkRow {
  memory_id: string
  chunk_index: number
  text: string
  start_offset: number
  end_offset: number
  source: string | null
  vectors: string | null
}

/** What one export batch reads: the memories, and the chunks of those exported with theirs. */
export interface ExportBatchRows {
  memories: ExportMemoryRow[]
  chunks: ExportChunkRow[]
}

/**
 * The memories and their chunks, in one snapshot (REPEATABLE READ: a memory and its chunks
 * agree however they change meanwhile). A chunk's vectors come as the database prints them,
 * `"0":[0.1,-0.2,…]`: pgvector's text form is a JSON array already, and the server writes
 * it into the line as it is, never parsing 384 numbers to print them again. `refs` are the
 * vectors' names in the export, by embedder; without them (omitVectors) none is read.
 */
export async function exportMemories(
  sql: Sql,
  ids: string[],
  refs: Array<{ embedderId: string; ref: number }> | undefined,
  withoutChunks: string[],
): Promise<ExportBatchRows> {
  if (ids.length === 0) return { memories: [], chunks: [] }
  return (await sql.begin('isolation level repeatable read read only', async (tx) => {
    const memories = await tx<ExportMemoryRow[]>`
      select m.id,
        case when m.status in ('PENDING', 'PROCESSING') then coalesce(m.pending_content_type, m.content_type)
          else m.content_type end as content_type,
        ${tx.unsafe(EXPORTED_CONTENT)} as content,
        case when m.status in ('PENDING', 'PROCESSING') then coalesce(m.pending_content_sha256, m.content_sha256)
          else m.content_sha256 end as content_sha256,
        case when m.status in ('PENDING', 'PROCESSING') then coalesce(m.pending_chunking, m.chunking)
          else m.chunking end as chunking,
        m.metadata, m.created_at, m.updated_at, m.created_by, m.updated_by, m.version, m.valid_until,
        m.file_name, m.document_options, m.extraction,
        m.status = 'COMPLETED' and m.id <> all(${withoutChunks}::uuid[]) as with_chunks
      from memories m
      where m.id = any(${ids}::uuid[])
      order by m.created_at, m.id`
    const exported = memories.filter((memory) => memory.with_chunks).map((memory) => memory.id)
    if (exported.length === 0) return { memories, chunks: [] }
    const vectors = refs
      ? tx`(select string_agg('"' || r.ref || '":' || v.embedding::text, ',' order by r.ref)
          from chunk_vectors v
          join unnest(${refs.map((entry) => entry.embedderId)}::uuid[], ${refs.map((entry) => entry.ref)}::int[])
            as r (embedder_id, ref) on r.embedder_id = v.embedder_id
          where v.chunk_id = c.id)`
      : tx`null::text`
    const chunks = await tx<ExportChunkRow[]>`
      select c.memory_id, c.chunk_index, c.text, c.start_offset, c.end_offset, c.source::text as source,
        ${vectors} as vectors
      from chunks c
      where c.memory_id = any(${exported}::uuid[])
      order by c.memory_id, c.chunk_index`
    return { memories, chunks }
  })) as ExportBatchRows
}

// ---- import

export type SpaceImportState = 'RECEIVING' | 'COMPLETED' | 'FAILED'

export interface SpaceImportRow {
  id: string
  space_id: string
  state: SpaceImportState
  header_sha256: Buffer
  lines_applied: number
  chunks_read: number
  memories_expected: number
  memories_imported: number
  memories_skipped: number
  memories_reembedding: number
  chunks_imported: number
  vectors_imported: number
  error: string | null
  created_at: Date
  updated_at: Date
  created_by: string
  updated_by: string
}

/** The counters are bigint: read as numbers (postgres.js answers int8 as a string). */
const IMPORT_COLUMNS = (sql: Queryable) => sql`
  id, space_id, state, header_sha256, lines_applied::float8 as lines_applied, chunks_read::float8 as chunks_read,
  memories_expected::float8 as memories_expected, memories_imported::float8 as memories_imported,
  memories_skipped::float8 as memories_skipped, memories_reembedding::float8 as memories_reembedding,
  chunks_imported::float8 as chunks_imported, vectors_imported::float8 as vectors_imported,
  error, created_at, updated_at, created_by, updated_by`

export async function insertImport(sql: Queryable, row: SpaceImportRow): Promise<void> {
  await sql`insert into space_imports ${sql(row as never)}`
}

export async function findImport(sql: Queryable, id: string): Promise<SpaceImportRow | undefined> {
  const rows = await sql<SpaceImportRow[]>`select ${IMPORT_COLUMNS(sql)} from space_imports where id = ${id}`
  return rows[0]
}

/** What one applied batch adds to an import's counters. */
export interface ImportProgress {
  lines: number
  chunksRead: number
  memoriesImported: number
  memoriesSkipped: number
  memoriesReembedding: number
  chunksImported: number
  vectorsImported: number
  /** The batch holds the end line: the import is COMPLETED with it. */
  completes: boolean
}

/**
 * Advances the import by a batch, in the batch's transaction, if it has applied exactly
 * `linesApplied` lines so far: the row's lock makes a second stream resuming the same import
 * wait here, and then find the count moved and apply nothing. Undefined when it has moved.
 */
export async function advanceImport(
  tx: Queryable,
  id: string,
  linesApplied: number,
  progress: ImportProgress,
  by: string,
): Promise<SpaceImportRow | undefined> {
  const rows = await tx<SpaceImportRow[]>`
    update space_imports set lines_applied = lines_applied + ${progress.lines},
      chunks_read = chunks_read + ${progress.chunksRead},
      memories_imported = memories_imported + ${progress.memoriesImported},
      memories_skipped = memories_skipped + ${progress.memoriesSkipped},
      memories_reembedding = memories_reembedding + ${progress.memoriesReembedding},
      chunks_imported = chunks_imported + ${progress.chunksImported},
      vectors_imported = vectors_imported + ${progress.vectorsImported},
      state = ${progress.completes ? 'COMPLETED' : 'RECEIVING'}, error = null, updated_at = now(), updated_by = ${by}
    where id = ${id} and lines_applied = ${linesApplied} and state <> 'COMPLETED'
    returning ${IMPORT_COLUMNS(tx)}`
  return rows[0]
}

/** The state an import stopped in (a cut: RECEIVING; refused input: FAILED), and why. */
export async function recordImportStop(
  sql: Queryable,
  id: string,
  state: 'RECEIVING' | 'FAILED',
  error: string,
  by: string,
): Promise<SpaceImportRow | undefined> {
  const rows = await sql<SpaceImportRow[]>`
    update space_imports set state = ${state}, error = ${error}, updated_at = now(), updated_by = ${by}
    where id = ${id} and state <> 'COMPLETED'
    returning ${IMPORT_COLUMNS(sql)}`
  return rows[0]
}

/** Of these contents (SHA-256 in hex), those some memory of the space already has. */
export async function contentsInSpace(sql: Queryable, spaceId: string, sha256Hexes: string[]): Promise<Set<string>> {
  if (sha256Hexes.length === 0) return new Set()
  const rows = await sql<Array<{ sha: string }>>`
    select distinct encode(content_sha256, 'hex') as sha from memories
    where space_id = ${spaceId}
      and content_sha256 = any(array(select decode(hex, 'hex') from unnest(${sha256Hexes}::text[]) as input (hex)))`
  return new Set(rows.map((row) => row.sha))
}

/** Of these memory ids, those taken in this database (in any space). */
export async function takenMemoryIds(sql: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await sql<Array<{ id: string }>>`select id from memories where id = any(${ids}::uuid[])`
  return new Set(rows.map((row) => row.id))
}

/**
 * The oldest dense embedder with this fingerprint that a space of `ownerId` may use: the
 * owner's own first, then (when the owner may use any embedder) anyone's.
 */
export async function findEmbedderByFingerprint(
  sql: Queryable,
  filter: {
    ownerId: string
    ownerMayUseAny: boolean
    providerType: string
    modelIdentifier: string
    dimensionality: number
  },
): Promise<EmbedderRow | undefined> {
  const rows = await sql<EmbedderRow[]>`
    select * from embedders
    where provider_type = ${filter.providerType} and model_identifier = ${filter.modelIdentifier}
      and dimensionality = ${filter.dimensionality} and distribution_type = 'DENSE'
      and (owner_id = ${filter.ownerId} or ${filter.ownerMayUseAny})
    order by owner_id = ${filter.ownerId} desc, created_at, id
    limit 1`
  return rows[0]
}

/**
 * The import's row, locked until the caller's transaction ends: the first statement of a
 * batch, so that a second stream resuming the same import waits for this batch and then
 * finds its lines applied.
 */
export async function lockImport(
  tx: Queryable,
  id: string,
): Promise<{ lines_applied: number; state: SpaceImportState } | undefined> {
  const rows = await tx<Array<{ lines_applied: number; state: SpaceImportState }>>`
    select lines_applied::float8 as lines_applied, state from space_imports where id = ${id} for update`
  return rows[0]
}
