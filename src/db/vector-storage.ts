import type { Queryable, Sql } from './database.js'

/** Whether this database can hold memory vectors, and if not, what the operator must do. */
export type VectorSupport = { available: true; version: string } | { available: false; reason: string }

export const VECTOR_EXTENSION_HELP =
  'memories need the PostgreSQL extension "vector" (pgvector 0.8 or newer): install it on the database server ' +
  '(for example the postgresql-<major>-pgvector package, or make && make install from its source), then restart memsvc; ' +
  'memsvc runs CREATE EXTENSION vector itself when its database user may, otherwise a superuser must run it once'

/** pgvector's HNSW index takes `halfvec` up to 4,000 dimensions (and `vector` only up to 2,000). */
export const MAX_HALFVEC_INDEX_DIMENSIONS = 4_000

/** The same advisory lock as migrations (src/db/migrations.ts), so replicas never race on DDL. */
const MIGRATION_LOCK_KEY = 0x6d656d737663

/**
 * The pgvector part of the schema, idempotent. Kept out of the numbered migrations so that
 * a database without pgvector still migrates, and one that gains it later gets it on the
 * next start. One row per chunk and embedder; `embedding` has no declared dimension,
 * because each embedder has its own: its HNSW index casts to that embedder's dimension.
 * The foreign key to space_embedders drops an embedder's vectors when it leaves the space.
 */
const VECTOR_STORAGE_SQL = `
  create extension if not exists vector;
  create table if not exists chunk_vectors (
    chunk_id uuid not null references chunks (id) on delete cascade,
    embedder_id uuid not null,
    space_id uuid not null,
    memory_id uuid not null,
    embedding vector not null,
    primary key (chunk_id, embedder_id),
    foreign key (space_id, embedder_id) references space_embedders (space_id, embedder_id) on delete cascade
  );
  create index if not exists chunk_vectors_by_memory on chunk_vectors (memory_id);
  create index if not exists chunk_vectors_by_space_embedder on chunk_vectors (space_id, embedder_id);
`

/** The tables and indexes VECTOR_STORAGE_SQL creates: when all exist (and the extension), it has run. */
export const VECTOR_STORAGE_RELATIONS = [
  ...VECTOR_STORAGE_SQL.matchAll(/create (?:table|index) if not exists (\w+)/g),
].map((match) => match[1]!)

/**
 * Creates the extension and the vector table when pgvector is installed on the server.
 * Never throws for a missing or forbidden extension: the answer says why memories are
 * unavailable, and the rest of the server runs on.
 */
export async function prepareVectorStorage(sql: Sql): Promise<VectorSupport> {
  const available = await sql<
    Array<{ default_version: string }>
  >`select default_version from pg_available_extensions where name = 'vector'`
  if (available.length === 0)
    return {
      available: false,
      reason: `the extension "vector" is not installed on this PostgreSQL server; ${VECTOR_EXTENSION_HELP}`,
    }
  let version: string
  try {
    version = await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
      await tx.unsafe(VECTOR_STORAGE_SQL)
      const [installed] = await tx<Array<{ extversion: string }>>`
        select extversion from pg_extension where extname = 'vector'`
      return installed?.extversion ?? available[0]!.default_version
    })
  } catch (error) {
    return {
      available: false,
      reason: `CREATE EXTENSION vector failed (${(error as Error).message}); ${VECTOR_EXTENSION_HELP}`,
    }
  }
  const tooOld = tooOldVectorReason(version)
  return tooOld ? { available: false, reason: tooOld } : { available: true, version }
}

/**
 * Why memories cannot run on this pgvector version, if they cannot: every vector index holds
 * `halfvec` (indexedVectorType), which pgvector 0.7 added. 0.8 is what the README asks for.
 */
export function tooOldVectorReason(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  if (major > 0 || minor >= 7) return undefined
  return (
    `pgvector ${version} is installed in this database, and memories need 0.8 or newer (their indexes hold halfvec, ` +
    'which 0.7 added): install a newer pgvector on the database server, run ALTER EXTENSION vector UPDATE, then restart memsvc'
  )
}

/**
 * The HNSW graph's build effort. pgvector's default of 64 left whole queries stuck in the
 * wrong cluster at 100k chunks: recall@10 stayed at 0.92 even with ef_search at its
 * maximum of 1,000. At 200 (m stays 16) three builds reached 0.974 to 0.990 at ef_search
 * 500, for about 35 % more database CPU per inserted vector (bench/README, "Recall").
 */
export const HNSW_EF_CONSTRUCTION = 200

/** Every embedder's index is named this, then its id without dashes (identifiers are at most 63 bytes: that fits). */
export const EMBEDDER_INDEX_PREFIX = 'chunk_vectors_hnsw_'

/** The index name of one embedder's vectors. */
export const embedderIndexName = (embedderId: string) => `${EMBEDDER_INDEX_PREFIX}${embedderId.replace(/-/g, '')}`

/**
 * The type an embedder's HNSW index holds its vectors as, and that a nearest-neighbour
 * search must cast to for PostgreSQL to use that index. Half precision at every dimension:
 * at 100k vectors of 384 dimensions the index is 112 MB instead of 195 MB, the inserts that
 * fill it ran 46 % faster, and they stayed as fast with the index twice PostgreSQL's default
 * buffer cache (last tenth 1.16 × the first, against 0.75 × in full precision), at the same
 * recall@10 (bench/README, "Half-precision index"). The table keeps full precision: scores
 * are computed from it.
 */
export const indexedVectorType = (dimensionality: number) => `halfvec(${dimensionality})`

/** The largest magnitude half precision holds: a vector with a larger value cannot enter the index. */
export const MAX_INDEXED_VECTOR_VALUE = 65_504

/**
 * What follows `create index <name>` for one embedder's HNSW index (cosine), partial on
 * that embedder, over the vectors cast to half precision (indexedVectorType); undefined
 * above 4,000 dimensions, where no index is made and search is exact.
 */
export function embedderIndexDefinition(embedderId: string, dimensionality: number): string | undefined {
  if (!Number.isSafeInteger(dimensionality) || dimensionality < 1 || dimensionality > MAX_HALFVEC_INDEX_DIMENSIONS)
    return undefined
  // DDL takes no parameters: the id is a validated UUID and the dimension an integer, so both are written in.
  if (!/^[0-9a-f-]{36}$/.test(embedderId)) throw new Error(`not a UUID: ${embedderId}`)
  return (
    `on chunk_vectors using hnsw ((embedding::${indexedVectorType(dimensionality)}) halfvec_cosine_ops) ` +
    `with (ef_construction = ${HNSW_EF_CONSTRUCTION}) where embedder_id = '${embedderId}'`
  )
}

/** Creates an embedder's index when it first joins a space, inside that transaction. */
export async function ensureEmbedderIndex(
  sql: Queryable,
  embedderId: string,
  dimensionality: number,
): Promise<boolean> {
  const definition = embedderIndexDefinition(embedderId, dimensionality)
  if (!definition) return false
  await sql.unsafe(`create index if not exists ${embedderIndexName(embedderId)} ${definition}`)
  return true
}
