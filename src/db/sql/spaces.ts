import type { Queryable } from '../database.js'
import type { ProviderTargetRow } from './provider-targets.js'

export interface SpaceRow {
  id: string
  owner_id: string
  name: string
  labels: Record<string, string>
  /** A ChunkingConfig (src/chunking/chunking-config.ts). */
  default_chunking: Record<string, unknown>
  public_read: boolean
  /** The text search configuration its chunks' search vectors are made with (migration 11); set at creation only. */
  text_search_language: string
  /** OCR for its documents unless a memory says otherwise: AUTO (pages without text), ON, OFF (migration 13). */
  default_ocr: 'AUTO' | 'ON' | 'OFF'
  /** Set by a trigger once a memory with a valid_until is stored in it (migration 16); read by retrieval. */
  has_expiring_memories?: boolean
  created_at: Date
  updated_at: Date
  created_by: string
  updated_by: string
}

export type IndexState = 'BACKFILLING' | 'READY'

export interface SpaceEmbedderRow {
  space_id: string
  embedder_id: string
  /** The order the space lists its embedders in. */
  position: number
  default_retrieval_weight: number
  index_state: IndexState
  backfill_done: number
  backfill_total: number
  /** Why the back-fill stopped, when a provider failed for good. */
  backfill_error: string | null
  added_at: Date
}

export interface SpaceFilter {
  ownerId: string
  labels?: Record<string, string>
  after?: { createdAt: Date; id: string }
  limit: number
}

export async function insertSpace(sql: Queryable, row: SpaceRow): Promise<void> {
  const values = { ...row, labels: sql.json(row.labels), default_chunking: sql.json(row.default_chunking as never) }
  await sql`insert into spaces ${sql(values as never)}`
}

/** The text search configurations a space may use: those of the database that are found without a schema name. */
export async function textSearchLanguages(sql: Queryable): Promise<string[]> {
  const rows = await sql<Array<{ name: string }>>`
    select cfgname as name from pg_ts_config where pg_ts_config_is_visible(oid) order by cfgname`
  return rows.map((row) => row.name)
}

export async function insertSpaceEmbedders(sql: Queryable, rows: SpaceEmbedderRow[]): Promise<void> {
  if (rows.length > 0) await sql`insert into space_embedders ${sql(rows as never)}`
}

/**
 * How a space read to be changed is locked until the transaction ends: 'update' to change or
 * delete the space itself; 'key-share' to change its memories, which only needs the space to
 * stay (an ingest's chunk statistics take the same lock, so it does not wait for us).
 */
export type SpaceLock = 'update' | 'key-share'

export async function findSpace(
  sql: Queryable,
  id: string,
  options: { lock?: SpaceLock } = {},
): Promise<SpaceRow | undefined> {
  const lock = options.lock === 'update' ? sql`for update` : options.lock === 'key-share' ? sql`for key share` : sql``
  const rows = await sql<SpaceRow[]>`select * from spaces where id = ${id} ${lock}`
  return rows[0]
}

/** The embedders of the given spaces, each space's in its own order. */
export async function listSpaceEmbedders(sql: Queryable, spaceIds: string[]): Promise<SpaceEmbedderRow[]> {
  if (spaceIds.length === 0) return []
  return sql<
    SpaceEmbedderRow[]
  >`select * from space_embedders where space_id in ${sql(spaceIds)} order by space_id, position`
}

/** An embedder's registration as calling it needs (what findProviderTarget returns), with the row's last change. */
export interface EmbedderTargetRow extends ProviderTargetRow {
  dimensionality: number
  max_sequence_length: number | null
  /** Changes with any update of the registration: the query embedding cache's vectors are valid for one value. */
  updated_at: Date
}

/** A space's embedder: the link and the embedder's registration (the two tables share no column name). */
export type SpaceEmbedderTarget = SpaceEmbedderRow & EmbedderTargetRow

/**
 * The embedders of the given spaces with their registrations, each space's in its own
 * order, in one statement: ingest and retrieval call the embedders, which would otherwise
 * take the links, then each embedder's row, one round trip each.
 */
export async function listSpaceEmbedderTargets(sql: Queryable, spaceIds: string[]): Promise<SpaceEmbedderTarget[]> {
  if (spaceIds.length === 0) return []
  return sql<SpaceEmbedderTarget[]>`
    select se.*, e.* from space_embedders se join embedders e on e.id = se.embedder_id
    where se.space_id in ${sql(spaceIds)}
    order by se.space_id, se.position`
}

/** The spaces with these ids (those that exist), in no particular order. */
export async function findSpaces(sql: Queryable, ids: string[]): Promise<SpaceRow[]> {
  if (ids.length === 0) return []
  return sql<SpaceRow[]>`select * from spaces where id in ${sql(ids)}`
}

/** One owner's spaces in keyset order (created_at, id). */
export async function listSpaces(sql: Queryable, filter: SpaceFilter): Promise<SpaceRow[]> {
  return sql<SpaceRow[]>`
    select * from spaces
    where owner_id = ${filter.ownerId}
      ${filter.labels && Object.keys(filter.labels).length > 0 ? sql`and labels @> ${sql.json(filter.labels)}` : sql``}
      ${filter.after ? sql`and (created_at, id) > (${filter.after.createdAt}, ${filter.after.id})` : sql``}
    order by created_at, id
    limit ${filter.limit}`
}

export async function updateSpace(
  sql: Queryable,
  id: string,
  change: Pick<SpaceRow, 'name' | 'public_read' | 'labels' | 'default_ocr' | 'updated_at' | 'updated_by'>,
): Promise<SpaceRow> {
  const rows = await sql<SpaceRow[]>`
    update spaces set name = ${change.name}, public_read = ${change.public_read}, default_ocr = ${change.default_ocr},
      labels = ${sql.json(change.labels)}, updated_at = ${change.updated_at}, updated_by = ${change.updated_by}
    where id = ${id} returning *`
  return rows[0]!
}

/** Memories, chunks and vectors go with it (foreign keys cascade). */
export async function deleteSpace(sql: Queryable, id: string): Promise<boolean> {
  const rows = await sql`delete from spaces where id = ${id} returning id`
  return rows.length > 0
}

/** The embedder's vectors in this space go with it (foreign key from chunk_vectors). */
export async function removeSpaceEmbedder(sql: Queryable, spaceId: string, embedderId: string): Promise<boolean> {
  const rows =
    await sql`delete from space_embedders where space_id = ${spaceId} and embedder_id = ${embedderId} returning embedder_id`
  return rows.length > 0
}

export async function nextEmbedderPosition(sql: Queryable, spaceId: string): Promise<number> {
  const rows = await sql<
    Array<{ next: number }>
  >`select coalesce(max(position) + 1, 0)::int as next from space_embedders where space_id = ${spaceId}`
  return rows[0]!.next
}

/** Whether the embedder is already in some space: its index then exists. */
export async function embedderInAnySpace(sql: Queryable, embedderId: string): Promise<boolean> {
  const rows = await sql`select 1 from space_embedders where embedder_id = ${embedderId} limit 1`
  return rows.length > 0
}

export async function recordBackfillProgress(
  sql: Queryable,
  spaceId: string,
  embedderId: string,
  progress: { done: number; total: number; ready: boolean; error?: string },
): Promise<void> {
  await sql`
    update space_embedders set backfill_done = ${progress.done}, backfill_total = ${progress.total},
      index_state = ${progress.ready ? 'READY' : 'BACKFILLING'}, backfill_error = ${progress.error ?? null}
    where space_id = ${spaceId} and embedder_id = ${embedderId}`
}

export async function findSpaceEmbedder(
  sql: Queryable,
  spaceId: string,
  embedderId: string,
): Promise<SpaceEmbedderRow | undefined> {
  const rows = await sql<
    SpaceEmbedderRow[]
  >`select * from space_embedders where space_id = ${spaceId} and embedder_id = ${embedderId}`
  return rows[0]
}
