import type { Sql } from '../../db/database.js'
import type { StoredProbe } from '../../db/sql/probes.js'
import * as probesSql from '../../db/sql/probes.js'
import * as providerTargetsSql from '../../db/sql/provider-targets.js'
import { MODEL_PROBE_JOB, type ModelProbePayload } from '../../domain/job-kinds.js'
import { probeTable } from '../../domain/probes.js'
import { openProviderAccess } from '../../domain/registered-providers.js'
import { UnsupportedCredentialError } from '../../providers/credentials.js'
import { postJson } from '../../providers/http.js'
import type { LocalModels } from '../../providers/local/local-models.js'
import { LocalModelError } from '../../providers/local/model-directory.js'
import {
  chatProbeRequest,
  embeddingProbeRequest,
  firstEmbedding,
  looksLikeChatCompletion,
  PROBE_INPUT,
  rerankProbeRequest,
  rerankScores,
} from '../../providers/protocol.js'
import type { SecretBox } from '../../secrets/secret-box.js'
import { LOCAL_PROVIDER_TYPE } from '../../validation/registry-values.js'
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
 * A LOCAL embedder's probe: its model is loaded (by an inference thread, if none holds it
 * yet) and embeds the probe input. A model that is gone or cannot be used is not retried.
 */
async function probeLocalModel(localModels: LocalModels, modelIdentifier: string): Promise<unknown> {
  try {
    return (await localModels.embed(modelIdentifier, [PROBE_INPUT], 'query')).vectors
  } catch (error) {
    if (error instanceof LocalModelError) throw new ProbeFailure(error.message, true)
    throw error
  }
}

/**
 * Calls the provider the way memsvc will use it (the embedding path with a short
 * input, the rerank path with one document, or the chat path asking for one token) with the stored credentials, and
 * records status, latency and error on the registration; a LOCAL embedder's model embeds the same input in
 * this process. A failed call fails the job, so it is retried with backoff; a dimensionality mismatch is
 * recorded and not retried, since calling again cannot change it.
 */
export function modelProbeJob(
  sql: Sql,
  secrets: SecretBox,
  localModels: LocalModels,
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
        const local = resource === 'EMBEDDER' && target.provider_type === LOCAL_PROVIDER_TYPE
        const request = local
          ? undefined
          : resource === 'EMBEDDER'
            ? embeddingProbeRequest(subject, credential)
            : resource === 'RERANKER'
              ? rerankProbeRequest(subject, credential)
              : chatProbeRequest(subject, credential)
        const body = request
          ? await postJson(request, { timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, redact })
          : await probeLocalModel(localModels, target.model_identifier)
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
