import type { Queryable } from '../database.js'
import type { CredentialColumns } from './credential-columns.js'

export type ProbeTable = 'embedders' | 'llms' | 'rerankers'

/** The last connectivity probe of a registration, as stored in its `probe` column. */
export interface StoredProbe {
  status: 'OK' | 'FAILED'
  checkedAt: number
  latencyMs?: number
  error?: string
  observedDimensionality?: number
}

export interface ProbeTargetRow extends CredentialColumns {
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

export async function findProbeTarget(
  sql: Queryable,
  table: ProbeTable,
  id: string,
): Promise<ProbeTargetRow | undefined> {
  const rows = await sql<ProbeTargetRow[]>`select * from ${sql(table)} where id = ${id}`
  return rows[0]
}

export async function recordProbe(sql: Queryable, table: ProbeTable, id: string, probe: StoredProbe): Promise<void> {
  await sql`update ${sql(table)} set probe = ${sql.json(probe as never)} where id = ${id}`
}
