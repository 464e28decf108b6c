import type { Queryable } from '../database.js'
import type { CredentialColumns } from './credential-columns.js'
import type { StoredProbe } from './probes.js'

/**
 * The statements the embedders, llms and rerankers tables share. The tables differ only in
 * their entity-specific columns, so one set of statements, parameterised by table name and
 * by which columns are jsonb, serves all three; each entity's module stays its entry point.
 */

/** The columns every registration table has: identity, ownership, the model's description, credentials, audit. */
export interface RegistrationRow extends CredentialColumns {
  id: string
  owner_id: string
  display_name: string
  description: string | null
  provider_type: string
  endpoint_url: string
  api_path: string
  model_identifier: string
  supported_modalities: string[]
  labels: Record<string, string>
  version: string | null
  monitoring_endpoint: string | null
  created_at: Date
  updated_at: Date
  created_by: string
  updated_by: string
  /** Written by the probe job only (migration 3). */
  probe?: StoredProbe | null
}

export interface RegistrationFilter {
  ownerId: string
  providerType?: string
  labels?: Record<string, string>
  after?: { createdAt: Date; id: string }
  limit: number
}

/** What an update writes: the mutable columns and the update audit. */
export type RegistrationChange<Row extends RegistrationRow, MutableColumn extends keyof Row> = Pick<
  Row,
  MutableColumn | 'updated_at' | 'updated_by'
>

export interface RegistrationTable<Row extends RegistrationRow, MutableColumn extends keyof Row & string> {
  readonly name: string
  /** The columns an update rewrites (everything but identity, ownership, provider type and creation audit). */
  readonly mutableColumns: readonly MutableColumn[]
  insert(sql: Queryable, row: Row): Promise<void>
  find(sql: Queryable, id: string, options?: { forUpdate?: boolean }): Promise<Row | undefined>
  /** One owner's rows in keyset order (created_at, id). */
  list(sql: Queryable, filter: RegistrationFilter): Promise<Row[]>
  update(sql: Queryable, id: string, change: RegistrationChange<Row, MutableColumn>): Promise<Row>
  delete(sql: Queryable, id: string): Promise<boolean>
}

/** The columns an update rewrites that every registration table has; each kind adds its own. */
export const SHARED_MUTABLE_COLUMNS = [
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

/** The jsonb columns every registration table has. */
const SHARED_JSON_COLUMNS: readonly string[] = ['supported_modalities', 'labels', 'credential']

/**
 * One kind's table: `kindMutableColumns` and `kindJsonColumns` are the columns it has besides
 * those every registration table has.
 */
export function registrationTable<Row extends RegistrationRow, KindMutableColumn extends keyof Row & string>(
  name: string,
  kindMutableColumns: readonly KindMutableColumn[],
  kindJsonColumns: readonly (keyof Row & string)[],
): RegistrationTable<Row, (typeof SHARED_MUTABLE_COLUMNS)[number] | KindMutableColumn> {
  const mutableColumns = [...SHARED_MUTABLE_COLUMNS, ...kindMutableColumns]
  const json = new Set<string>([...SHARED_JSON_COLUMNS, ...kindJsonColumns])
  // jsonb columns are sent as JSON; a null stays SQL NULL rather than becoming JSON null.
  const toDatabase = (sql: Queryable, values: object): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(values).map(([column, value]) => [
        column,
        json.has(column) && value !== null ? sql.json(value as never) : value,
      ]),
    )

  return {
    name,
    mutableColumns,
    async insert(sql, row) {
      await sql`insert into ${sql(name)} ${sql(toDatabase(sql, row) as never)}`
    },
    async find(sql, id, options = {}) {
      const rows = await sql<
        Row[]
      >`select * from ${sql(name)} where id = ${id} ${options.forUpdate ? sql`for update` : sql``}`
      return rows[0]
    },
    list(sql, filter) {
      return sql<Row[]>`
        select * from ${sql(name)}
        where owner_id = ${filter.ownerId}
          ${filter.providerType ? sql`and provider_type = ${filter.providerType}` : sql``}
          ${filter.labels && Object.keys(filter.labels).length > 0 ? sql`and labels @> ${sql.json(filter.labels)}` : sql``}
          ${filter.after ? sql`and (created_at, id) > (${filter.after.createdAt}, ${filter.after.id})` : sql``}
        order by created_at, id
        limit ${filter.limit}`
    },
    async update(sql, id, change) {
      const values = toDatabase(sql, change)
      const rows = await sql<
        Row[]
      >`update ${sql(name)} set ${sql(values as never, Object.keys(values) as never)} where id = ${id} returning *`
      return rows[0]!
    },
    async delete(sql, id) {
      const rows = await sql`delete from ${sql(name)} where id = ${id} returning id`
      return rows.length > 0
    },
  }
}
