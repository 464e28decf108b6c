import type { Logger } from '../../observability/logger.js'
import type { EmbeddingPolicy } from '../../providers/embed.js'
import type { LocalModels } from '../../providers/local/local-models.js'
import type { SecretBox } from '../../secrets/secret-box.js'
import type { JobProcessor } from '../job-processor.js'
import { apiKeyUsageJob } from './api-key-usage.js'
import { type DocumentExtractor, memoryExtractJob } from './memory-extract.js'
import { type MemoryJobDependencies, memoryIngestJob, providerCallsFor, spaceBackfillJob } from './memory-ingest.js'
import { modelProbeJob } from './model-probe.js'

export interface JobTuning {
  /** How long a connectivity probe waits for the provider. */
  probeTimeoutMs?: number
  /** Batching, timeouts, retries and the stall cool-down of embedding calls. */
  embeddingPolicy?: Partial<EmbeddingPolicy>
}

/**
 * Every job kind this server version runs (src/domain/job-kinds.ts names them); all run on
 * the background pool. `spaceChanged` is told of each write to a space's embedders, after it commits.
 */
/** The server's parts the handlers call: its key's operations, its local models, its document threads. */
export interface JobServices {
  secrets: SecretBox
  localModels: LocalModels
  extractor: DocumentExtractor
  log: Logger
}

export function registerJobHandlers(
  jobs: JobProcessor,
  { secrets, localModels, extractor, log }: JobServices,
  tuning: JobTuning = {},
  spaceChanged: (spaceId: string) => void = () => {},
): void {
  jobs.register(apiKeyUsageJob(jobs.sql))
  jobs.register(modelProbeJob(jobs.sql, secrets, localModels, tuning.probeTimeoutMs))
  const memoryDependencies: MemoryJobDependencies = {
    sql: jobs.sql,
    secrets: () => secrets,
    registry: jobs.registry,
    enqueue: (kind, payload) => jobs.enqueue(jobs.sql, kind, payload),
    policy: tuning.embeddingPolicy,
    // Ingest and back-fill call the same embedders: a stall one of them meets holds for both.
    providerCalls: providerCallsFor(tuning.embeddingPolicy),
    spaceChanged,
    localModels,
  }
  jobs.register(memoryIngestJob(memoryDependencies))
  jobs.register(
    memoryExtractJob({
      sql: jobs.sql,
      extractor,
      enqueue: (sql, kind, payload) => jobs.enqueue(sql, kind, payload),
      wake: () => jobs.wake(),
      log,
      registry: jobs.registry,
    }),
  )
  jobs.register(spaceBackfillJob(memoryDependencies))
}
