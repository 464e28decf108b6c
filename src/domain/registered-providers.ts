import type { LlmRow } from '../db/sql/llms.js'
import type { ProviderTable, ProviderTargetRow } from '../db/sql/provider-targets.js'
import type { RerankerRow } from '../db/sql/rerankers.js'
import type { LlmProfile } from '../providers/chat.js'
import { type ProviderAccess, providerAccess } from '../providers/credentials.js'
import type { EmbedderProfile } from '../providers/embed.js'
import type { RerankerProfile } from '../providers/rerank.js'
import type { SecretBox } from '../secrets/secret-box.js'
import type { SamplingParams } from '../validation/registry.js'
import { secretContext } from './registry.js'

/**
 * A registration's row as the provider layer takes it, which knows neither tables nor how
 * secrets are sealed: the target it calls, and its credential with the secret opened for one call.
 */

export function openProviderAccess(
  secrets: SecretBox,
  table: ProviderTable,
  target: ProviderTargetRow,
): ProviderAccess {
  const secret = target.credential_secret
    ? secrets.open(target.credential_secret, secretContext(table, target.id))
    : undefined
  return providerAccess({
    kind: target.credential_kind,
    headerName: target.credential.headerName,
    prefix: target.credential.prefix,
    secret,
  })
}

export function embedderProfile(target: ProviderTargetRow): EmbedderProfile {
  return {
    id: target.id,
    displayName: (target as { display_name?: string }).display_name,
    providerType: target.provider_type,
    endpointUrl: target.endpoint_url,
    apiPath: target.api_path,
    modelIdentifier: target.model_identifier,
    dimensionality: target.dimensionality!,
    maxSequenceLength: (target as { max_sequence_length?: number | null }).max_sequence_length ?? undefined,
  }
}

export function rerankerProfile(reranker: RerankerRow): RerankerProfile {
  return {
    id: reranker.id,
    displayName: reranker.display_name,
    providerType: reranker.provider_type,
    endpointUrl: reranker.endpoint_url,
    apiPath: reranker.api_path,
    modelIdentifier: reranker.model_identifier,
  }
}

export function llmProfile(llm: LlmRow): LlmProfile {
  return {
    endpointUrl: llm.endpoint_url,
    apiPath: llm.api_path,
    modelIdentifier: llm.model_identifier,
    capabilities: llm.capabilities,
    defaultSamplingParams: (llm.default_sampling_params ?? undefined) as SamplingParams | undefined,
  }
}
