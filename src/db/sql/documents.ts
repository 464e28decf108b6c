import type { Queryable, Sql } from '../database.js'
import type { MemoryRow } from './memories.js'

/** A document memory's row as extraction reads it (migration 13). */
export interface DocumentMemoryRow extends MemoryRow {
  content_id: string
  content_bytes: number
  file_name: string | null
  document_options: Record<string, unknown>
}

/** Stores one part of an upload's bytes; parts are numbered from 0 in the order they arrived. */
export async function insertContentPart(
  sql: Queryable,
  contentId: string,
  index: number,
  bytes: Buffer,
): Promise<void> {
  await sql`insert into memory_content_parts (content_id, part_index, bytes) values (${contentId}, ${index}, ${bytes})`
}

/** Removes an upload's parts (an upload refused or cut off, or replaced by a dedupe). */
export async function deleteContentParts(sql: Queryable, contentId: string): Promise<void> {
  await sql`delete from memory_content_parts where content_id = ${contentId}`
}

/**
 * The parts of a content, in order, each read with its own statement so that at most one part is
 * held besides what the caller keeps: a 100 MiB document is never one result set.
 */
export async function* contentParts(sql: Queryable, contentId: string): AsyncGenerator<Buffer> {
  for (let index = 0; ; index++) {
    const rows = await sql<Array<{ bytes: Buffer }>>`
      select bytes from memory_content_parts where content_id = ${contentId} and part_index = ${index}`
    if (rows.length === 0) return
    yield rows[0]!.bytes
  }
}

/** Parts of uploads that never became a memory (a crash mid-upload), older than `ageHours`. */
export async function deleteOrphanContentParts(sql: Queryable, ageHours: number): Promise<number> {
  const rows = await sql`
    delete from memory_content_parts p
    where p.created_at < now() - make_interval(hours => ${ageHours})
      and not exists (select 1 from memories m where m.content_id = p.content_id)
    returning 1`
  return rows.length
}

/**
 * Takes a document memory into extraction: PENDING (or EXTRACTING again after a crash) →
 * EXTRACTING, unless its text is extracted already or it is gone. Returns the row.
 */
export async function startExtraction(sql: Sql, memoryId: string): Promise<DocumentMemoryRow | undefined> {
  const rows = await sql<DocumentMemoryRow[]>`
    update memories set status = 'EXTRACTING', processing_error = null, updated_at = now()
    where id = ${memoryId} and content_id is not null and extracted_at is null and status in ('PENDING', 'EXTRACTING')
    returning id, space_id, content_type, content_sha256, metadata, chunking, status, processing_error, chunk_count,
      created_at, updated_at, created_by, updated_by, content_id, content_bytes, file_name,
      document_options`
  return rows[0]
}

/** Extraction's progress, for processingStatus readers (written every second or so while it runs). */
export async function recordExtractionProgress(
  sql: Queryable,
  memoryId: string,
  extraction: Record<string, unknown>,
): Promise<void> {
  await sql`
    update memories set extraction = ${sql.json(extraction as never)}
    where id = ${memoryId} and status = 'EXTRACTING'`
}

/**
 * Extraction is done: the text becomes the memory's content, ready for chunking (PROCESSING:
 * its ingest job, which the caller enqueues in the same transaction, takes it from there). False when the memory is gone or
 * no longer extracting (a concurrent run finished it).
 */
export async function finishExtraction(
  tx: Queryable,
  memoryId: string,
  result: { text: string; sections: unknown[]; extraction: Record<string, unknown> },
): Promise<boolean> {
  const rows = await tx`
    update memories set content = ${result.text}, document_sections = ${tx.json(result.sections as never)},
      extraction = ${tx.json(result.extraction as never)}, extracted_at = now(), status = 'PROCESSING', updated_at = now()
    where id = ${memoryId} and status = 'EXTRACTING' and extracted_at is null
    returning id`
  return rows.length > 0
}

/** Extraction failed for good: FAILED with the reason (and what was learnt of the pages). */
export async function failExtraction(
  sql: Queryable,
  memoryId: string,
  error: string,
  extraction: Record<string, unknown> | undefined,
): Promise<void> {
  await sql`
    update memories set status = 'FAILED', processing_error = ${error}, updated_at = now(),
      extraction = coalesce(${extraction ? sql.json(extraction as never) : null}::jsonb, extraction)
    where id = ${memoryId} and status = 'EXTRACTING'`
}

/** The sections of a memory's extracted text (ingestion gives each chunk its source from them). */
export async function findDocumentSections(sql: Queryable, ids: string[]): Promise<Map<string, unknown[]>> {
  if (ids.length === 0) return new Map()
  const rows = await sql<Array<{ id: string; document_sections: unknown[] }>>`
    select id, document_sections from memories where id in ${sql(ids)} and document_sections is not null`
  return new Map(rows.map((row) => [row.id, row.document_sections]))
}

/** Where the original bytes of a memory are: a document's content id and size, or none (a text memory). */
export async function findContentLocation(
  sql: Queryable,
  memoryId: string,
): Promise<{ content_id: string | null; content_bytes: number | null; file_name: string | null } | undefined> {
  const rows = await sql<Array<{ content_id: string | null; content_bytes: number | null; file_name: string | null }>>`
    select content_id, content_bytes, file_name from memories where id = ${memoryId}`
  return rows[0]
}

export async function storePageImage(sql: Queryable, memoryId: string, pageNumber: number, png: Buffer): Promise<void> {
  await sql`
    insert into memory_page_images (memory_id, page_number, png) values (${memoryId}, ${pageNumber}, ${png})
    on conflict (memory_id, page_number) do update set png = excluded.png`
}

export async function findPageImage(sql: Queryable, memoryId: string, pageNumber: number): Promise<Buffer | undefined> {
  const rows = await sql<Array<{ png: Buffer }>>`
    select png from memory_page_images where memory_id = ${memoryId} and page_number = ${pageNumber}`
  return rows[0]?.png
}
