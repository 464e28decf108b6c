import type { Logger } from '../observability/logger.js'
import type { Sql } from './database.js'
import { EMBEDDER_INDEX_PREFIX, embedderIndexDefinition, embedderIndexName } from './vector-storage.js'

/**
 * Indexes an earlier build made in full precision (`embedding::vector(D)`): a search that
 * casts to half precision cannot use them, and reads the whole table instead (exact, so
 * right, but slow on a large space).
 */
const FULL_PRECISION_INDEXES_SQL = `
  select e.id::text as embedder_id, e.dimensionality, i.indexname
  from pg_indexes i join embedders e on i.indexname = '${EMBEDDER_INDEX_PREFIX}' || replace(e.id::text, '-', '')
  where i.schemaname = current_schema() and i.tablename = 'chunk_vectors' and i.indexdef not like '%halfvec%'`

/** Its own advisory lock (not the migrations'): replicas that start together do this work once. */
export const INDEX_UPKEEP_LOCK_KEY = 0x6d656d737669

/** The half-precision index is built beside the old one under this suffix, then takes its name. */
const REPLACEMENT_SUFFIX = '_h'

/**
 * The swap (drop the old index, rename the new) needs a moment's exclusive lock on
 * chunk_vectors. It waits at most this long for running ingests, so that it never queues
 * every later query behind itself, and then tries again.
 */
const SWAP_LOCK_TIMEOUT = '5s'
const SWAP_ATTEMPTS = 5
const SWAP_RETRY_DELAY_MS = 2_000

interface StaleIndex {
  embedder_id: string
  dimensionality: number
  indexname: string
}

/**
 * Per-embedder indexes whose embedder is gone. Deleting an embedder deletes its vectors
 * (foreign keys) and then drops its index (dropEmbedderIndex); one left by a process that
 * stopped in between would keep its disk space for good, and add to every plan and insert.
 */
const ORPHANED_INDEXES_SQL = `
  select c.relname as indexname
  from pg_index i join pg_class c on c.oid = i.indexrelid
  where i.indrelid = to_regclass('chunk_vectors') and starts_with(c.relname, '${EMBEDDER_INDEX_PREFIX}')
    and not exists (
      select 1 from embedders e
      where starts_with(c.relname, '${EMBEDDER_INDEX_PREFIX}' || replace(e.id::text, '-', '')))`

export interface VectorIndexUpkeep {
  rebuilt: number
  dropped: number
}

/**
 * Brings the per-embedder vector indexes up to date once, at start: drops those whose
 * embedder is gone, and rebuilds in half precision every index an earlier build made in
 * full precision. Each new index is built with CREATE INDEX CONCURRENTLY beside the old
 * one, so ingestion and search go on meanwhile (searches read the table until the swap);
 * the swap takes the old index's name. A build that is interrupted (a stop, a crash, a
 * failure) leaves the old index in place and the next start does it again; a failure is
 * logged and never takes memories down.
 *
 * On PostgreSQL this runs after READY. The embedded database has one connection, which a
 * build would hold for its whole length, so there it runs before READY instead.
 */
export async function upkeepVectorIndexes(sql: Sql, log: Logger, signal: AbortSignal): Promise<VectorIndexUpkeep> {
  const done = { rebuilt: 0, dropped: 0 }
  // One round trip: the embedded database runs this before READY on every start.
  const [pending] = await sql.unsafe<Array<{ found: boolean }>>(
    `select exists (${FULL_PRECISION_INDEXES_SQL}) or exists (${ORPHANED_INDEXES_SQL}) as found`,
  )
  if (!pending?.found) return done
  const connection = await sql.reserve()
  try {
    const [lock] = await connection<
      Array<{ locked: boolean }>
    >`select pg_try_advisory_lock(${INDEX_UPKEEP_LOCK_KEY}) as locked`
    if (!lock?.locked) {
      log.info('another memsvc process is bringing the vector indexes up to date; this one leaves them to it')
      return done
    }
    try {
      // Read again under the lock: the process that held it may have done some already.
      for (const { indexname } of await connection.unsafe<Array<{ indexname: string }>>(ORPHANED_INDEXES_SQL)) {
        if (signal.aborted) break
        await connection.unsafe(`drop index concurrently if exists ${indexname}`)
        log.info('dropped the vector index of a deleted embedder', { index: indexname })
        done.dropped++
      }
      for (const index of await connection.unsafe<StaleIndex[]>(FULL_PRECISION_INDEXES_SQL)) {
        if (signal.aborted) break
        if (await rebuildInHalfPrecision(connection, index, log, signal)) done.rebuilt++
      }
    } finally {
      await connection`select pg_advisory_unlock(${INDEX_UPKEEP_LOCK_KEY})`
    }
  } finally {
    connection.release()
  }
  return done
}

/**
 * Drops a deleted embedder's index (and a half-built replacement), after the transaction
 * that deleted its vectors: CONCURRENTLY, so that ingestion and search into other
 * embedders' vectors are never blocked. A failure is logged; the next start drops it.
 */
export async function dropEmbedderIndex(sql: Sql, embedderId: string, log: Logger): Promise<void> {
  const name = embedderIndexName(embedderId)
  try {
    await sql.unsafe(`drop index concurrently if exists ${name}`)
    await sql.unsafe(`drop index concurrently if exists ${name}${REPLACEMENT_SUFFIX}`)
  } catch (error) {
    log.warn('cannot drop the vector index of a deleted embedder; the next start does', {
      index: name,
      error: error as Error,
    })
  }
}

type Connection = Awaited<ReturnType<Sql['reserve']>>

async function rebuildInHalfPrecision(
  connection: Connection,
  index: StaleIndex,
  log: Logger,
  signal: AbortSignal,
): Promise<boolean> {
  const replacement = `${index.indexname}${REPLACEMENT_SUFFIX}`
  const started = performance.now()
  const fields = { index: index.indexname, embedderId: index.embedder_id }
  log.info('rebuilding a vector index in half precision (once, after an upgrade; ingestion and search go on)', fields)
  try {
    if (!(await isValidIndex(connection, replacement))) {
      // An invalid one is what an interrupted CREATE INDEX CONCURRENTLY leaves behind.
      await connection.unsafe(`drop index concurrently if exists ${replacement}`)
      const definition = embedderIndexDefinition(index.embedder_id, index.dimensionality)
      if (!definition) return false
      // A stop cancels the build rather than wait minutes for it (the backend would go on without us).
      const build = connection.unsafe(`create index concurrently ${replacement} ${definition}`)
      const cancel = () => void build.cancel()
      signal.addEventListener('abort', cancel)
      try {
        await build
      } finally {
        signal.removeEventListener('abort', cancel)
      }
    }
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return false
      try {
        // One query string is one transaction: the swap is whole or not at all, and so is the SET.
        await connection.unsafe(
          `set lock_timeout = '${SWAP_LOCK_TIMEOUT}'; drop index if exists ${index.indexname}; ` +
            `alter index ${replacement} rename to ${embedderIndexName(index.embedder_id)}; reset lock_timeout`,
        )
        break
      } catch (error) {
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE || attempt === SWAP_ATTEMPTS) throw error
        await new Promise((resolve) => setTimeout(resolve, SWAP_RETRY_DELAY_MS))
      }
    }
  } catch (error) {
    if (signal.aborted) {
      log.info('vector index rebuild stopped with the server; the next start takes it up again', fields)
      return false
    }
    // The old index stays (inserts keep it current) and the next start tries again,
    // reusing a finished replacement.
    log.warn('rebuilding a vector index in half precision failed; the earlier index is kept', {
      ...fields,
      error: error as Error,
    })
    return false
  }
  log.info('vector index rebuilt', { ...fields, ms: Math.round(performance.now() - started) })
  return true
}

/** PostgreSQL's lock_not_available, which lock_timeout raises. */
const LOCK_NOT_AVAILABLE = '55P03'

async function isValidIndex(connection: Connection, name: string): Promise<boolean> {
  const [row] = await connection<Array<{ valid: boolean }>>`
    select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
    where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace`
  return row?.valid === true
}
