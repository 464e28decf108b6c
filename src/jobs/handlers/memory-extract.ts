import { Counter, Histogram, type Registry } from 'prom-client'
import type { Sql } from '../../db/database.js'
import * as documentsSql from '../../db/sql/documents.js'
import { documentKindOf } from '../../documents/document-types.js'
import {
  DEFAULT_EXTRACTION_LIMITS,
  DEFAULT_PAGE_IMAGE_DPI,
  type ExtractedDocument,
  ExtractionError,
  type ExtractionOptions,
  type ExtractionSink,
  type OcrMode,
} from '../../documents/extracted-document.js'
import type { ExtractionPool } from '../../documents/extraction-pool.js'
import { MEMORY_EXTRACT_JOB, MEMORY_INGEST_JOB, type MemoryExtractPayload } from '../../domain/job-kinds.js'
import type { Logger } from '../../observability/logger.js'
import { registeredOnce } from '../../observability/registered-once.js'
import { type JobHandler, PermanentJobError } from '../job-processor.js'

/** A document is extracted at most this many times; extraction itself is deterministic, so more would not help. */
export const EXTRACT_MAX_ATTEMPTS = 3
/** Progress is written at most this often while a document is extracted. */
const PROGRESS_INTERVAL_MS = 1_000
const MS_PER_SECOND = 1_000

/** What extracts a document: the server's extraction threads (src/documents/extraction-pool.ts), with OCR. */
export type DocumentExtractor = Pick<ExtractionPool, 'extract'>

export interface ExtractJobDependencies {
  sql: Sql
  extractor: DocumentExtractor
  /** Stores a job in the given transaction; `wake` runs it once that has committed. */
  enqueue: (sql: Sql, kind: string, payload: Record<string, unknown>) => Promise<unknown>
  wake: () => void
  log: Logger
  registry: Registry
}

/** Seconds an extraction took, from a small image to a scanned book. */
const EXTRACTION_SECONDS_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 1800]

interface ExtractionMetrics {
  documents: Counter<'kind' | 'outcome'>
  pages: Counter<'method'>
  seconds: Histogram<'kind'>
}

/** Prometheus metrics of extraction, registered once per registry. */
function extractionMetrics(registry: Registry): ExtractionMetrics {
  return {
    documents: registeredOnce(registry, Counter, {
      name: 'memsvc_documents_extracted_total',
      help: 'Documents whose extraction ended, by kind (pdf, docx, …) and outcome (completed, failed).',
      labelNames: ['kind', 'outcome'] as const,
    }),
    pages: registeredOnce(registry, Counter, {
      name: 'memsvc_document_pages_extracted_total',
      help: 'Pages, slides and images extracted, by how their text was obtained (TEXT, OCR, NONE).',
      labelNames: ['method'] as const,
    }),
    seconds: registeredOnce(registry, Histogram, {
      name: 'memsvc_document_extraction_duration_seconds',
      help: 'How long extracting a document took (reading it, OCR, page images).',
      labelNames: ['kind'] as const,
      buckets: EXTRACTION_SECONDS_BUCKETS,
    }),
  }
}

/** The stored options of a document memory, as extraction takes them. */
function extractionOptions(stored: Record<string, unknown>): ExtractionOptions {
  return {
    ocr: (stored.ocr as OcrMode | undefined) ?? 'AUTO',
    extractPageImages: stored.extractPageImages === true,
    pageImageDpi: typeof stored.pageImageDpi === 'number' ? stored.pageImageDpi : DEFAULT_PAGE_IMAGE_DPI,
    ocrLanguages: Array.isArray(stored.ocrLanguages) ? (stored.ocrLanguages as string[]) : ['eng'],
    limits: DEFAULT_EXTRACTION_LIMITS,
  }
}

/** The whole document in one buffer, read part by part: extraction libraries need random access to it. */
async function readContent(sql: Sql, contentId: string, bytes: number): Promise<Uint8Array> {
  const content = new Uint8Array(bytes)
  let offset = 0
  for await (const part of documentsSql.contentParts(sql, contentId)) {
    if (offset + part.length > bytes) throw new Error(`content ${contentId} holds more than its ${bytes} bytes`)
    content.set(part, offset)
    offset += part.length
  }
  if (offset !== bytes) throw new Error(`content ${contentId} holds ${offset} of its ${bytes} bytes`)
  return content
}

/**
 * memory.extract: PENDING → EXTRACTING → PROCESSING (with its text) and the ingest job, or
 * FAILED with the reason. The document's bytes are read from the database, extracted in the
 * extraction threads (OCR where the options ask), the pages rendered when asked are stored
 * as they come, and the text, its sections and the per-page outcome are written with the
 * ingest job in one transaction: a run killed at any point is run again from the start.
 */
export function memoryExtractJob(deps: ExtractJobDependencies): JobHandler<MemoryExtractPayload> {
  const metrics = extractionMetrics(deps.registry)
  async function run({ memoryId }: MemoryExtractPayload, attempt: number): Promise<void> {
    const memory = await documentsSql.startExtraction(deps.sql, memoryId)
    if (!memory) return // gone, or extracted by an earlier run
    const kind = documentKindOf(memory.content_type)
    if (!kind) {
      await documentsSql.failExtraction(deps.sql, memoryId, `${memory.content_type} is not a document type`, undefined)
      return
    }
    const options = extractionOptions(memory.document_options)
    let progress: Record<string, unknown> = { kind, stage: 'EXTRACTING', pagesDone: 0, pagesTotal: 0, pages: [] }
    let lastWrite = 0
    const sink: ExtractionSink = {
      progress(update) {
        progress = { ...progress, ...update }
        const now = Date.now()
        if (now - lastWrite < PROGRESS_INTERVAL_MS) return
        lastWrite = now
        documentsSql.recordExtractionProgress(deps.sql, memoryId, progress).catch((error: unknown) => {
          deps.log.warn('extraction progress not recorded', { memoryId, error: error as Error })
        })
      },
      pageImage: (pageNumber, png) => documentsSql.storePageImage(deps.sql, memoryId, pageNumber, Buffer.from(png)),
    }
    let document: ExtractedDocument
    const started = performance.now()
    try {
      const bytes = await readContent(deps.sql, memory.content_id, memory.content_bytes)
      document = await deps.extractor.extract(bytes, kind, options, sink)
    } catch (error) {
      if (!(error instanceof ExtractionError) && attempt < EXTRACT_MAX_ATTEMPTS) throw error
      const reason = error instanceof ExtractionError ? error.message : `extraction failed: ${(error as Error).message}`
      await documentsSql.failExtraction(deps.sql, memoryId, reason, { ...progress, stage: 'DONE' })
      metrics.documents.inc({ kind, outcome: 'failed' })
      throw new PermanentJobError(reason)
    }
    metrics.seconds.observe({ kind }, (performance.now() - started) / MS_PER_SECOND)
    metrics.documents.inc({ kind, outcome: 'completed' })
    for (const page of document.pages) metrics.pages.inc({ method: page.method })
    const extraction = {
      kind,
      stage: 'DONE',
      pagesDone: document.pages.length,
      pagesTotal: document.pages.length,
      pages: document.pages,
    }
    await deps.sql.begin(async (tx) => {
      const finished = await documentsSql.finishExtraction(tx, memoryId, {
        text: document.text,
        sections: document.sections,
        extraction,
      })
      if (finished) await deps.enqueue(tx as never, MEMORY_INGEST_JOB, { memoryId, spaceId: memory.space_id })
    })
    deps.wake()
  }
  return { kind: MEMORY_EXTRACT_JOB, maxAttempts: EXTRACT_MAX_ATTEMPTS, run }
}
