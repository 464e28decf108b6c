import { type RegistrationRow, registrationTable } from './registration-table.js'

/** A reranker has only the columns every registration has. */
export type RerankerRow = RegistrationRow

/** The columns an update rewrites (everything but identity, ownership, provider type and creation audit). */
export const RERANKER_MUTABLE_COLUMNS = [
  'display_name',
  'description',
  'endpoint_url',
  'api_path',
  'model_identifier',
  'supported_modalities',
  'labels',
  'version',
  'monitoring_endpoint',
  'credential_kind',
  'credential',
  'credential_secret',
  'credential_fingerprint',
] as const

/** Insert, find, list, update and delete on the rerankers table. */
export const rerankersTable = registrationTable<RerankerRow, (typeof RERANKER_MUTABLE_COLUMNS)[number]>(
  'rerankers',
  RERANKER_MUTABLE_COLUMNS,
  ['supported_modalities', 'labels', 'credential'],
)
