import type { Queryable, Sql } from '../database.js'
import { MAX_HALFVEC_INDEX_DIMENSIONS, MAX_VECTOR_INDEX_DIMENSIONS } from '../vector-storage.js'
import { type CompiledFilter, filterFragment } from './filter-fragment.js'

/** One ranked list of chunks, best first. */
export interface RankedChunk {
  chunk_id: string
  memory_id: string
  /** Cosine distance for vectors, ts_rank_cd for keywords. */
  score: number
}

export interface VectorQuery {
  spaceId: string
  embedderId: string
  dimensionality: number
  embedding: number[]
  limit: number
  filter?: CompiledFilter
  efSearch: number
  /** pgvector 0.8 and later: keep scanning the index until `limit` rows pass the filter. */
  iterativeScan: boolean
}

/**
 * Nearest chunks by cosine distance through the embedder's partial HNSW index: the
 * ORDER BY expression must be the index's (`embedding::vector(D)`), so the dimension is
 * written into the text (an integer from the embedder's row, checked here). The settings
 * are SET LOCAL, so the query runs in its own transaction. With relaxed_order the scan may
 * return rows slightly out of order; the outer query sorts them.
 */
export async function nearestChunks(sql: Sql, query: VectorQuery): Promise<RankedChunk[]> {
  const dimensions = query.dimensionality
  if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > MAX_HALFVEC_INDEX_DIMENSIONS) throw new Error(`unusable dimensionality ${dimensions}`)
  const type = sql.unsafe(`${dimensions > MAX_VECTOR_INDEX_DIMENSIONS ? 'halfvec' : 'vector'}(${dimensions})`)
  const embedding = `[${query.embedding.join(',')}]`
  return sql.begin(async (tx) => {
    // SET takes no parameters; the value is an integer validated by the request schema.
    await tx.unsafe(`set local hnsw.ef_search = ${Math.trunc(query.efSearch)}`)
    if (query.iterativeScan) await tx.unsafe('set local hnsw.iterative_scan = relaxed_order')
    return tx<RankedChunk[]>`
      with nearest as materialized (
        select v.chunk_id, v.memory_id, v.embedding::${type} <=> ${embedding}::${type} as score
        from chunk_vectors v
        ${query.filter ? tx`join memories m on m.id = v.memory_id and ${filterFragment(tx, query.filter)}` : tx``}
        where v.embedder_id = ${query.embedderId} and v.space_id = ${query.spaceId}
        order by v.embedding::${type} <=> ${embedding}::${type}
        limit ${query.limit}
      )
      select chunk_id, memory_id, score::float8 as score from nearest order by score, chunk_id`
  }) as Promise<RankedChunk[]>
}

export interface KeywordQuery {
  spaceId: string
  message: string
  limit: number
  filter?: CompiledFilter
}

/**
 * Chunks sharing words with the message, by ts_rank_cd. The message's words are OR-ed
 * (websearch_to_tsquery would AND them, and a question's every word is rarely in one
 * chunk); the rank then prefers chunks with more of them, closer together.
 */
export async function keywordChunks(sql: Queryable, query: KeywordQuery): Promise<RankedChunk[]> {
  return sql<RankedChunk[]>`
    with terms as (
      select to_tsquery('simple', string_agg(quote_literal(word), ' | ')) as query
      from unnest(tsvector_to_array(to_tsvector('simple', ${query.message}))) as word
    )
    select c.id as chunk_id, c.memory_id, ts_rank_cd(c.search_vector, terms.query)::float8 as score
    from terms, chunks c
    ${query.filter ? sql`join memories m on m.id = c.memory_id and ${filterFragment(sql, query.filter)}` : sql``}
    where terms.query is not null and c.space_id = ${query.spaceId} and c.search_vector @@ terms.query
    order by score desc, c.id
    limit ${query.limit}`
}

export interface RetrievedChunkRow {
  id: string
  memory_id: string
  text: string
  start_offset: number
  end_offset: number
}

export async function chunksByIds(sql: Queryable, ids: string[]): Promise<RetrievedChunkRow[]> {
  if (ids.length === 0) return []
  return sql<RetrievedChunkRow[]>`select id, memory_id, text, start_offset, end_offset from chunks where id in ${sql(ids)}`
}
