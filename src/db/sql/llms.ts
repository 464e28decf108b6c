import { type RegistrationRow, registrationTable } from './registration-table.js'

export interface LlmRow extends RegistrationRow {
  // Besides the columns every registration has:
  client_config: string | null
  max_context_length: number | null
  capabilities: Record<string, boolean>
  default_sampling_params: Record<string, unknown> | null
}

/** The columns an update rewrites besides those every registration has (SHARED_MUTABLE_COLUMNS). */
const LLM_MUTABLE_COLUMNS = ['client_config', 'max_context_length', 'capabilities', 'default_sampling_params'] as const

/** Insert, find, list, update and delete on the llms table. */
export const llmsTable = registrationTable<LlmRow, (typeof LLM_MUTABLE_COLUMNS)[number]>('llms', LLM_MUTABLE_COLUMNS, [
  'capabilities',
  'default_sampling_params',
])
