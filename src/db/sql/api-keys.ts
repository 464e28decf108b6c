import type { Queryable } from '../database.js'

export interface ApiKeyRow {
  id: string
  user_id: string
  key_prefix: string
  status: 'ACTIVE' | 'INACTIVE'
  labels: Record<string, string>
  expires_at: Date | null
  last_used_at: Date | null
  created_at: Date
  updated_at: Date
  created_by: string
  updated_by: string
  /** Who set the key INACTIVE (null while it is active); read for updates only, never sent. */
  deactivated_by?: string | null
}

/** Never selected into an ApiKeyRow: the hash stays in the database. */
const COLUMNS = [
  'id',
  'user_id',
  'key_prefix',
  'status',
  'labels',
  'expires_at',
  'last_used_at',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
]

/** The column list as SQL text, written out once (the names are fixed identifiers). */
const SELECT_COLUMNS = COLUMNS.join(', ')

/**
 * Fixed text with numbered parameters, like listApiKeys below: the dynamic sql(row)
 * helper re-escaped every column name on each call, about 8 % of the CPU time of
 * POST /v1/apikeys (bench profile). Still prepared once per connection.
 */
const INSERT_API_KEY = `insert into api_keys (${SELECT_COLUMNS}, key_hash)
  values ($1, $2, $3, $4, $5::text::jsonb, $6::timestamptz, $7::timestamptz, $8::timestamptz, $9::timestamptz, $10, $11, $12)`

export async function insertApiKey(sql: Queryable, row: ApiKeyRow, keyHash: Buffer): Promise<void> {
  await sql.unsafe(
    INSERT_API_KEY,
    [
      row.id,
      row.user_id,
      row.key_prefix,
      row.status,
      JSON.stringify(row.labels),
      row.expires_at,
      row.last_used_at,
      row.created_at,
      row.updated_at,
      row.created_by,
      row.updated_by,
      keyHash,
    ],
    { prepare: true },
  )
}

export async function findApiKey(
  sql: Queryable,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ApiKeyRow | undefined> {
  const rows = await sql<
    ApiKeyRow[]
  >`select ${sql(COLUMNS)}, deactivated_by from api_keys where id = ${id} ${options.forUpdate ? sql`for update` : sql``}`
  return rows[0]
}

export interface ApiKeyFilter {
  ownerId: string
  status?: 'ACTIVE' | 'INACTIVE'
  labels?: Record<string, string>
  after?: { createdAt: Date; id: string }
  pageSize: number
}

/** A page of keys, each as its JSON text, and where the next page starts if there is one. */
export interface ApiKeyJsonPage {
  items: string[]
  next?: { createdAt: Date; id: string }
}

/**
 * The hot read path. Each row carries its response JSON (wire_json, kept by a trigger:
 * migration 4), so the server reads one short text per key and writes it out as it came:
 * parsing eleven columns per row and JSON.stringify of the response were over half of the
 * server's CPU time per GET /v1/apikeys (bench profile of GET /v1/apikeys).
 *
 * The statement is assembled from fixed text and numbered parameters, not nested sql``
 * fragments, which postgres.js rebuilds on every call; each filter combination is one
 * fixed text, prepared once per connection, and user input only travels as a parameter.
 * One row more than the page is read to know whether another page exists.
 */
export async function listApiKeysJson(sql: Queryable, filter: ApiKeyFilter): Promise<ApiKeyJsonPage> {
  const parameters: Array<string | number | Date> = [filter.ownerId]
  const next = (value: string | number | Date) => `$${parameters.push(value)}`
  let where = 'user_id = $1'
  if (filter.status) where += ` and status = ${next(filter.status)}`
  if (filter.labels && Object.keys(filter.labels).length > 0)
    where += ` and labels @> ${next(JSON.stringify(filter.labels))}::text::jsonb`
  if (filter.after)
    where += ` and (created_at, id) > (${next(filter.after.createdAt)}::timestamptz, ${next(filter.after.id)}::uuid)`
  const limit = next(filter.pageSize + 1)
  const rows = await sql.unsafe<Array<{ wire_json: string }>>(
    `select wire_json from api_keys where ${where} order by created_at, id limit ${limit}`,
    parameters,
    {
      prepare: true,
    },
  )
  const count = Math.min(rows.length, filter.pageSize)
  const items = new Array<string>(count)
  for (let index = 0; index < count; index++) items[index] = rows[index]!.wire_json
  const page: ApiKeyJsonPage = { items }
  if (rows.length > filter.pageSize) {
    // The page token needs the last key's position; only that one item is parsed.
    const last = JSON.parse(items[count - 1]!) as { apiKeyId: string; createdAt: number }
    page.next = { createdAt: new Date(last.createdAt), id: last.apiKeyId }
  }
  return page
}

export async function updateApiKey(
  sql: Queryable,
  id: string,
  change: {
    status: string
    labels: Record<string, string>
    updatedAt: Date
    updatedBy: string
    deactivatedBy: string | null
  },
): Promise<ApiKeyRow> {
  const rows = await sql<ApiKeyRow[]>`
    update api_keys
    set status = ${change.status}, labels = ${sql.json(change.labels)}, updated_at = ${change.updatedAt}, updated_by = ${change.updatedBy},
      deactivated_by = ${change.deactivatedBy}
    where id = ${id}
    returning ${sql(COLUMNS)}`
  return rows[0]!
}

export async function deleteApiKey(sql: Queryable, id: string): Promise<boolean> {
  const rows = await sql`delete from api_keys where id = ${id} returning id`
  return rows.length > 0
}

export interface CredentialRow {
  key_id: string
  user_id: string
  role: 'ADMIN' | 'USER'
  status: 'ACTIVE' | 'INACTIVE'
  expires_at: Date | null
  username: string
  display_name: string
  user_created_at: Date
  user_updated_at: Date
}

/** The authentication lookup: one indexed read by hash. */
export async function findCredentialByHash(sql: Queryable, keyHash: Buffer): Promise<CredentialRow | undefined> {
  const rows = await sql<CredentialRow[]>`
    select k.id as key_id, k.user_id, u.role, k.status, k.expires_at,
      u.username, u.display_name, u.created_at as user_created_at, u.updated_at as user_updated_at
    from api_keys k join users u on u.id = k.user_id
    where k.key_hash = ${keyHash}`
  return rows[0]
}

/** Coarse usage stamps, written in batches off the request path. */
export async function recordLastUsed(sql: Queryable, usage: Array<{ id: string; usedAt: Date }>): Promise<void> {
  if (usage.length === 0) return
  const ids = usage.map((entry) => entry.id)
  const times = usage.map((entry) => entry.usedAt.toISOString())
  await sql`
    update api_keys k set last_used_at = u.used_at
    from (select unnest(${ids}::uuid[]) as id, unnest(${times}::timestamptz[]) as used_at) u
    where k.id = u.id and (k.last_used_at is null or k.last_used_at < u.used_at)`
}
