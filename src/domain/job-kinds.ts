/**
 * The kinds of background job the domain queues, and what each carries. No imports: the
 * domain queues these and the handlers in src/jobs/handlers run them, so both read them
 * from here and neither depends on the other through them.
 */

/** Writes a batch of lastUsedAt stamps that authentication collected in memory. */
export const API_KEY_USAGE_JOB = 'apikey.record_usage'

export interface ApiKeyUsagePayload {
  usage: Array<{ id: string; usedAt: number }>
}

/** Calls a registered embedder or LLM the way memsvc will use it and records the outcome. */
export const MODEL_PROBE_JOB = 'model.probe'

export type ProbedResource = 'EMBEDDER' | 'LLM' | 'RERANKER'

export interface ModelProbePayload {
  resource: ProbedResource
  id: string
}

/** Chunk, embed with every embedder of the space, store: one job per memory. */
export const MEMORY_INGEST_JOB = 'memory.ingest'
export interface MemoryIngestPayload {
  memoryId: string
  /**
   * The memory's space, so the job can read the space's embedders while it takes the memory
   * into processing, not after. Absent in jobs queued before it was added.
   */
  spaceId?: string
}

/** Write one embedder's vectors for the memories a space already holds, a batch per run. */
export const SPACE_BACKFILL_JOB = 'space.backfill_embedder'
export interface SpaceBackfillPayload {
  spaceId: string
  embedderId: string
}

export interface JobPayloads {
  [API_KEY_USAGE_JOB]: ApiKeyUsagePayload
  [MODEL_PROBE_JOB]: ModelProbePayload
  [MEMORY_INGEST_JOB]: MemoryIngestPayload
  [SPACE_BACKFILL_JOB]: SpaceBackfillPayload
  [MEMORY_EXTRACT_JOB]: MemoryExtractPayload
}

export type JobKind = keyof JobPayloads

/**
 * Extract a document memory's text (PDF, Office, HTML, images through OCR), then queue its
 * ingest: one job per document, before chunking.
 */
export const MEMORY_EXTRACT_JOB = 'memory.extract'
export interface MemoryExtractPayload {
  memoryId: string
  spaceId: string
}
