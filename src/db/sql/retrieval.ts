import type { ChunkSource } from '../../documents/chunk-source.js'
import type { Queryable } from '../database.js'
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
 * (src/db/vector-storage.ts), in one statement. Both the index's expression and its predicate
 * are written into the text: the ORDER BY must be the index's cast, `embedding::halfvec(D)`,
 * and `embedder_id = '<id>'` as a literal lets the plan PostgreSQL caches for this prepared
 * statement use the partial index (with a parameter there, only a plan made for each call's
 * values could). So is the limit, a checked integer: with a parameter there PostgreSQL
 * costed the cached plan as if a tenth of the space were read and planned every call again
 * (0.3 ms of a 4 ms search). The HNSW settings are set by the statement itself, transaction-
 * local (the statement's own transaction): an uncorrelated subquery in the WHERE is a
 * one-time condition PostgreSQL evaluates before the scan starts, and pgvector reads the
 * settings when the scan returns its first row. BEGIN, a settings statement and COMMIT
 * around the search cost PostgreSQL three more statements and memsvc one more write to the
 * socket per search (issue 36). The score is the distance in full precision, from the table:
 * with relaxed_order, and with the index's half precision, the scan may return rows slightly
 * out of order; the outer query sorts them by that score, and joins the few chunks found for
 * their text (the CTE is materialized, so the join cannot change how the index is scanned).
 * The memory benchmark's floor (bench/scenarios/memory.ts floorNearest) calls this function
 * from outside memsvc, so its ratio compares memsvc with its own statement.
 */
export async function nearestChunks(sql: Queryable, query: VectorQuery): Promise<RankedChunk[]> {
  const dimensions = query.dimensionality
  if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > MAX_HALFVEC_INDEX_DIMENSIONS)
    throw new Error(`unusable dimensionality ${dimensions}`)
  if (!UUID_TEXT.test(query.embedderId)) throw new Error(`not a UUID: ${query.embedderId}`)
  if (!Number.isSafeInteger(query.limit) || query.limit < 1) throw new Error(`unusable limit ${query.limit}`)
  const indexed = sql.unsafe(indexedVectorType(dimensions))
  const stored = sql.unsafe(`vector(${dimensions})`)
  const embedder = sql.unsafe(`'${query.embedderId}'`)
  const limit = sql.unsafe(String(query.limit))
  const embedding = `[${query.embedding.join(',')}]`
  const efSearch = String(Math.trunc(query.efSearch))
  // Before pgvector 0.8 there is no hnsw.iterative_scan to set (and the prefix is reserved).
  const settings = query.iterativeScan
    ? sql`select set_config('hnsw.ef_search', ${efSearch}, true) || set_config('hnsw.iterative_scan', 'relaxed_order', true)`
    : sql`select set_config('hnsw.ef_search', ${efSearch}, true)`
  return sql<RankedChunk[]>`
    with nearest as materialized (
      select v.chunk_id, v.memory_id, v.embedding::${stored} <=> ${embedding}::${stored} as score
      from chunk_vectors v
      ${needsMemoryRow(query) ? sql`join memories m on m.id = v.memory_id ${memoryConditions(sql, query)}` : sql``}
      where v.embedder_id = ${embedder} and v.space_id = ${query.spaceId} and (${settings}) is not null
      order by v.embedding::${indexed} <=> ${embedding}::${indexed}
      limit ${limit}
    )
    select n.chunk_id, n.memory_id, n.score::float8 as score, left(c.text, ${SEARCH_TEXT_CHARS}) as text,
      octet_length(c.text) as text_bytes, c.start_offset, c.end_offset, c.source
    from nearest n join chunks c on c.id = n.chunk_id
    order by n.score, n.chunk_id`
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
 * Which chunks one keyword search scores. BM25 reads each candidate's search vector from the
 * table, a page each: scoring every chunk that holds one of the message's rarer words (up to
 * 2,000 at 100k chunks) took most of a hybrid retrieval's PostgreSQL time, and those pages
 * pushed the vector index out of PostgreSQL's cache (issue 36). The chunks that rank high hold
 * several of the message's words, so the GIN index is asked for those first, in tiers: chunks
 * holding at least 3, then at least 2, of the message's KEYWORD_TIER_WORDS rarest words; the
 * first tier that finds the requested number of chunks is scored. When neither does (a short
 * message, a small space), the chunks holding any of the message's rarest words are scored
 * too, as many words as have KEYWORD_FALLBACK_CHUNKS chunks between them (always the rarest
 * one), as before. Every word of the message still adds to the score of the chunks found.
 */
export const KEYWORD_TIER_WORDS = 5
/** Words in more of a space's chunks than this share stay out of the tiers: two of them together still match a large part of the space. */
const KEYWORD_TIER_MAX_SHARE = 0.1
/** At most this many chunks are scored from one tier (the index's order: arbitrary, but rare). */
export const MAX_KEYWORD_CANDIDATES = 1_000
const KEYWORD_FALLBACK_CHUNKS = 500

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

/** A word quoted for tsquery syntax, taken as it is (it is a lexeme already: not parsed and stemmed a second time). */
const tsqueryWord = (column: string) => `'''' || replace(replace(${column}, '\\', '\\\\'), '''', '''''') || ''''`

/**
 * The chunks of a space that best match the message's words, ranked by BM25 and scored in
 * 0..1 (bm25Terms), at most `limit`. The candidates come through the GIN index on
 * `search_vector`, in the tiers KEYWORD_TIER_WORDS describes; the text is read for the
 * chunks answered only. A tier's words are asked as one AND per word with the rarer words
 * of the tier after it (the rarest word AND at least two of the others, the next AND…): each
 * such scan is driven by its first word's entries, where one tsquery OR-ing every pair or triple
 * makes the index test every chunk holding any of the words. A later tier runs only when the
 * earlier ones found fewer than `limit` chunks (its WHERE starts with a condition on them that
 * PostgreSQL checks once, before scanning).
 */
export async function keywordChunks(sql: Queryable, query: KeywordQuery): Promise<RankedChunk[]> {
  const memoryJoin = needsMemoryRow(query)
    ? sql`join memories m on m.id = c.memory_id ${memoryConditions(sql, query)}`
    : sql``
  const word = sql.unsafe(tsqueryWord('word'))
  return sql<RankedChunk[]>`
    with ${bm25Terms(sql, query)},
    tier_words as (
      select row_number() over (order by t.frequency, t.word) as rank, ${sql.unsafe(tsqueryWord('t.word'))} as word
      from terms t cross join space sp
      where t.frequency > 0 and t.frequency <= ${KEYWORD_TIER_MAX_SHARE}::float8 * sp.chunks
      order by t.frequency, t.word
      limit ${KEYWORD_TIER_WORDS}
    ),
    tiers as (
      select
        (select array_agg((a.word || ' & (' || pairs || ')')::tsquery order by a.rank) from tier_words a cross join lateral (
          select string_agg(b.word || ' & ' || c.word, ' | ') as pairs
          from tier_words b join tier_words c on c.rank > b.rank where b.rank > a.rank
        ) p where pairs is not null) as three,
        (select array_agg((a.word || ' & (' || others || ')')::tsquery order by a.rank) from tier_words a cross join lateral (
          select string_agg(b.word, ' | ') as others from tier_words b where b.rank > a.rank
        ) o where others is not null) as two
    ),
    holding_three as materialized (
      select c.id, c.memory_id, c.search_vector
      from tiers, chunks c ${memoryJoin}
      where c.space_id = ${query.spaceId} and (c.search_vector @@ tiers.three[1]
        or c.search_vector @@ tiers.three[2] or c.search_vector @@ tiers.three[3])
      limit ${MAX_KEYWORD_CANDIDATES}
    ),
    holding_two as materialized (
      select c.id, c.memory_id, c.search_vector
      from tiers, chunks c ${memoryJoin}
      where (select count(*) from holding_three) < ${query.limit} and c.space_id = ${query.spaceId}
        and (c.search_vector @@ tiers.two[1] or c.search_vector @@ tiers.two[2]
          or c.search_vector @@ tiers.two[3] or c.search_vector @@ tiers.two[4])
      limit ${MAX_KEYWORD_CANDIDATES}
    ),
    searched as (
      select word from (
        select word, sum(frequency) over (order by frequency, word) as running from terms where frequency > 0
      ) rarest_first
      where running <= ${KEYWORD_FALLBACK_CHUNKS}
      union
      (select word from terms where frequency > 0 order by frequency, word limit 1)
    ),
    search as (select string_agg(${word}, ' | ')::tsquery as query from searched),
    holding_any as materialized (
      select c.id, c.memory_id, c.search_vector
      from search, chunks c ${memoryJoin}
      where (select count(*) from holding_two) < ${query.limit} and (select count(*) from holding_three) < ${query.limit}
        and search.query is not null and c.space_id = ${query.spaceId} and c.search_vector @@ search.query
      limit ${MAX_KEYWORD_CANDIDATES}
    ),
    candidates as (
      -- holding_two, when it ran, holds holding_three's chunks too.
      select * from holding_three where (select count(*) from holding_three) >= ${query.limit}
      union all
      select * from holding_two
      union all
      select * from holding_any a where not exists (select from holding_two t where t.id = a.id)
    ),
    ${bm25Scored(sql)}
    select best.id as chunk_id, best.memory_id, best.score::float8 as score, left(c.text, ${SEARCH_TEXT_CHARS}) as text,
      octet_length(c.text) as text_bytes, c.start_offset, c.end_offset, c.source
    from (select id, memory_id, score from scored order by score desc, id limit ${query.limit}) best
    join chunks c on c.id = best.id
    order by best.score desc, best.id`
}

/**
 * Ids for `= any(…)`, passed through a one-row subquery: a plan then knows no more of their
 * number than the statement's cached (generic) plan does, so PostgreSQL keeps using that
 * plan. With the array as a plain parameter it made a plan for each call's ids, every call:
 * planning took longer than the few key lookups it planned (issue 36).
 */
const idList = (sql: Queryable, ids: string[]) => sql`(select ${ids}::uuid[])::uuid[]`

/**
 * The scores keywordChunks would give these chunks of the space (one holding none of the
 * message's words is left out): for chunks a vector search found, so that a hybrid score
 * weighs each chunk's own keyword score, not whether it made the keyword search's top few.
 * The ids go in through idList, so the statement's cached plan is used.
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
      where c.id = any(${idList(sql, chunkIds)}) and c.space_id = ${query.spaceId}
    ),
    ${bm25Scored(sql)}
    select id as chunk_id, score::float8 as score from scored`
}

/**
 * The cosine distances from the message's vector to these chunks' vectors of one embedder,
 * for chunks its nearest-neighbour search did not return (a keyword search or another
 * embedder found them): primary-key lookups, in full precision as nearestChunks scores.
 * The ids go in through idList, so the statement's cached plan is used.
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
    where chunk_id = any(${idList(sql, chunkIds)}) and embedder_id = ${query.embedderId}`
}
