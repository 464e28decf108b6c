import type { Sql } from './database.js'
import { MIGRATIONS } from './migrations.js'
import { tooOldVectorReason, VECTOR_STORAGE_RELATIONS, type VectorSupport } from './vector-storage.js'

/**
 * What start-up checks of a database, read in one round trip: the applied migrations, the
 * pgvector part of the schema and the recorded encryption key. Every start but the first
 * finds all of it in place, and then needs neither the migration lock nor any DDL.
 */
interface SchemaState {
  versions: number[]
  vectorVersion: string | null
  vectorStorage: boolean
  keyId: string | null
}

/** PostgreSQL's undefined_table. */
const UNDEFINED_TABLE = '42P01'

async function readSchemaState(sql: Sql): Promise<SchemaState | undefined> {
  try {
    const [row] = await sql<SchemaState[]>`
      select
        (select coalesce(array_agg(version order by version), '{}') from schema_migrations) as "versions",
        (select extversion from pg_extension where extname = 'vector') as "vectorVersion",
        (select bool_and(to_regclass(name) is not null)
          from unnest(string_to_array(${VECTOR_STORAGE_RELATIONS.join(',')}, ',')) as name) as "vectorStorage",
        (select key_id from encryption_key) as "keyId"`
    return row
  } catch (error) {
    // A fresh database (or one from before the encryption key table) lacks a table read here.
    if ((error as { code?: string }).code === UNDEFINED_TABLE) return undefined
    throw error
  }
}

/**
 * The vector support of a database whose schema is current (every migration applied, the
 * vector storage in place) and that recorded `keyId`; undefined when anything is missing or
 * differs, and start-up must take the full path (migrate, prepare vector storage, record
 * or verify the key) that handles each case and says what is wrong.
 */
export async function currentSchemaVectorSupport(sql: Sql, keyId: string): Promise<VectorSupport | undefined> {
  const state = await readSchemaState(sql)
  if (!state || state.keyId !== keyId || !state.vectorStorage || state.vectorVersion === null) return undefined
  // The full path gives the reason.
  if (tooOldVectorReason(state.vectorVersion)) return undefined
  const applied = new Set(state.versions)
  if (!MIGRATIONS.every((migration) => applied.has(migration.version))) return undefined
  return { available: true, version: state.vectorVersion }
}
