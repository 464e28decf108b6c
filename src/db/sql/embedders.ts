import { type RegistrationRow, registrationTable } from './registration-table.js'

export interface EmbedderRow extends RegistrationRow {
  // Besides the columns every registration has:
  dimensionality: number
  distribution_type: string
  max_sequence_length: number | null
}

/** The columns an update rewrites besides those every registration has (SHARED_MUTABLE_COLUMNS). */
const EMBEDDER_MUTABLE_COLUMNS = ['dimensionality', 'distribution_type', 'max_sequence_length'] as const

/** Insert, find, list, update and delete on the embedders table. */
export const embeddersTable = registrationTable<EmbedderRow, (typeof EMBEDDER_MUTABLE_COLUMNS)[number]>(
  'embedders',
  EMBEDDER_MUTABLE_COLUMNS,
  [],
)
