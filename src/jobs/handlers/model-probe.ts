import type { Sql } from '../../db/database.js'
import type { StoredProbe } from '../../db/sql/probes.js'
import * as probesSql from '../../db/sql/probes.js'
import * as providerTargetsSql from '../../db/sql/provider-targets.js'
import { MODEL_PROBE_JOB, type ModelProbePayload } from '../../domain/job-kinds.js'
import { probeTable } from '../../domain/probes.js'
import { openProviderAccess } from '../../domain/registered-providers.js'
import { UnsupportedCredentialError } from '../../providers/credentials.js'
import { postJson } from '../../providers/http.js'
import {
  chatProbeRequest,
  embeddingProbeRequest,
  firstEmbedding,
  looksLikeChatCompletion,
  rerankProbeRequest,
  rerankScores,
} from '../../providers/protocol.js'
import type { SecretBox } from '../../secrets/secret-box.js'
import { type JobHandler, PermanentJobError } from '../job-processor.js'

export const DEFAULT_PROBE_TIMEOUT_MS = 10_000
/** A probe answer is tiny; anything much larger is not a provider we understand. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024

class ProbeFailure extends Error {
  constructor(
    message: string,
    readonly permanent = false,
    readonly observedDimensionality?: number,
  ) {
    super(message)
  }
}

/**
 * Calls the provider the way memsvc will use it (the embedding path with a short
 * input, the rerank path with one document, or the chat path asking for one token) with the stored credentials, and
 * records status, latency and error on the registration. A failed call fails the
 * job, so it is retried with backoff; a dimensionality mismatch is recorded and
 * not retried, since calling again cannot change it.
 */
export function modelProbeJob(
  sql: Sql,
  secrets: SecretBox,
  timeoutMs = DEFAULT_PROBE_TIMEOUT_MS,
): JobHandler<ModelProbePayload> {
  return {
    kind: MODEL_PROBE_JOB,
    maxAttempts: 3,
    async run({ resource, id }) {
      const table = probeTable(resource)
      const target = await providerTargetsSql.findProviderTarget(sql, table, id)
      if (!target) throw new PermanentJobError(`${resource.toLowerCase()} ${id} no longer exists`)
      const { credential, redact } = openProviderAccess(secrets, table, target)
      const started = performance.now()
      let probe: StoredProbe
      let failure: ProbeFailure | undefined
      try {
        const subject = {
          providerType: target.provider_type,
          endpointUrl: target.endpoint_url,
          apiPath: target.api_path,
          modelIdentifier: target.model_identifier,
        }
        const request =
          resource === 'EMBEDDER'
            ? embeddingProbeRequest(subject, credential)
            : resource === 'RERANKER'
              ? rerankProbeRequest(subject, credential)
              : chatProbeRequest(subject, credential)
        const body = await postJson(request, { timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, redact })
        if (resource === 'EMBEDDER') {
          const vector = firstEmbedding(body)
          if (!vector) throw new ProbeFailure('the response carries no embedding vector')
          if (target.distribution_type !== 'SPARSE' && vector.length !== target.dimensionality) {
            throw new ProbeFailure(
              `the provider returned ${vector.length} dimensions; the registration says ${target.dimensionality}`,
              true,
              vector.length,
            )
          }
          probe = {
            status: 'OK',
            checkedAt: Date.now(),
            latencyMs: Math.round(performance.now() - started),
            observedDimensionality: vector.length,
          }
        } else if (resource === 'RERANKER') {
          if (!rerankScores(body, 1)) throw new ProbeFailure('the response is not a rerank answer')
          probe = { status: 'OK', checkedAt: Date.now(), latencyMs: Math.round(performance.now() - started) }
        } else {
          if (!looksLikeChatCompletion(body)) throw new ProbeFailure('the response is not a chat completion')
          probe = { status: 'OK', checkedAt: Date.now(), latencyMs: Math.round(performance.now() - started) }
        }
      } catch (error) {
        failure =
          error instanceof ProbeFailure
            ? error
            : error instanceof UnsupportedCredentialError
              ? new ProbeFailure(error.message, true)
              : new ProbeFailure(redact((error as Error).message ?? String(error)))
        probe = {
          status: 'FAILED',
          checkedAt: Date.now(),
          latencyMs: Math.round(performance.now() - started),
          error: failure.message,
          ...(failure.observedDimensionality === undefined
            ? {}
            : { observedDimensionality: failure.observedDimensionality }),
        }
      }
      await probesSql.recordProbe(sql, table, id, probe)
      if (failure) throw failure.permanent ? new PermanentJobError(failure.message) : failure
    },
  }
}
