import { type LlmRow, llmsTable } from '../db/sql/llms.js'
import {
  type CapabilitiesInput,
  createLlmSchema,
  DEFAULT_LLM_API_PATH,
  type LlmProviderType,
  listLlmsSchema,
  type SamplingParams,
  updateLlmSchema,
} from '../validation/registry.js'
import type { DomainContext } from './context.js'
import type { Principal } from './permissions.js'
import * as registrations from './registration-use-cases.js'
import { type RegistrationView, registrationView } from './registry.js'

export interface LlmCapabilities {
  supportsChat: boolean
  supportsCompletion: boolean
  supportsFunctionCalling: boolean
  supportsSamplingParameters: boolean
  supportsStreaming: boolean
  supportsSystemMessages: boolean
}

/** An LLM as every response carries it: credentials without the secret. */
export type Llm = { llmId: string } & RegistrationView<LlmProviderType> & {
    clientConfig?: string
    maxContextLength?: number
    capabilities: LlmCapabilities
    defaultSamplingParams?: SamplingParams & { stopSequences: string[] }
  }

/**
 * The spec gives no defaults. The default API path is a chat-completions endpoint, so
 * what every such endpoint does is on; what it may or may not do must be claimed.
 */
export const DEFAULT_CAPABILITIES: LlmCapabilities = {
  supportsChat: true,
  supportsCompletion: false,
  supportsFunctionCalling: false,
  supportsSamplingParameters: true,
  supportsStreaming: false,
  supportsSystemMessages: true,
}

/** Flags not given take their defaults; a capabilities object always carries all six. */
const capabilitiesFrom = (input: CapabilitiesInput | undefined): LlmCapabilities => ({
  ...DEFAULT_CAPABILITIES,
  ...input,
})

export function toLlm(row: LlmRow): Llm {
  const sampling = row.default_sampling_params as SamplingParams | null
  return {
    llmId: row.id,
    ...registrationView<LlmProviderType>(row),
    clientConfig: row.client_config ?? undefined,
    maxContextLength: row.max_context_length ?? undefined,
    capabilities: capabilitiesFrom(row.capabilities as CapabilitiesInput),
    defaultSamplingParams: sampling ? { ...sampling, stopSequences: sampling.stopSequences ?? [] } : undefined,
  }
}

/** How the shared registration steps name and store LLMs. */
const LLM: registrations.RegistrationKind<LlmRow, (typeof llmsTable.mutableColumns)[number]> = {
  resource: 'LLM',
  noun: 'LLM',
  table: llmsTable,
}

/** The use cases the transports call, under the names every kind shares. */
export const llmUseCases = registrations.registryUseCases(LLM, {
  collection: 'llms',
  idField: 'llmId',
  createSchema: createLlmSchema,
  listSchema: listLlmsSchema,
  updateSchema: updateLlmSchema,
  defaultApiPath: () => DEFAULT_LLM_API_PATH,
  newKindColumns: (request) => ({
    client_config: request.clientConfig ?? null,
    max_context_length: request.maxContextLength ?? null,
    capabilities: { ...capabilitiesFrom(request.capabilities) },
    default_sampling_params: request.defaultSamplingParams ?? null,
  }),
  // capabilities and defaultSamplingParams are replaced as a whole.
  nextKindColumns: (current, request) => ({
    client_config: request.clientConfig === undefined ? current.client_config : request.clientConfig || null,
    max_context_length: request.maxContextLength ?? current.max_context_length,
    capabilities: request.capabilities ? { ...capabilitiesFrom(request.capabilities) } : current.capabilities,
    default_sampling_params: request.defaultSamplingParams ?? current.default_sampling_params,
  }),
  toItem: toLlm,
})

export const {
  create: createLlm,
  list: listLlms,
  get: getLlm,
  /**
   * A field given replaces the stored value (capabilities and defaultSamplingParams as a
   * whole); labels replace or merge; providerType cannot change.
   */
  update: updateLlm,
  delete: deleteLlm,
} = llmUseCases

/** An LLM the caller may use (their own, or any with GET_LLM_ANY); NOT_FOUND otherwise. */
export function findUsableLlm(context: DomainContext, principal: Principal, llmId: string): Promise<LlmRow> {
  return registrations.findVisibleRegistration(context.sql, principal, LLM, 'GET', llmId)
}
