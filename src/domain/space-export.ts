import type { ChunkingConfig } from '../chunking/chunking-config.js'
import type { Queryable, Sql } from '../db/database.js'
import type { ExportChunkRow, ExportKeyRow, ExportMemoryRow } from '../db/sql/space-transfer.js'
import * as transferSql from '../db/sql/space-transfer.js'
import * as spacesSql from '../db/sql/spaces.js'
import type { AppError } from '../errors/app-error.js'
import { parseInput } from '../validation/parse.js'
import {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  EXPORT_LINE_BUDGET_BYTES,
  exportSpaceSchema,
} from '../validation/space-transfer.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { nowMillis } from './paging.js'
import { findAccessibleSpace, requireVectorStorage } from './space-access.js'

/**
 * GET /v1/spaces/{id}:export and SpaceService/ExportSpace: a space as NDJSON
 * (docs/export-format.md). Everything that can refuse the export happens before the first
 * line; the lines are then read batch by batch, in (created_at, id) order, each batch in one
 * snapshot, each vector written into its line as the database prints it.
 */

/** The lines of the export format, as they are written. */
export interface ExportedEmbedder {
  ref: number
  embedderId: string
  providerType: string
  modelIdentifier: string
  dimensionality: number
  defaultRetrievalWeight: number
}

export interface ExportHeaderLine {
  kind: 'header'
  format: typeof EXPORT_FORMAT
  formatVersion: typeof EXPORT_FORMAT_VERSION
  exportedAt: number
  space: {
    spaceId: string
    name: string
    labels: Record<string, string>
    defaultChunkingConfig: ChunkingConfig
    textSearchLanguage: string
    defaultOcr: 'AUTO' | 'ON' | 'OFF'
    publicRead: boolean
  }
  embedders: ExportedEmbedder[]
  memoryCount: number
}

export interface ExportedMemory {
  memoryId: string
  contentType: string
  originalContent: string
  originalContentSha256: string
  metadata: Record<string, unknown>
  chunkingConfig: ChunkingConfig
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
  version: number
  validUntil?: number
  fileName?: string
  documentOptions?: Record<string, unknown>
  extraction?: Record<string, unknown>
}

export interface ExportedChunk {
  chunkIndex: number
  text: string
  startOffset: number
  endOffset: number
  source?: Record<string, unknown>
  /** By embedder ref (a string: a JSON object's key). */
  vectors?: Record<string, number[]>
}

export interface ExportMemoryLine {
  kind: 'memory'
  memory: ExportedMemory
  chunks: ExportedChunk[]
}

export interface ExportEndLine {
  kind: 'end'
  memoryCount: number
  chunkCount: number
}

/** Written in place of the rest when the export fails after its first line: an import refuses it. */
export interface ExportErrorLine {
  kind: 'error'
  error: { code: string; message: string }
}

export type ExportLine = ExportHeaderLine | ExportMemoryLine | ExportEndLine | ExportErrorLine

/** The last line of an export that fails after its first piece. */
export const exportErrorLine = (error: AppError): string =>
  line({ kind: 'error', error: { code: error.code, message: error.message } } satisfies ExportErrorLine)

/** Memories whose keys are read at once (their content is not). */
const KEYS_PER_READ = 1_000
/** A batch's chunks and content at most (a larger memory goes alone): what one statement reads and one piece holds. */
const BATCH_CHUNKS = 1_000
const BATCH_CONTENT_BYTES = 8 * 1024 * 1024
/** Batches read while the one before them is written. */
const READ_AHEAD = 2
/**
 * A generous estimate of a line's size, to keep every line under the import's limit: the
 * content and its chunks' texts, each chunk's fields, and a vector value as pgvector prints a
 * float4 (at most 14 characters and a comma).
 */
const CHUNK_FIELDS_BYTES = 200
const VECTOR_VALUE_BYTES = 16

/** The stream's text in pieces (the header line, batches of memory lines, the end line), each ending a line. */
export async function exportSpace(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<AsyncIterable<string>> {
  const principal = await context.authenticate(call)
  const request = parseInput(exportSpaceSchema, input)
  requireVectorStorage(context)
  const sql = context.sql
  // Whoever may read every memory of the space, as GET of one of its memories checks.
  const space = await findAccessibleSpace(sql, principal, request.spaceId, 'MEMORY', 'GET')
  const [targets, memoryCount] = await Promise.all([
    spacesSql.listSpaceEmbedderTargets(sql, [space.id]),
    transferSql.countExportedMemories(sql, space.id),
  ])
  const embedders: ExportedEmbedder[] = targets.map((target, ref) => ({
    ref,
    embedderId: target.embedder_id,
    providerType: target.provider_type,
    modelIdentifier: target.model_identifier,
    dimensionality: target.dimensionality,
    defaultRetrievalWeight: target.default_retrieval_weight,
  }))
  const header: ExportHeaderLine = {
    kind: 'header',
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    exportedAt: nowMillis().getTime(),
    space: {
      spaceId: space.id,
      name: space.name,
      labels: space.labels,
      defaultChunkingConfig: space.default_chunking as ChunkingConfig,
      textSearchLanguage: space.text_search_language,
      defaultOcr: space.default_ocr,
      publicRead: space.public_read,
    },
    embedders,
    memoryCount,
  }
  const refs =
    request.omitVectors || embedders.length === 0
      ? undefined
      : embedders.map((embedder) => ({ embedderId: embedder.embedderId, ref: embedder.ref }))
  const vectorBytesPerChunk = refs ? embedders.reduce((total, embedder) => total + embedder.dimensionality, 0) : 0
  return exportPieces(sql, space.id, header, refs, vectorBytesPerChunk * VECTOR_VALUE_BYTES, call.signal)
}

function line(value: ExportLine): string {
  return `${JSON.stringify(value)}\n`
}

async function* exportPieces(
  sql: Sql,
  spaceId: string,
  header: ExportHeaderLine,
  refs: Array<{ embedderId: string; ref: number }> | undefined,
  vectorBytesPerChunk: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<string> {
  yield line(header)
  const batches = exportBatches(sql, spaceId, vectorBytesPerChunk)
  let memoryCount = 0
  let chunkCount = 0
  const read = async (batch: IteratorResult<Batch>) =>
    batch.done ? undefined : transferSql.exportMemories(sql, batch.value.ids, refs, batch.value.withoutChunks)
  // Batches are read ahead while the one before is written, on as many connections: the
  // database prints the vectors, its share of the work, on as many cores.
  const reads: Array<Promise<transferSql.ExportBatchRows | undefined>> = []
  const readNext = () => {
    const next = batches.next().then(read)
    // A failure of a read ahead is thrown when its turn comes; until then it must not count as unhandled.
    next.catch(() => {})
    reads.push(next)
  }
  for (let ahead = 0; ahead < READ_AHEAD; ahead++) readNext()
  for (;;) {
    const current = await reads.shift()!
    if (!current) break
    if (signal?.aborted) return
    readNext()
    const chunks = chunksByMemory(current.chunks)
    let text = ''
    for (const memory of current.memories) {
      const memoryChunks = chunks.get(memory.id) ?? []
      text += memoryLine(memory, memoryChunks)
      memoryCount++
      chunkCount += memoryChunks.length
    }
    if (text !== '') yield text
  }
  yield line({ kind: 'end', memoryCount, chunkCount } satisfies ExportEndLine)
}

/** Each memory's chunks as their JSON objects (in chunk order, as read). */
function chunksByMemory(rows: ExportChunkRow[]): Map<string, string[]> {
  const byMemory = new Map<string, string[]>()
  for (const row of rows) {
    let chunks = byMemory.get(row.memory_id)
    if (!chunks) {
      chunks = []
      byMemory.set(row.memory_id, chunks)
    }
    // The database's texts are JSON already: the source's object, and the vectors' members.
    chunks.push(
      `{"chunkIndex":${row.chunk_index},"text":${JSON.stringify(row.text)},"startOffset":${row.start_offset},` +
        `"endOffset":${row.end_offset}${row.source === null ? '' : `,"source":${row.source}`}` +
        `${row.vectors === null ? '' : `,"vectors":{${row.vectors}}`}}`,
    )
  }
  return byMemory
}

/** A memory's line: its fields as JSON, then its chunks' objects. */
function memoryLine(row: ExportMemoryRow, chunks: string[]): string {
  const memory: ExportedMemory = {
    memoryId: row.id,
    contentType: row.content_type,
    originalContent: row.content,
    originalContentSha256: row.content_sha256.toString('hex'),
    metadata: row.metadata,
    chunkingConfig: row.chunking as ChunkingConfig,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
    updatedById: row.updated_by,
    version: row.version,
    ...(row.valid_until === null ? {} : { validUntil: row.valid_until.getTime() }),
    ...(row.file_name === null ? {} : { fileName: row.file_name }),
    ...(row.document_options === null ? {} : { documentOptions: row.document_options }),
    ...(row.extraction === null ? {} : { extraction: row.extraction }),
  }
  return `{"kind":"memory","memory":${JSON.stringify(memory)},"chunks":[${chunks.join(',')}]}\n`
}

/** The memories of one statement, and those among them exported without their chunks (see lineTooLarge). */
interface Batch {
  ids: string[]
  withoutChunks: string[]
}

/** The space's memories in batches of at most BATCH_CHUNKS chunks and BATCH_CONTENT_BYTES of content. */
async function* exportBatches(sql: Queryable, spaceId: string, vectorBytesPerChunk: number): AsyncGenerator<Batch> {
  let keys: ExportKeyRow[] = []
  let after: { createdAt: Date; id: string } | undefined
  let exhausted = false
  for (;;) {
    if (keys.length < KEYS_PER_READ / 2 && !exhausted) {
      const read = await transferSql.nextExportKeys(sql, spaceId, after, KEYS_PER_READ)
      exhausted = read.length < KEYS_PER_READ
      const last = read.at(-1)
      if (last) after = { createdAt: last.created_at, id: last.id }
      keys = keys.concat(read)
    }
    if (keys.length === 0) return
    const batch: Batch = { ids: [], withoutChunks: [] }
    let chunks = 0
    let bytes = 0
    while (keys.length > 0) {
      const key = keys[0]!
      const tooLarge = lineTooLarge(key, vectorBytesPerChunk)
      const keyChunks = tooLarge ? 0 : key.chunk_count
      if (
        batch.ids.length > 0 &&
        (chunks + keyChunks > BATCH_CHUNKS || bytes + key.content_bytes > BATCH_CONTENT_BYTES)
      )
        break
      keys.shift()
      batch.ids.push(key.id)
      if (tooLarge) batch.withoutChunks.push(key.id)
      chunks += keyChunks
      bytes += key.content_bytes
    }
    yield batch
  }
}

/**
 * Whether a memory's line with its chunks and vectors could outgrow what an import holds
 * (MAX_IMPORT_LINE_BYTES): such a memory, a few MiB of content in thousands of chunks, is
 * written without its chunks, and the import chunks and embeds it again.
 */
function lineTooLarge(key: ExportKeyRow, vectorBytesPerChunk: number): boolean {
  const estimate = 2 * key.content_bytes + key.chunk_count * (CHUNK_FIELDS_BYTES + vectorBytesPerChunk)
  return estimate > EXPORT_LINE_BUDGET_BYTES
}
