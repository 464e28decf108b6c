import crypto from 'node:crypto'
import { Counter, Histogram, type Registry } from 'prom-client'
import type { Sql } from '../../db/database.js'
import type { ChunkVector } from '../../db/sql/chunks.js'
import * as chunksSql from '../../db/sql/chunks.js'
import type { MemoryRow } from '../../db/sql/memories.js'
import * as memoriesSql from '../../db/sql/memories.js'
import type { ProbeTargetRow } from '../../db/sql/probes.js'
import * as probesSql from '../../db/sql/probes.js'
import * as spacesSql from '../../db/sql/spaces.js'
import { chunkText } from '../../domain/chunking/chunk-text.js'
import type { ChunkingConfig } from '../../domain/chunking/chunking-config.js'
import {
  MEMORY_INGEST_JOB,
  type MemoryIngestPayload,
  SPACE_BACKFILL_JOB,
  type SpaceBackfillPayload,
} from '../../domain/job-kinds.js'
import { providerAccess } from '../../domain/provider-access.js'
import { FOREIGN_KEY_VIOLATION } from '../../domain/registry.js'
import {
  DEFAULT_EMBEDDING_POLICY,
  type EmbeddingCall,
  EmbeddingError,
  type EmbeddingPolicy,
  embedderProfile,
  embedTexts,
} from '../../embedding/embedding-client.js'
import type { SecretBox } from '../../secrets/secret-box.js'
import { type JobHandler, PermanentJobError } from '../job-processor.js'

/** Transient failures are retried inside one run (EmbeddingPolicy), then by the queue this many times in all. */
export const INGEST_MAX_ATTEMPTS = 5
/** Memories a back-fill run embeds before it hands over to a fresh job (so no run outlives its lease). */
export const BACKFILL_MEMORIES_PER_RUN = 20
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export interface MemoryJobDependencies {
  sql: Sql
  secrets: () => SecretBox
  registry: Registry
  enqueue: (kind: string, payload: Record<string, unknown>) => Promise<unknown>
  policy?: Partial<EmbeddingPolicy>
}

interface MemoryMetrics {
  ingested: Counter<'outcome'>
  requests: Counter<'provider_type' | 'outcome'>
  latency: Histogram<'provider_type'>
}

/** Prometheus metrics of the memory core, registered once per registry. */
function memoryMetrics(registry: Registry): MemoryMetrics {
  const existing = registry.getSingleMetric('memsvc_memories_ingested_total')
  if (existing) {
    return {
      ingested: existing as Counter<'outcome'>,
      requests: registry.getSingleMetric('memsvc_embedding_requests_total') as Counter<'provider_type' | 'outcome'>,
      latency: registry.getSingleMetric('memsvc_embedding_request_duration_seconds') as Histogram<'provider_type'>,
    }
  }
  return {
    ingested: new Counter({
      name: 'memsvc_memories_ingested_total',
      help: 'Memories whose ingest finished, by outcome (completed, failed).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    requests: new Counter({
      name: 'memsvc_embedding_requests_total',
      help: 'Embedding requests to providers, by provider type and outcome (ok, retried, failed).',
      labelNames: ['provider_type', 'outcome'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'memsvc_embedding_request_duration_seconds',
      help: 'Duration of embedding requests to providers.',
      labelNames: ['provider_type'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  }
}

/** Everything needed to call one embedder of a space, from its registration row. */
function embeddingCall(deps: MemoryJobDependencies, metrics: MemoryMetrics, target: ProbeTargetRow): EmbeddingCall {
  const providerType = target.provider_type
  return {
    embedder: embedderProfile(target),
    access: providerAccess(deps.secrets(), 'embedders', target),
    policy: { ...DEFAULT_EMBEDDING_POLICY, ...deps.policy },
    observe: (outcome, seconds) => {
      metrics.requests.inc({ provider_type: providerType, outcome })
      metrics.latency.observe({ provider_type: providerType }, seconds)
    },
  }
}

/** An embedder's registration row, read on its own (a back-fill names one embedder). */
async function findEmbedderTarget(sql: Sql, embedderId: string): Promise<ProbeTargetRow> {
  const target = await probesSql.findProbeTarget(sql, 'embedders', embedderId)
  if (!target) throw new Error(`embedder ${embedderId} was deleted meanwhile`)
  return target
}

async function embedWithEach(
  deps: MemoryJobDependencies,
  metrics: MemoryMetrics,
  targets: ProbeTargetRow[],
  chunkIds: string[],
  texts: string[],
): Promise<ChunkVector[]> {
  const vectors: ChunkVector[] = []
  for (const target of targets) {
    const embeddings = await embedTexts(embeddingCall(deps, metrics, target), texts)
    embeddings.forEach((embedding, index) =>
      vectors.push({ chunkId: chunkIds[index]!, embedderId: target.id, embedding }),
    )
  }
  return vectors
}

/**
 * Takes the memory into processing and reads its space's embedders with their
 * registrations (one statement however many embedders). Jobs name the memory's space, so
 * both go out at once; the embedders are read again, after, for the memory's own space when
 * the job named none (queued before jobs carried spaceId) or another (the memory was
 * deleted and its id, which a client may choose, reused in another space).
 */
async function startWithTargets(
  sql: Sql,
  memoryId: string,
  spaceId: string | undefined,
): Promise<{ memory: (MemoryRow & { content: string }) | undefined; targets: ProbeTargetRow[] }> {
  const [memory, named] = await Promise.all([
    memoriesSql.startProcessing(sql, memoryId),
    spaceId === undefined ? [] : spacesSql.listSpaceEmbedderTargets(sql, [spaceId]),
  ])
  if (!memory) return { memory, targets: [] }
  if (memory.space_id === spaceId) return { memory, targets: named }
  return { memory, targets: await spacesSql.listSpaceEmbedderTargets(sql, [memory.space_id]) }
}

/**
 * memory.ingest: PENDING → PROCESSING → COMPLETED | FAILED. Chunks the content, embeds
 * every chunk with every embedder of the space, then in one transaction replaces whatever
 * an earlier run left with the chunks and vectors and marks the memory COMPLETED: a run
 * killed at any point leaves either nothing or everything, so a re-run never duplicates.
 * Permanent provider errors (4xx, wrong dimensionality) end FAILED at once; transient ones
 * are retried (inside the run, then by the queue) and end FAILED on the last attempt.
 */
export function memoryIngestJob(deps: MemoryJobDependencies): JobHandler<MemoryIngestPayload> {
  const metrics = memoryMetrics(deps.registry)
  return {
    kind: MEMORY_INGEST_JOB,
    maxAttempts: INGEST_MAX_ATTEMPTS,
    async run({ memoryId, spaceId }, attempt) {
      const { memory, targets } = await startWithTargets(deps.sql, memoryId, spaceId)
      if (!memory) return // deleted, or finished by an earlier run whose job was not marked done
      const pieces = chunkText(memory.content, memory.chunking as ChunkingConfig)
      const chunks = pieces.map((piece, index) => ({
        id: crypto.randomUUID(),
        chunk_index: index,
        text: piece.text,
        start_offset: piece.startOffset,
        end_offset: piece.endOffset,
      }))
      let vectors: ChunkVector[]
      try {
        vectors = await embedWithEach(
          deps,
          metrics,
          targets,
          chunks.map((chunk) => chunk.id),
          chunks.map((chunk) => chunk.text),
        )
      } catch (error) {
        const permanent = error instanceof EmbeddingError && error.permanent
        if (!permanent && attempt < INGEST_MAX_ATTEMPTS) throw error
        await memoriesSql.failProcessing(deps.sql, memoryId, (error as Error).message)
        metrics.ingested.inc({ outcome: 'failed' })
        throw new PermanentJobError((error as Error).message)
      }
      const stored = await deps.sql.begin(async (tx) => {
        // First, and awaited before any write is sent: it locks the memory's row and checks
        // it is still PROCESSING in one statement, so a concurrent run (an expired lease)
        // writes after this one (and then finds it COMPLETED), not beside it. Marking it
        // COMPLETED before the chunks are written is safe: both commit together or not at all.
        if (!(await memoriesSql.completeProcessing(tx, memoryId, chunks.length))) return false
        await chunksSql.replaceChunks(tx, memoryId, memory.space_id, chunks, vectors)
        return true
      })
      if (stored) metrics.ingested.inc({ outcome: 'completed' })
    },
  }
}

/**
 * space.backfill_embedder: writes an embedder newly added to a space its vectors for the
 * memories already there, BACKFILLING → READY with progress. Each run does a bounded batch
 * and queues the next; asking for what is still missing each time makes it idempotent.
 */
export function spaceBackfillJob(deps: MemoryJobDependencies): JobHandler<SpaceBackfillPayload> {
  const metrics = memoryMetrics(deps.registry)
  return {
    kind: SPACE_BACKFILL_JOB,
    maxAttempts: INGEST_MAX_ATTEMPTS,
    async run({ spaceId, embedderId }, attempt) {
      const member = await spacesSql.findSpaceEmbedder(deps.sql, spaceId, embedderId)
      if (!member) return // removed from the space, or the space is gone
      const memoryIds = await chunksSql.memoriesMissingVectors(deps.sql, spaceId, embedderId, BACKFILL_MEMORIES_PER_RUN)
      try {
        for (const memoryId of memoryIds) {
          const chunks = await chunksSql.listChunks(deps.sql, memoryId)
          const vectors = await embedWithEach(
            deps,
            metrics,
            [await findEmbedderTarget(deps.sql, embedderId)],
            chunks.map((chunk) => chunk.id),
            chunks.map((chunk) => chunk.text),
          )
          try {
            await deps.sql.begin((tx) => chunksSql.insertVectors(tx, memoryId, spaceId, vectors))
          } catch (error) {
            // The memory was deleted or re-chunked meanwhile: its own ingest covers this embedder.
            if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error
          }
        }
      } catch (error) {
        const permanent = error instanceof EmbeddingError && error.permanent
        if (!permanent && attempt < INGEST_MAX_ATTEMPTS) throw error
        await spacesSql.recordBackfillProgress(deps.sql, spaceId, embedderId, {
          done: member.backfill_done,
          total: member.backfill_total,
          ready: false,
          error: (error as Error).message,
        })
        throw new PermanentJobError((error as Error).message)
      }
      const remaining = await chunksSql.countMemoriesMissingVectors(deps.sql, spaceId, embedderId)
      const total = Math.max(member.backfill_total, remaining)
      await spacesSql.recordBackfillProgress(deps.sql, spaceId, embedderId, {
        done: total - remaining,
        total,
        ready: remaining === 0,
      })
      if (remaining > 0) await deps.enqueue(SPACE_BACKFILL_JOB, { spaceId, embedderId })
    },
  }
}
