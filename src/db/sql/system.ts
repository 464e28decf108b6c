import type { Queryable, Tx } from '../database.js'

export async function isInitialized(sql: Queryable): Promise<boolean> {
  const rows = await sql`select 1 from system_state limit 1`
  return rows.length > 0
}

/** Serialises concurrent initialisations; released when the transaction ends. */
export async function lockInitialization(tx: Tx): Promise<void> {
  await tx`select pg_advisory_xact_lock(${0x6d656d737664})`
}

export async function markInitialized(tx: Tx, rootUserId: string): Promise<void> {
  await tx`insert into system_state (root_user_id) values (${rootUserId})`
}
