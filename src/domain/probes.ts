import type { StoredProbe } from '../db/sql/probes.js'
import type { ProviderTable } from '../db/sql/provider-targets.js'
import * as providerTargetsSql from '../db/sql/provider-targets.js'
import { idSchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { MODEL_PROBE_JOB, type ProbedResource } from './job-kinds.js'
import { requireVisible } from './registry.js'

export type ProbeStatus = StoredProbe

const PROBED: Record<ProbedResource, { table: ProviderTable; field: string; noun: string }> = {
  EMBEDDER: { table: 'embedders', field: 'embedderId', noun: 'embedder' },
  LLM: { table: 'llms', field: 'llmId', noun: 'LLM' },
  RERANKER: { table: 'rerankers', field: 'rerankerId', noun: 'reranker' },
}

export const probeTable = (resource: ProbedResource): ProviderTable => PROBED[resource].table

/** Queues a probe after a registration's endpoint or credentials changed; the write has already succeeded. */
export async function enqueueProbe(context: DomainContext, resource: ProbedResource, id: string): Promise<void> {
  try {
    await context.jobs.enqueue(context.sql, MODEL_PROBE_JOB, { resource, id })
  } catch (error) {
    context.log.warn('could not queue a connectivity probe; run it on demand with :probe', {
      resource,
      id,
      error: error as Error,
    })
  }
}

/** POST /v1/{embedders|llms|rerankers}/{id}:probe — runs the probe again, now, as a job. */
export async function requestProbe(
  context: DomainContext,
  call: CallContext,
  resource: ProbedResource,
  rawId: unknown,
): Promise<{ jobId: string }> {
  const principal = await context.authenticate(call)
  const field = PROBED[resource].field
  const id = parseInput(idSchema, rawId, field)
  const target = await providerTargetsSql.findProviderTarget(context.sql, probeTable(resource), id)
  requireVisible(principal, resource, 'GET', target, `${PROBED[resource].noun} ${id}`)
  const jobId = await context.jobs.enqueue(context.sql, MODEL_PROBE_JOB, { resource, id })
  return { jobId }
}

/** The columns whose change makes the last probe stale. */
export const PROBED_COLUMNS = [
  'endpoint_url',
  'api_path',
  'model_identifier',
  'credential_fingerprint',
  'credential_kind',
  'dimensionality',
] as const

export function probeInputsChanged(before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  return PROBED_COLUMNS.some((column) => JSON.stringify(before[column]) !== JSON.stringify(after[column]))
}
