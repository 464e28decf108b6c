import type { Queryable } from '../database.js'

/**
 * Records `keyId` as the database's encryption key unless one is recorded already,
 * and returns the recorded one. Replicas racing on a fresh database agree on the first.
 */
export async function recordKeyId(sql: Queryable, keyId: string): Promise<string> {
  await sql`insert into encryption_key (key_id) values (${keyId}) on conflict (singleton) do nothing`
  const rows = await sql<Array<{ key_id: string }>>`select key_id from encryption_key`
  return rows[0]!.key_id
}
