import crypto from 'node:crypto'
import { Counter, Histogram, type Registry } from 'prom-client'
import { chunkTextInTurns } from '../../chunking/chunk-text.js'
import type { ChunkingConfig } from '../../chunking/chunking-config.js'
import { conflictOf } from '../../db/conflicts.js'
import type { Sql } from '../../db/database.js'
import type { ChunkVector, EmbeddingTruncation, NewChunk } from '../../db/sql/chunks.js'
import * as chunksSql from '../../db/sql/chunks.js'
import * as memoriesSql from '../../db/sql/memories.js'
import type { ProviderTargetRow } from '../../db/sql/provider-targets.js'
import * as providerTargetsSql from '../../db/sql/provider-targets.js'
import * as spacesSql from '../../db/sql/spaces.js'
import { MAX_INDEXED_VECTOR_VALUE } from '../../db/vector-storage.js'
import { sourceOfSpan } from '../../documents/chunk-source.js'
import type { DocumentSection } from '../../documents/extracted-document.js'
import {
  MEMORY_INGEST_JOB,
  type MemoryIngestPayload,
  SPACE_BACKFILL_JOB,
  type SpaceBackfillPayload,
} from '../../domain/job-kinds.js'
import { embedderProfile, openProviderAccess } from '../../domain/registered-providers.js'
import { registeredOnce } from '../../observability/registered-once.js'
import {
  DEFAULT_EMBEDDING_POLICY,
  type EmbeddingCall,
  EmbeddingError,
  type EmbeddingPolicy,
  embedTextsReportingTruncation,
} from '../../providers/embed.js'
import type { LocalModels } from '../../providers/local/local-models.js'
import { ProviderCalls } from '../../providers/provider-calls.js'
import type { SecretBox } from '../../secrets/secret-box.js'
import { type JobHandler, PermanentJobError } from '../job-processor.js'
import { EmbedderLanes } from './embedder-lanes.js'

/** Transient failures are retried inside one run (EmbeddingPolicy), then by the queue this many times in all. */
export const INGEST_MAX_ATTEMPTS = 5
/**
 * Ingest jobs run together at most: one provider request per embedder for up to this many
 * one-chunk memories (at the default batch size of 32), one storing transaction.
 */
export const INGEST_BATCH_LIMIT = 16
/** Chunks of a run's memories embedded and stored together at most; a larger memory goes alone. */
const MAX_CHUNKS_PER_GROUP = 256
/** Memories a back-fill run embeds before it hands over to a fresh job (so no run outlives its lease). */
export const BACKFILL_MEMORIES_PER_RUN = 20
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export interface MemoryJobDependencies {
  sql: Sql
  secrets: () => SecretBox
  registry: Registry
  enqueue: (kind: string, payload: Record<string, unknown>) => Promise<unknown>
  policy?: Partial<EmbeddingPolicy>
  /** This process's calls to each embedder, shared by the kinds that embed (a stalled embedder is stalled for all). */
  providerCalls?: ProviderCalls
  /** Told after a write to a space's embedder rows commits (the server's space rows cache). */
  spaceChanged?: (spaceId: string) => void
  /** The server's local models, for LOCAL embedders. */
  localModels?: LocalModels
}

interface MemoryMetrics {
  ingested: Counter<'outcome'>
  requests: Counter<'provider_type' | 'outcome'>
  latency: Histogram<'provider_type'>
}

/** Prometheus metrics of the memory core, registered once per registry. */
function memoryMetrics(registry: Registry): MemoryMetrics {
  return {
    ingested: registeredOnce(registry, Counter, {
      name: 'memsvc_memories_ingested_total',
      help: 'Memories whose ingest finished, by outcome (completed, failed).',
      labelNames: ['outcome'] as const,
    }),
    requests: registeredOnce(registry, Counter, {
      name: 'memsvc_embedding_requests_total',
      help: 'Embedding requests to providers, by provider type and outcome (ok, retried, failed).',
      labelNames: ['provider_type', 'outcome'] as const,
    }),
    latency: registeredOnce(registry, Histogram, {
      name: 'memsvc_embedding_request_duration_seconds',
      help: 'Duration of embedding requests to providers.',
      labelNames: ['provider_type'] as const,
      buckets: LATENCY_BUCKETS,
    }),
  }
}

/** One record of embedder calls for every kind that embeds, made once from the policy. */
export function providerCallsFor(policy: Partial<EmbeddingPolicy> | undefined): ProviderCalls {
  return new ProviderCalls(policy?.stallCooldownMs ?? DEFAULT_EMBEDDING_POLICY.stallCooldownMs!)
}

type EmbeddingDependencies = MemoryJobDependencies & { providerCalls: ProviderCalls }

/** The dependencies with a record of embedder calls: a handler made alone (in a test) keeps its own. */
const withProviderCalls = (deps: MemoryJobDependencies): EmbeddingDependencies => ({
  ...deps,
  providerCalls: deps.providerCalls ?? providerCallsFor(deps.policy),
})

/** Everything needed to call one embedder of a space, from its registration row. */
function embeddingCall(deps: EmbeddingDependencies, metrics: MemoryMetrics, target: ProviderTargetRow): EmbeddingCall {
  const providerType = target.provider_type
  return {
    embedder: embedderProfile(target),
    access: openProviderAccess(deps.secrets(), 'embedders', target),
    policy: { ...DEFAULT_EMBEDDING_POLICY, ...deps.policy },
    providerCalls: deps.providerCalls,
    maxVectorValue: MAX_INDEXED_VECTOR_VALUE,
    localModels: deps.localModels,
    observe: (outcome, seconds) => {
      metrics.requests.inc({ provider_type: providerType, outcome })
      metrics.latency.observe({ provider_type: providerType }, seconds)
    },
  }
}

/** An embedder's registration row, read on its own (a back-fill names one embedder). */
async function findEmbedderTarget(sql: Sql, embedderId: string): Promise<ProviderTargetRow> {
  const target = await providerTargetsSql.findProviderTarget(sql, 'embedders', embedderId)
  if (!target) throw new Error(`embedder ${embedderId} was deleted meanwhile`)
  return target
}

/**
 * Every chunk's vector from each embedder, and the chunks an embedder cut to its token limit
 * (by chunk id: which embedders, and how many tokens they kept).
 */
async function embedWithEach(
  deps: EmbeddingDependencies,
  metrics: MemoryMetrics,
  targets: ProviderTargetRow[],
  chunkIds: string[],
  texts: string[],
): Promise<{ vectors: ChunkVector[]; truncations: Map<string, EmbeddingTruncation> }> {
  const vectors: ChunkVector[] = []
  const truncations = new Map<string, EmbeddingTruncation>()
  for (const target of targets) {
    const embedded = await embedTextsReportingTruncation(embeddingCall(deps, metrics, target), texts)
    for (const [index, embedding] of embedded.vectors.entries())
      vectors.push({ chunkId: chunkIds[index]!, embedderId: target.id, embedding })
    for (const [index, truncation] of embedded.truncations.entries()) {
      if (!truncation) continue
      const chunkId = chunkIds[index]!
      truncations.set(chunkId, { ...truncations.get(chunkId), [target.id]: truncation })
    }
  }
  return { vectors, truncations }
}

/** One memory of an ingest run, chunked, and the run's jobs that named it. */
interface IngestItem {
  memory: memoriesSql.ProcessingMemoryRow
  attempt: number
  chunks: NewChunk[]
  /** Indexes into the run's jobs: usually one; a memory named by two jobs is ingested once for both. */
  jobs: number[]
}

const ingestedVersion = (item: IngestItem): memoriesSql.IngestedVersion => ({
  id: item.memory.id,
  contentVersion: item.memory.content_version,
})

/**
 * Takes the memories into processing and reads their spaces' embedders with their
 * registrations (one statement however many embedders). Jobs name the memory's space, so
 * both go out at once; the embedders are read again, after, for a memory's own space when
 * its job named none (queued before jobs carried spaceId) or another (the memory was
 * deleted and its id, which a client may choose, reused in another space).
 */
async function startWithTargets(
  sql: Sql,
  jobs: Array<{ payload: MemoryIngestPayload }>,
): Promise<{ memories: Array<memoriesSql.ProcessingMemoryRow>; targets: Map<string, ProviderTargetRow[]> }> {
  const named = [...new Set(jobs.flatMap((job) => (job.payload.spaceId === undefined ? [] : [job.payload.spaceId])))]
  const [memories, namedTargets] = await Promise.all([
    memoriesSql.startProcessing(sql, [...new Set(jobs.map((job) => job.payload.memoryId))]),
    spacesSql.listSpaceEmbedderTargets(sql, named),
  ])
  const unread = [...new Set(memories.map((memory) => memory.space_id))].filter((space) => !named.includes(space))
  const targets = new Map<string, ProviderTargetRow[]>(
    [...named, ...unread].map((space): [string, ProviderTargetRow[]] => [space, []]),
  )
  for (const target of [...namedTargets, ...(await spacesSql.listSpaceEmbedderTargets(sql, unread))])
    targets.get(target.space_id)?.push(target)
  return { memories, targets }
}

/**
 * The run's memories in groups embedded and stored together: one space each (the same
 * embedders), at most MAX_CHUNKS_PER_GROUP chunks unless one memory alone has more.
 */
function groupsOf(items: IngestItem[]): IngestItem[][] {
  const groups: IngestItem[][] = []
  const open = new Map<string, { items: IngestItem[]; chunks: number }>()
  for (const item of items) {
    let group = open.get(item.memory.space_id)
    if (group && group.chunks + item.chunks.length > MAX_CHUNKS_PER_GROUP) group = undefined
    if (!group) {
      group = { items: [], chunks: 0 }
      open.set(item.memory.space_id, group)
      groups.push(group.items)
    }
    group.items.push(item)
    group.chunks += item.chunks.length
  }
  return groups
}

/**
 * memory.ingest: PENDING → PROCESSING → COMPLETED | FAILED. Chunks the content, embeds
 * every chunk with every embedder of the space, then in one transaction replaces whatever
 * an earlier run left with the chunks and vectors and marks the memory COMPLETED: a run
 * killed at any point leaves either nothing or everything, so a re-run never duplicates.
 * Permanent provider errors (4xx, wrong dimensionality) end FAILED at once; transient ones
 * are retried (inside the run, then by the queue) and end FAILED on the last attempt.
 *
 * Up to INGEST_BATCH_LIMIT jobs run together: their memories are taken into processing in
 * one statement, the chunks of a space's memories go to each embedder in shared requests,
 * and are stored in one transaction. Each memory still ends on its own: when a shared
 * request is refused for good, or a shared store fails, each memory of the group is tried
 * alone, so only the one the provider or the database refuses fails; a refusal that is the
 * embedder's own (its dimensionality) fails the whole group at once.
 *
 * Fairness: a job's lane is its space, so a run holds one space's memories, lanes share the
 * workers, and a space whose embedder is busy or stalled is held back from the claims
 * (EmbedderLanes): one user's stalled embedder does not hold every worker, or the memories
 * of other spaces that would have shared its runs. A stalled embedder is not called again
 * until its cool-down ends (ProviderCalls); meanwhile its memories' attempts fail at once
 * and are retried after the cool-down, so they end FAILED, naming the embedder and the
 * timeout, within INGEST_MAX_ATTEMPTS × (request timeout + cool-down): five minutes by default.
 */
export function memoryIngestJob(given: MemoryJobDependencies): JobHandler<MemoryIngestPayload> {
  const deps = withProviderCalls(given)
  const metrics = memoryMetrics(deps.registry)
  const lanes = new EmbedderLanes(deps.providerCalls)

  /** The memories end FAILED with the error when it is permanent or their attempts are spent; otherwise their jobs retry. */
  async function fail(items: IngestItem[], error: unknown, results: Array<PromiseSettledResult<void>>) {
    const message = (error as Error)?.message ?? String(error)
    const permanent = (error instanceof EmbeddingError && error.permanent) || error instanceof PermanentJobError
    const final = items.filter((item) => permanent || item.attempt >= INGEST_MAX_ATTEMPTS)
    let outcome: unknown = new PermanentJobError(message)
    try {
      await memoriesSql.failProcessing(deps.sql, final.map(ingestedVersion), message)
      if (final.length > 0) metrics.ingested.inc({ outcome: 'failed' }, final.length)
    } catch (recordError) {
      // The memories stay PROCESSING; their jobs fail with this, and a retry may finish them.
      outcome = recordError
    }
    for (const item of items) {
      const reason = final.includes(item) ? outcome : error
      for (const job of item.jobs) results[job] = { status: 'rejected', reason }
    }
  }

  /** Embeds and stores one group; settles its jobs in `results`. */
  async function ingest(group: IngestItem[], targets: ProviderTargetRow[], results: Array<PromiseSettledResult<void>>) {
    const chunks = group.flatMap((item) => item.chunks)
    let vectors: ChunkVector[]
    try {
      const embedded = await embedWithEach(
        deps,
        metrics,
        targets,
        chunks.map((chunk) => chunk.id),
        chunks.map((chunk) => chunk.text),
      )
      vectors = embedded.vectors
      for (const chunk of chunks) chunk.embedding_truncation = embedded.truncations.get(chunk.id) ?? null
    } catch (error) {
      if (group.length > 1 && error instanceof EmbeddingError && error.permanent && error.refused === 'request') {
        // The provider may refuse one input of many: each memory alone finds which.
        for (const item of group) await ingest([item], targets, results)
        return
      }
      return fail(group, error, results)
    }
    const memoryOfChunk = new Map(group.flatMap((item) => item.chunks.map((chunk) => [chunk.id, item] as const)))
    const byMemory = new Map(group.map((item) => [item, [] as ChunkVector[]]))
    for (const vector of vectors) byMemory.get(memoryOfChunk.get(vector.chunkId)!)!.push(vector)
    await store(
      group.map((item) => ({
        item,
        rows: {
          memoryId: item.memory.id,
          spaceId: item.memory.space_id,
          chunks: item.chunks,
          vectors: byMemory.get(item)!,
        },
      })),
      results,
    )
  }

  /** Stores embedded memories in one transaction; settles their jobs in `results`. */
  async function store(
    memories: Array<{ item: IngestItem; rows: chunksSql.MemoryChunks }>,
    results: Array<PromiseSettledResult<void>>,
  ) {
    try {
      const completed = await deps.sql.begin(async (tx) => {
        // First, and awaited before any write is sent: it locks the memories' rows and checks
        // they are still PROCESSING in one statement, so a concurrent run (an expired lease)
        // writes after this one (and then finds them COMPLETED), not beside it. Marking them
        // COMPLETED before the chunks are written is safe: all commit together or not at all.
        const completed = await memoriesSql.completeProcessing(
          tx,
          memories.map(({ item }) => ({ ...ingestedVersion(item), chunkCount: item.chunks.length })),
        )
        await chunksSql.replaceChunks(
          tx,
          memories.flatMap(({ rows }) => (completed.has(rows.memoryId) ? [rows] : [])),
        )
        return completed
      })
      if (completed.size > 0) metrics.ingested.inc({ outcome: 'completed' }, completed.size)
      for (const { item } of memories)
        for (const job of item.jobs) results[job] = { status: 'fulfilled', value: undefined }
    } catch (error) {
      if (memories.length === 1) return fail([memories[0]!.item], error, results)
      // Something in one memory's rows may be what the database refuses: each alone finds which.
      for (const memory of memories) await store([memory], results)
    }
  }

  async function runMany(jobs: Array<{ payload: MemoryIngestPayload; attempt: number }>) {
    // A job whose memory is gone, or was finished by an earlier run whose job was not marked done, has nothing to do.
    const results: Array<PromiseSettledResult<void>> = jobs.map(() => ({ status: 'fulfilled', value: undefined }))
    const { memories, targets } = await startWithTargets(deps.sql, jobs)
    for (const [spaceId, spaceTargets] of targets)
      lanes.remember(
        spaceId,
        spaceTargets.map((target) => target.id),
      )
    const items: IngestItem[] = []
    for (const memory of memories) {
      const named = jobs.flatMap((job, index) => (job.payload.memoryId === memory.id ? [index] : []))
      const item: IngestItem = {
        memory,
        attempt: Math.max(...named.map((index) => jobs[index]!.attempt)),
        chunks: [],
        jobs: named,
      }
      try {
        // In turns: the largest memory is seconds of chunking, and a batch holds up to 16 of them.
        const pieces = await chunkTextInTurns(memory.ingest_content, memory.ingest_chunking as ChunkingConfig)
        // A document's sections say where each chunk came from (its page, slide, sheet, headings).
        const sections = memory.document_sections as DocumentSection[] | null | undefined
        item.chunks = pieces.map((piece, index) => ({
          id: crypto.randomUUID(),
          chunk_index: index,
          text: piece.text,
          start_offset: piece.startOffset,
          end_offset: piece.endOffset,
          source: sections ? { ...sourceOfSpan(sections, piece.startOffset, piece.endOffset) } : null,
        }))
        items.push(item)
      } catch (error) {
        // The same content and settings would fail the same way again.
        await fail([item], new PermanentJobError(`chunking failed: ${(error as Error).message}`), results)
      }
    }
    for (const group of groupsOf(items)) await ingest(group, targets.get(group[0]!.memory.space_id) ?? [], results)
    return results
  }

  return {
    kind: MEMORY_INGEST_JOB,
    maxAttempts: INGEST_MAX_ATTEMPTS,
    batch: { limit: INGEST_BATCH_LIMIT, runMany },
    lanes: { payloadKey: 'spaceId', held: (limit) => lanes.held(limit) },
    async run(payload, attempt) {
      const [result] = await runMany([{ payload, attempt }])
      if (result?.status === 'rejected') throw result.reason
    },
  }
}

/**
 * space.backfill_embedder: writes an embedder newly added to a space its vectors for the
 * memories already there, BACKFILLING → READY with progress. Each run does a bounded batch
 * and queues the next; asking for what is still missing each time makes it idempotent.
 */
export function spaceBackfillJob(given: MemoryJobDependencies): JobHandler<SpaceBackfillPayload> {
  const deps = withProviderCalls(given)
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
          const { vectors, truncations } = await embedWithEach(
            deps,
            metrics,
            [await findEmbedderTarget(deps.sql, embedderId)],
            chunks.map((chunk) => chunk.id),
            chunks.map((chunk) => chunk.text),
          )
          try {
            await deps.sql.begin(async (tx) => {
              await chunksSql.insertVectors(tx, memoryId, spaceId, vectors)
              await chunksSql.recordTruncations(tx, truncations)
            })
          } catch (error) {
            // The memory was deleted or re-chunked meanwhile: its own ingest covers this embedder.
            if (conflictOf(error) !== 'missing-reference') throw error
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
        deps.spaceChanged?.(spaceId)
        throw new PermanentJobError((error as Error).message)
      }
      const remaining = await chunksSql.countMemoriesMissingVectors(deps.sql, spaceId, embedderId)
      const total = Math.max(member.backfill_total, remaining)
      await spacesSql.recordBackfillProgress(deps.sql, spaceId, embedderId, {
        done: total - remaining,
        total,
        ready: remaining === 0,
      })
      deps.spaceChanged?.(spaceId)
      if (remaining > 0) await deps.enqueue(SPACE_BACKFILL_JOB, { spaceId, embedderId })
    },
  }
}
