import type { ChunkSource } from '../../documents/chunk-source.js'
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
  /** Cosine distance for vectors; for keywords, BM25 scaled to 0..1 (keywordChunks). */
  score: number
  /** The first SEARCH_TEXT_CHARS characters (PostgreSQL reads only those of a long stored text). */
  text: string
  /** The whole text's size in UTF-8 bytes, read from the stored value's header. */
  text_bytes: number
  start_offset: number
  end_offset: number
  /** Where a document's chunk came from (page, slide, sheet, headings); null for text memories. */
  source: ChunkSource | null
}

/**
 * What a search asks of the memories of the chunks it finds, beyond their space: a compiled
 * metadata filter over `m.metadata`, and that they are not past their valid_until. Either
 * joins the memory row to each chunk considered; a search with neither reads no memory row.
 */
export interface MemoryConditions {
  filter?: CompiledFilter
  /** Leave out memories whose valid_until has passed. Set only for spaces that ever held one (migration 16). */
  excludeExpired?: boolean
}

/** `and …` for each condition, after `join memories m on m.id = ….memory_id`. */
function memoryConditions(sql: Queryable, query: MemoryConditions) {
  return sql`${query.filter ? sql`and ${filterFragment(sql, query.filter)}` : sql``}
    ${query.excludeExpired ? sql`and (m.valid_until is null or m.valid_until > now())` : sql``}`
}

const needsMemoryRow = (query: MemoryConditions) => query.filter !== undefined || query.excludeExpired === true

export interface VectorQuery extends MemoryConditions {
  spaceId: string
  embedderId: string
  dimensionality: number
  embedding: readonly number[]
  limit: number
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
        ${needsMemoryRow(query) ? tx`join memories m on m.id = v.memory_id ${memoryConditions(tx, query)}` : tx``}
        where v.embedder_id = ${embedder} and v.space_id = ${query.spaceId}
        order by v.embedding::${indexed} <=> ${embedding}::${indexed}
        limit ${query.limit}
      )
      select n.chunk_id, n.memory_id, n.score::float8 as score, left(c.text, ${SEARCH_TEXT_CHARS}) as text,
        octet_length(c.text) as text_bytes, c.start_offset, c.end_offset, c.source
      from nearest n join chunks c on c.id = n.chunk_id
      order by n.score, n.chunk_id`,
  ])
  return rows
}

export interface KeywordQuery extends MemoryConditions {
  spaceId: string
  /** The space's text search configuration ('english', 'simple'…), which made its chunks' search vectors. */
  language: string
  message: string
  limit: number
}

/** BM25's usual constants: how soon a word's repeats stop adding to a chunk's score (k1), how much its length counts (b). */
const BM25_K1 = 1.2
const BM25_B = 0.75
/**
 * The chunks one keyword search scores at most. The message's rarest words are searched, as
 * many as have this many chunks between them (always the rarest one): a chunk holding none of
 * them holds only words common in the space, which score little. Very common words are not
 * searched, so they cannot make the search rank most of the table, yet they still add to the
 * score of the chunks found. At 100k chunks a search that scored 2,000 took about 20 ms on
 * PostgreSQL 15 (issue 33).
 */
export const MAX_KEYWORD_CANDIDATES = 2_000

/**
 * The statement's first part, shared by keywordChunks and keywordScores: the message's words
 * in the space's language (stop words dropped, stemmed), each word's inverse document
 * frequency from the space's statistics (space_word_stats, kept by triggers on chunks:
 * migration 11), and what scales a chunk's BM25 to 0..1: the score of a chunk of average
 * length holding every word of the message once.
 */
function bm25Terms(sql: Queryable, query: { spaceId: string; language: string; message: string }) {
  return sql`
    words as (select distinct lexeme as word from unnest(to_tsvector(${query.language}::regconfig, ${query.message}))),
    space as (
      select coalesce(max(chunk_count), 0)::float8 as chunks,
        coalesce(max(lexeme_count)::float8 / nullif(max(chunk_count), 0), 1) as average_length
      from space_text_stats where space_id = ${query.spaceId}
    ),
    terms as (
      select w.word, coalesce(st.chunk_count, 0) as frequency,
        ln(1 + (sp.chunks - coalesce(st.chunk_count, 0) + 0.5) / (coalesce(st.chunk_count, 0) + 0.5)) as idf
      from words w cross join space sp
      left join space_word_stats st on st.space_id = ${query.spaceId} and st.word = w.word
    ),
    ideal as (select sum(idf) as score, array_agg(word) as words from terms)`
}

/**
 * BM25 of the chunks in `candidates` (id, memory_id, search_vector) over every word of the
 * message, divided by the ideal score and capped at 1. A chunk's length is its number of
 * distinct words, which its search vector holds in its header.
 */
function bm25Scored(sql: Queryable) {
  return sql`
    scored as (
      select c.id, c.memory_id, least(1, sum(t.idf * o.tf * ${BM25_K1 + 1}::float8
          / (o.tf + ${BM25_K1}::float8 * (1 - ${BM25_B}::float8 + ${BM25_B}::float8 * length(c.search_vector) / sp.average_length)))
        / max(i.score)) as score
      from candidates c cross join space sp cross join ideal i
      cross join lateral (
        -- The message's words in this chunk with their positions, without expanding the whole vector.
        select f.lexeme, coalesce(cardinality(f.positions), 1) as tf
        from unnest(ts_filter(setweight(c.search_vector, 'A', i.words), '{a}')) f
      ) o
      join terms t on t.word = o.lexeme
      group by c.id, c.memory_id
    )`
}

/**
 * The chunks of a space that best match the message's words, ranked by BM25 and scored in
 * 0..1 (bm25Terms), at most `limit`. The candidates come through the GIN index on
 * `search_vector`, at most MAX_KEYWORD_CANDIDATES; the text is read for the chunks answered
 * only. The words go into the tsquery as they are (quoted for its syntax), not parsed and
 * stemmed a second time.
 */
export async function keywordChunks(sql: Queryable, query: KeywordQuery): Promise<RankedChunk[]> {
  return sql<RankedChunk[]>`
    with ${bm25Terms(sql, query)},
    searched as (
      select word from (
        select word, sum(frequency) over (order by frequency, word) as running from terms where frequency > 0
      ) rarest_first
      where running <= ${MAX_KEYWORD_CANDIDATES}
      union
      (select word from terms where frequency > 0 order by frequency, word limit 1)
    ),
    search as (
      select string_agg('''' || replace(replace(word, '\\', '\\\\'), '''', '''''') || '''', ' | ')::tsquery as query
      from searched
    ),
    candidates as (
      select c.id, c.memory_id, c.search_vector
      from search, chunks c
      ${needsMemoryRow(query) ? sql`join memories m on m.id = c.memory_id ${memoryConditions(sql, query)}` : sql``}
      where search.query is not null and c.space_id = ${query.spaceId} and c.search_vector @@ search.query
      limit ${MAX_KEYWORD_CANDIDATES}
    ),
    ${bm25Scored(sql)}
    select best.id as chunk_id, best.memory_id, best.score::float8 as score, left(c.text, ${SEARCH_TEXT_CHARS}) as text,
      octet_length(c.text) as text_bytes, c.start_offset, c.end_offset, c.source
    from (select id, memory_id, score from scored order by score desc, id limit ${query.limit}) best
    join chunks c on c.id = best.id
    order by best.score desc, best.id`
}

/**
 * The scores keywordChunks would give these chunks of the space (one holding none of the
 * message's words is left out): for chunks a vector search found, so that a hybrid score
 * weighs each chunk's own keyword score, not whether it made the keyword search's top few.
 */
export async function keywordScores(
  sql: Queryable,
  query: Omit<KeywordQuery, 'limit' | keyof MemoryConditions>,
  chunkIds: string[],
): Promise<Array<{ chunk_id: string; score: number }>> {
  if (chunkIds.length === 0) return []
  return sql<Array<{ chunk_id: string; score: number }>>`
    with ${bm25Terms(sql, query)},
    candidates as (
      select c.id, c.memory_id, c.search_vector from chunks c
      where c.id = any(${chunkIds}::uuid[]) and c.space_id = ${query.spaceId}
    ),
    ${bm25Scored(sql)}
    select id as chunk_id, score::float8 as score from scored`
}

/**
 * The cosine distances from the message's vector to these chunks' vectors of one embedder,
 * for chunks its nearest-neighbour search did not return (a keyword search or another
 * embedder found them): primary-key lookups, in full precision as nearestChunks scores.
 */
export async function chunkDistances(
  sql: Queryable,
  query: { embedderId: string; dimensionality: number; embedding: readonly number[] },
  chunkIds: string[],
): Promise<Array<{ chunk_id: string; score: number }>> {
  if (chunkIds.length === 0) return []
  const dimensions = query.dimensionality
  if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > MAX_HALFVEC_INDEX_DIMENSIONS)
    throw new Error(`unusable dimensionality ${dimensions}`)
  const stored = sql.unsafe(`vector(${dimensions})`)
  return sql<Array<{ chunk_id: string; score: number }>>`
    select chunk_id, (embedding::${stored} <=> ${`[${query.embedding.join(',')}]`}::${stored})::float8 as score
    from chunk_vectors
    where chunk_id = any(${chunkIds}::uuid[]) and embedder_id = ${query.embedderId}`
}
