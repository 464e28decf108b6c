import type { Queryable } from '../database.js'
import type { ProviderTable } from './provider-targets.js'

/** The last connectivity probe of a registration, as stored in its `probe` column. */
export interface StoredProbe {
  status: 'OK' | 'FAILED'
  checkedAt: number
  latencyMs?: number
  error?: string
  observedDimensionality?: number
}

export async function recordProbe(sql: Queryable, table: ProviderTable, id: string, probe: StoredProbe): Promise<void> {
  await sql`update ${sql(table)} set probe = ${sql.json(probe as never)} where id = ${id}`
}
