import type { Queryable } from '../database.js'
import type { CredentialColumns } from './credential-columns.js'

/** The tables of registered models: each row is a provider target that embedding, rerank, chat and probes call. */
export type ProviderTable = 'embedders' | 'llms' | 'rerankers'

/** A registration as calling its provider needs it: where, which model, and the sealed credential. */
export interface ProviderTargetRow extends CredentialColumns {
  id: string
  owner_id: string
  provider_type: string
  endpoint_url: string
  api_path: string
  model_identifier: string
  /** Embedders only. */
  dimensionality?: number
  distribution_type?: string
}

export async function findProviderTarget(
  sql: Queryable,
  table: ProviderTable,
  id: string,
): Promise<ProviderTargetRow | undefined> {
  const rows = await sql<ProviderTargetRow[]>`select * from ${sql(table)} where id = ${id}`
  return rows[0]
}
