import type { Queryable } from '../database.js'
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

/**
 * The oldest embedder of `providerType` carrying `label` that a space of `ownerId` may use:
 * the owner's own first, then (when the owner may use any embedder) anyone's.
 */
export async function findLabelledEmbedderId(
  sql: Queryable,
  filter: { ownerId: string; ownerMayUseAny: boolean; providerType: string; label: Record<string, string> },
): Promise<string | undefined> {
  const [row] = await sql<Array<{ id: string }>>`
    select id from embedders
    where provider_type = ${filter.providerType} and labels @> ${sql.json(filter.label)}
      and distribution_type = 'DENSE'
      and (owner_id = ${filter.ownerId} or ${filter.ownerMayUseAny})
    order by owner_id = ${filter.ownerId} desc, created_at, id
    limit 1`
  return row?.id
}
