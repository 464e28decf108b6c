import { pipelinedTransaction, type Queryable, type Sql } from '../database.js'
import { indexedVectorType, MAX_HALFVEC_INDEX_DIMENSIONS } from '../vector-storage.js'
import { type CompiledFilter, filterFragment } from './filter-fragment.js'

/**
 * The most of a chunk's text a search row carries: all of any chunk of the usual sizes
 * (512 characters by default), and of a longer one (a memory stored with chunking `none` is
 * one chunk of up to 4 MiB) the start, which is what a reranker or an LLM is given of it. A
 * search returns up to twice the requested items per list, most of them not answered: whole
 * texts were up to 800 MiB per list. The answer loads a longer chunk's whole text when it
 * streams it (domain/retrieval.ts).
 */
export const SEARCH_TEXT_CHARS = 8_192

/**
 * One ranked list of chunks, best first. Each row carries its chunk's text (up to
 * SEARCH_TEXT_CHARS) and offsets, read by the search statement itself: the answer needs
 * them, and a second query for them would be one more round trip on every retrieval.
 */
export interface RankedChunk {
  chunk_id: string
  memory_id: string
  /** Cosine distance for vectors, ts_rank_cd for keywords. */
  score: number
  /** The first SEARCH_TEXT_CHARS characters (PostgreSQL reads only those of a long stored text). */
  text: string
  /** The whole text's size in UTF-8 bytes, read from the stored value's header. */
  text_bytes: number
  start_offset: number
  end_offset: number
}

export interface VectorQuery {
  spaceId: string
  embedderId: string
  dimensionality: number
  embedding: readonly number[]
  limit: number
  filter?: CompiledFilter
  efSearch: number
  /** pgvector 0.8 and later: keep scanning the index until `limit` rows pass the filter. */
  iterativeScan: boolean
}

/** An embedder id written into SQL text (see nearestChunks): only ever a UUID. */
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Nearest chunks by cosine distance through the embedder's partial HNSW index
 * (src/db/vector-storage.ts). Both the index's expression and its predicate are written
 * into the text: the ORDER BY must be the index's cast, `embedding::halfvec(D)`, and `embedder_id = '<id>'`
 * as a literal lets the plan PostgreSQL caches for this prepared statement use the
 * partial index (with a parameter there, only a plan made for each call's values could,
 * and every call would be planned again). Both are checked values from the embedder's
 * row. The settings are transaction-local, sent in one statement beside the search, the
 * whole transaction in one round trip (pipelinedTransaction). The score is the distance in
 * full precision, from the table: with relaxed_order, and with the index's half precision,
 * the scan may return rows slightly out of order; the outer query sorts them by that
 * score, and joins the few chunks found for their text (the CTE is
 * materialized, so the join cannot change how the index is scanned). The memory
 * benchmark's floor (bench/scenarios/memory.ts floorNearest) sends this same statement:
 * change both together.
 */
export async function nearestChunks(sql: Sql, query: VectorQuery): Promise<RankedChunk[]> {
  const dimensions = query.dimensionality
  if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > MAX_HALFVEC_INDEX_DIMENSIONS)
    throw new Error(`unusable dimensionality ${dimensions}`)
  if (!UUID_TEXT.test(query.embedderId)) throw new Error(`not a UUID: ${query.embedderId}`)
  const indexed = sql.unsafe(indexedVectorType(dimensions))
  const stored = sql.unsafe(`vector(${dimensions})`)
  const embedder = sql.unsafe(`'${query.embedderId}'`)
  const embedding = `[${query.embedding.join(',')}]`
  const efSearch = String(Math.trunc(query.efSearch))
  const [, rows] = await pipelinedTransaction<[unknown, RankedChunk[]]>(sql, (tx) => [
    // Before pgvector 0.8 there is no hnsw.iterative_scan to set (and the prefix is reserved).
    query.iterativeScan
      ? tx`select set_config('hnsw.ef_search', ${efSearch}, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`
      : tx`select set_config('hnsw.ef_search', ${efSearch}, true)`,
    tx<RankedChunk[]>`
      with nearest as materialized (
        select v.chunk_id, v.memory_id, v.embedding::${stored} <=> ${embedding}::${stored} as score
        from chunk_vectors v
        ${query.filter ? tx`join memories m on m.id = v.memory_id and ${filterFragment(tx, query.filter)}` : tx``}
        where v.embedder_id = ${embedder} and v.space_id = ${query.spaceId}
        order by v.embedding::${indexed} <=> ${embedding}::${indexed}
        limit ${query.limit}
      )
      select n.chunk_id, n.memory_id, n.score::float8 as score, left(c.text, ${SEARCH_TEXT_CHARS}) as text,
        octet_length(c.text) as text_bytes, c.start_offset, c.end_offset
      from nearest n join chunks c on c.id = n.chunk_id
      order by n.score, n.chunk_id`,
  ])
  return rows
}

export interface KeywordQuery {
  spaceId: string
  message: string
  limit: number
  filter?: CompiledFilter
}

/**
 * A word the planner's statistics expect in more chunks than this carries almost no
 * information for ranking (a stop word, whatever the language) yet would make the search
 * rank most of the table: it is left out of the query. Small tables keep every word.
 */
export const MAX_ROWS_PER_KEYWORD = 1_000
/** When every word of the message is that common, the rarest few are searched anyway. */
const RAREST_WORDS_KEPT = 2

/**
 * Chunks sharing words with the message, by ts_rank_cd. The message's words are OR-ed
 * (websearch_to_tsquery would AND them, and a question's every word is rarely in one
 * chunk); the rank then prefers chunks with more of them, closer together. The match goes
 * through the GIN index on `search_vector`, and the words ANALYZE found in more than
 * MAX_ROWS_PER_KEYWORD chunks (pg_stats.most_common_elems of that column) are dropped, so
 * the rows to rank stay bounded as the table grows instead of being nearly all of it.
 */
export async function keywordChunks(sql: Queryable, query: KeywordQuery): Promise<RankedChunk[]> {
  return sql<RankedChunk[]>`
    with words as (
      select word from unnest(tsvector_to_array(to_tsvector('simple', ${query.message}))) as word
    ),
    statistics as (
      select s.most_common_elems::text::text[] as elements, s.most_common_elem_freqs as frequencies, greatest(c.reltuples, 0) as row_count
      from pg_stats s join pg_class c on c.oid = 'chunks'::regclass
      where s.schemaname = current_schema() and s.tablename = 'chunks' and s.attname = 'search_vector'
    ),
    estimated as (
      select w.word, coalesce(st.frequencies[array_position(st.elements, w.word)] * st.row_count, 0) as expected_rows
      from words w left join statistics st on true
    ),
    kept as (
      select word from estimated where expected_rows <= ${MAX_ROWS_PER_KEYWORD}
      union
      select word from (select word from estimated order by expected_rows, word limit ${RAREST_WORDS_KEPT}) rarest
    ),
    terms as (
      select to_tsquery('simple', string_agg(quote_literal(word), ' | ')) as query from kept
    )
    select c.id as chunk_id, c.memory_id, ts_rank_cd(c.search_vector, terms.query)::float8 as score,
      left(c.text, ${SEARCH_TEXT_CHARS}) as text, octet_length(c.text) as text_bytes, c.start_offset, c.end_offset
    from terms, chunks c
    ${query.filter ? sql`join memories m on m.id = c.memory_id and ${filterFragment(sql, query.filter)}` : sql``}
    where terms.query is not null and c.space_id = ${query.spaceId} and c.search_vector @@ terms.query
    order by score desc, c.id
    limit ${query.limit}`
}
