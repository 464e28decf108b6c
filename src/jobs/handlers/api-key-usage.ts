import type { Sql } from '../../db/database.js'
import * as apiKeysSql from '../../db/sql/api-keys.js'
import { API_KEY_USAGE_JOB, type ApiKeyUsagePayload } from '../../domain/job-kinds.js'
import type { JobHandler } from '../job-processor.js'

/** Writes a batch of lastUsedAt stamps collected in memory by authentication. */
export function apiKeyUsageJob(sql: Sql): JobHandler<ApiKeyUsagePayload> {
  return {
    kind: API_KEY_USAGE_JOB,
    maxAttempts: 5,
    run: (payload) =>
      apiKeysSql.recordLastUsed(
        sql,
        payload.usage.map((entry) => ({ id: entry.id, usedAt: new Date(entry.usedAt) })),
      ),
  }
}
