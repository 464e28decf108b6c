// What the auth-lookup floors (REST and gRPC) do per request, written once so that both
// do exactly the same: sha256 of the bearer key and one indexed lookup by that hash, the
// query memsvc's authenticator ran when the floor was written (src/db/sql/api-keys.ts,
// findCredentialByHash; memsvc's now also reads the user's name and timestamps).
import crypto from 'node:crypto'
import type postgres from 'postgres'

const BEARER = 'Bearer '

export interface CredentialLookupRow {
  key_id: string
  user_id: string
  role: string
  status: string
  expires_at: Date | null
}

/** The key's row, or undefined when no key has this hash. */
export async function lookUpBearer(sql: postgres.Sql, authorization: string): Promise<CredentialLookupRow | undefined> {
  const key = authorization.startsWith(BEARER) ? authorization.slice(BEARER.length) : authorization
  const hash = crypto.createHash('sha256').update(key).digest()
  const rows = await sql<CredentialLookupRow[]>`
    select k.id as key_id, k.user_id, u.role, k.status, k.expires_at
    from api_keys k join users u on u.id = k.user_id
    where k.key_hash = ${hash}`
  return rows[0]
}
