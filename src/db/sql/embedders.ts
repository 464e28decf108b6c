import { type RegistrationRow, registrationTable } from './registration-table.js'

export interface EmbedderRow extends RegistrationRow {
  // Besides the columns every registration has:
  dimensionality: number
  distribution_type: string
  max_sequence_length: number | null
}

/** The columns an update rewrites (everything but identity, ownership, provider type and creation audit). */
export const EMBEDDER_MUTABLE_COLUMNS = [
  'display_name',
  'description',
  'endpoint_url',
  'api_path',
  'model_identifier',
  'dimensionality',
  'distribution_type',
  'max_sequence_length',
  'supported_modalities',
  'labels',
  'version',
  'monitoring_endpoint',
  'credential_kind',
  'credential',
  'credential_secret',
  'credential_fingerprint',
] as const

/** Insert, find, list, update and delete on the embedders table. */
export const embeddersTable = registrationTable<EmbedderRow, (typeof EMBEDDER_MUTABLE_COLUMNS)[number]>(
  'embedders',
  EMBEDDER_MUTABLE_COLUMNS,
  ['supported_modalities', 'labels', 'credential'],
)
