import { type RegistrationRow, registrationTable } from './registration-table.js'

export interface LlmRow extends RegistrationRow {
  // Besides the columns every registration has:
  client_config: string | null
  max_context_length: number | null
  capabilities: Record<string, boolean>
  default_sampling_params: Record<string, unknown> | null
}

/** The columns an update rewrites (everything but identity, ownership, provider type and creation audit). */
export const LLM_MUTABLE_COLUMNS = [
  'display_name',
  'description',
  'endpoint_url',
  'api_path',
  'model_identifier',
  'supported_modalities',
  'labels',
  'version',
  'monitoring_endpoint',
  'client_config',
  'max_context_length',
  'capabilities',
  'default_sampling_params',
  'credential_kind',
  'credential',
  'credential_secret',
  'credential_fingerprint',
] as const

/** Insert, find, list, update and delete on the llms table. */
export const llmsTable = registrationTable<LlmRow, (typeof LLM_MUTABLE_COLUMNS)[number]>('llms', LLM_MUTABLE_COLUMNS, [
  'supported_modalities',
  'labels',
  'credential',
  'capabilities',
  'default_sampling_params',
])
