import type { DomainContext } from '../../domain/context.js'
import type { JobProcessor } from '../job-processor.js'
import { apiKeyUsageJob } from './api-key-usage.js'
import { modelProbeJob } from './model-probe.js'

export interface JobTuning {
  /** How long a connectivity probe waits for the provider. */
  probeTimeoutMs?: number
}

/** Every job kind this server version runs. */
export function registerJobHandlers(jobs: JobProcessor, context: DomainContext, tuning: JobTuning = {}): void {
  jobs.register(apiKeyUsageJob(jobs.sql))
  jobs.register(modelProbeJob(context, tuning.probeTimeoutMs))
}
