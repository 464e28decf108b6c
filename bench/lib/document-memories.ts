// Document memories as the documents benchmark makes them: a file streamed from disk as the
// raw body of `POST /v1/memories`, then followed through its statuses (PENDING → EXTRACTING
// → PENDING → PROCESSING → COMPLETED) in the database, whose timestamps time extraction
// exactly whatever the polling interval.
import fs from 'node:fs'
import { Readable } from 'node:stream'
import type postgres from 'postgres'
import { sleep } from './processes.js'

/** While extraction may still be starting, often: a stage missed between two polls is timed from a fallback. */
const EXTRACTION_POLL_MS = 10
/** Afterwards, chunking and indexing: completion is timed to this. */
const COMPLETION_POLL_MS = 25
const MS_PER_SECOND = 1000

export interface DocumentUpload {
  spaceId: string
  file: string
  contentType: string
  fileName: string
  ocr: 'AUTO' | 'ON' | 'OFF'
}

export interface UploadedDocument {
  memoryId: string
  /** performance.now() at the upload's first byte, and when its answer came (the bytes stored, the memory created). */
  startedMs: number
  answeredMs: number
}

/** Streams the file as the body (never whole in this process); the memory's id once memsvc has stored it. */
export async function uploadDocument(restUrl: string, key: string, upload: DocumentUpload): Promise<UploadedDocument> {
  const query = new URLSearchParams({ spaceId: upload.spaceId, fileName: upload.fileName, ocr: upload.ocr })
  const bytes = fs.statSync(upload.file).size
  const startedMs = performance.now()
  const response = await fetch(`${restUrl}/v1/memories?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': upload.contentType, 'content-length': String(bytes) },
    body: Readable.toWeb(fs.createReadStream(upload.file)) as ReadableStream<Uint8Array>,
    duplex: 'half',
  } as RequestInit)
  const text = await response.text()
  const answeredMs = performance.now()
  if (!response.ok) throw new Error(`upload of ${upload.fileName}: ${response.status} ${text.slice(0, 500)}`)
  return { memoryId: (JSON.parse(text) as { memoryId: string }).memoryId, startedMs, answeredMs }
}

export interface IngestedDocument {
  memoryId: string
  /**
   * The job taking the memory into EXTRACTING, and its text stored (status back to PENDING),
   * in seconds on the database's clock. When no poll saw EXTRACTING (a document extracted
   * in under EXTRACTION_POLL_MS), the start is the memory's creation.
   */
  extractionStartedAt: number
  extractedAt: number
  /** Whether extractionStartedAt was seen, rather than the creation fallback. */
  extractionStartSeen: boolean
  /** performance.now() when a poll first saw it COMPLETED. */
  completedMs: number
  chunkCount: number
}

interface MemoryState {
  id: string
  status: string
  updated: number
  created: number
  extracted: number | null
  chunk_count: number
  processing_error: string | null
}

/** Follows the memories until every one is COMPLETED; throws if one FAILED or `timeoutMs` passed. */
export async function awaitCompleted(
  sql: postgres.Sql,
  memoryIds: string[],
  timeoutMs: number,
): Promise<IngestedDocument[]> {
  const deadline = performance.now() + timeoutMs
  const started = new Map<string, number>()
  const done = new Map<string, IngestedDocument>()
  while (done.size < memoryIds.length) {
    if (performance.now() > deadline)
      throw new Error(
        `${memoryIds.length - done.size} document memories not COMPLETED within ${timeoutMs / MS_PER_SECOND} s`,
      )
    const pending = memoryIds.filter((id) => !done.has(id))
    const rows = await sql<MemoryState[]>`
      select id, status, chunk_count, processing_error,
        extract(epoch from updated_at)::float8 as updated, extract(epoch from created_at)::float8 as created,
        extract(epoch from extracted_at)::float8 as extracted
      from memories where id = any(${pending}::uuid[])`
    const seenMs = performance.now()
    for (const row of rows) {
      // updated_at is set when the job takes the memory into EXTRACTING; progress updates leave it.
      if (row.status === 'EXTRACTING' && !started.has(row.id)) started.set(row.id, row.updated)
      if (row.status === 'FAILED') throw new Error(`document memory ${row.id} FAILED: ${row.processing_error}`)
      if (row.status !== 'COMPLETED') continue
      done.set(row.id, {
        memoryId: row.id,
        extractionStartedAt: started.get(row.id) ?? row.created,
        extractedAt: row.extracted ?? Number.NaN,
        extractionStartSeen: started.has(row.id),
        completedMs: seenMs,
        chunkCount: row.chunk_count,
      })
    }
    const extracting = rows.some((row) => row.extracted === null)
    await sleep(extracting ? EXTRACTION_POLL_MS : COMPLETION_POLL_MS)
  }
  return memoryIds.map((id) => done.get(id)!)
}

export interface ExtractionPage {
  pageNumber: number
  method: 'TEXT' | 'OCR' | 'NONE'
  characters: number
  ocrConfidence?: number
}

/** The memory's per-page extraction outcome, as GET /v1/memories/{id} gives it. */
export async function extractionPages(restUrl: string, key: string, memoryId: string): Promise<ExtractionPage[]> {
  const response = await fetch(`${restUrl}/v1/memories/${memoryId}`, { headers: { authorization: `Bearer ${key}` } })
  const text = await response.text()
  if (!response.ok) throw new Error(`GET memory ${memoryId}: ${response.status} ${text.slice(0, 500)}`)
  return (JSON.parse(text) as { extraction?: { pages: ExtractionPage[] } }).extraction?.pages ?? []
}
