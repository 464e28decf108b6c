import type { SecretBox } from '../../secrets/secret-box.js'
import type { JobProcessor } from '../job-processor.js'
import { apiKeyUsageJob } from './api-key-usage.js'
import { modelProbeJob } from './model-probe.js'

export interface JobTuning {
  /** How long a connectivity probe waits for the provider. */
  probeTimeoutMs?: number
}

/** Every job kind this server version runs (src/domain/job-kinds.ts names them); all run on the background pool. */
export function registerJobHandlers(jobs: JobProcessor, secrets: SecretBox, tuning: JobTuning = {}): void {
  jobs.register(apiKeyUsageJob(jobs.sql))
  jobs.register(modelProbeJob(jobs.sql, secrets, tuning.probeTimeoutMs))
}
