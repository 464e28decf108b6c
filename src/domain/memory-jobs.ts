/**
 * The memory core's job kinds and payloads. Import-free on purpose: use cases enqueue
 * these and the handlers (src/jobs/handlers) run them, without either importing the other.
 */

/** Chunk, embed with every embedder of the space, store: one job per memory. */
export const MEMORY_INGEST_JOB = 'memory.ingest'
export interface MemoryIngestPayload {
  memoryId: string
}

/** Write one embedder's vectors for the memories a space already holds, a batch per run. */
export const SPACE_BACKFILL_JOB = 'space.backfill_embedder'
export interface SpaceBackfillPayload {
  spaceId: string
  embedderId: string
}
