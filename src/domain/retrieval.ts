import crypto from 'node:crypto'
import { pipelined, type Queryable } from '../db/database.js'
import * as chunksSql from '../db/sql/chunks.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { RerankerRow } from '../db/sql/rerankers.js'
import * as retrievalSql from '../db/sql/retrieval.js'
import { type RankedChunk, SEARCH_TEXT_CHARS } from '../db/sql/retrieval.js'
import type { EmbedderTargetRow, SpaceEmbedderTarget, SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import { MAX_INDEXED_VECTOR_VALUE } from '../db/vector-storage.js'
import type { ChunkSource } from '../documents/chunk-source.js'
import { AppError, invalidArgument, toAppError } from '../errors/app-error.js'
import { answerFromPassages } from '../providers/chat.js'
import { type EmbeddingCall, EmbeddingError, embedTexts, QUERY_EMBEDDING_POLICY } from '../providers/embed.js'
import { ProviderCallError, QUERY_PROVIDER_TIMEOUT_MS } from '../providers/http.js'
import { rerankDocuments } from '../providers/rerank.js'
import { parseInput } from '../validation/parse.js'
import {
  DEFAULT_RECENCY_WEIGHT,
  DEFAULT_REQUESTED_SIZE,
  type RetrievalMode,
  type RetrieveMemoriesRequest,
  retrieveMemoriesSchema,
} from '../validation/retrieval.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import type { CompiledFilter } from './filters/filter-compiler.js'
import { metadataFilter } from './filters/metadata-filter.js'
import { findUsableLlm } from './llms.js'
import { type Memory, toMemory } from './memories.js'
import type { Principal } from './permissions.js'
import type { ReadConnection } from './read-routing.js'
import { embedderProfile, llmProfile, openProviderAccess, rerankerProfile } from './registered-providers.js'
import { findUsableReranker } from './rerankers.js'
import { RETRY_AFTER_SECONDS, type Reservation } from './response-budget.js'
import { requireSpaceAccess, requireVectorStorage } from './space-access.js'
import type { SpaceRows } from './space-rows-cache.js'
import { type TextLoader, type TextNeed, TextsOnDemand } from './texts-on-demand.js'

/**
 * POST /v1/memories:retrieve. Everything that can be refused is checked before the
 * answer starts (validation, spaces, embedders in the weights, the reranker and the LLM,
 * the searches and the rerank), so a transport answers those as a 4xx or 5xx. What follows is an async
 * iterable of events the transports only serialise: the items are yielded as soon as the
 * fused ranking is known; the LLM answer, if asked for, comes after them, and its failure
 * is a `status` event at the end rather than a lost stream.
 *
 * The memory an answer holds is bounded whatever its size: the searches carry at most
 * SEARCH_TEXT_CHARS of each chunk's text, and the long texts (memory contents, longer
 * chunks) are loaded as the stream reaches them, a batch at a time, so a stream holds about
 * one batch however many memories it answers with and however slowly its client reads
 * (the transports wait for the client before pulling the next event). Before it starts, a
 * retrieval reserves that much of the server's response budget (response-budget.ts); when
 * the budget is spent it is refused with UNAVAILABLE and a time to retry.
 */

/** How much of a long chunk's text the searches carry (and MCP answers); re-exported for the transports, which never import SQL. */
export { SEARCH_TEXT_CHARS }

export interface RetrievedChunk {
  chunkId: string
  memoryId: string
  /** Index of the memory among this answer's memoryDefinition events. */
  memoryIndex: number
  chunkText: string
  startOffset: number
  endOffset: number
  relevanceScore: number
  /** A document's chunk: the page (slide, sheet, headings) it came from, for citations. */
  source?: ChunkSource
  /** With recency: what relevanceScore was made of. */
  scoreParts?: ScoreParts
}

/** relevanceScore = (1 − recencyWeight) × relevance + recencyWeight × recency. */
export interface ScoreParts {
  /** The fused (or reranked) score, 0..1. */
  relevance: number
  /** 0.5 ^ (ageSeconds / halfLifeSeconds), 0..1. */
  recency: number
  recencyWeight: number
  /** Seconds since the memory's updatedAt, when the answer was prepared. */
  ageSeconds: number
}

/**
 * What the answer could not do as its mode asks, said on the BEGIN boundary. The only kind:
 * VECTOR_SEARCH_SKIPPED, a space where no vector search ran (it has no embedder, or none
 * READY with a weight above 0), so its items come from keyword search alone (HYBRID) or it
 * has none (VECTOR).
 */
export interface RetrievalNotice {
  code: 'VECTOR_SEARCH_SKIPPED'
  spaceId: string
  message: string
}

export type RetrievalEvent =
  | {
      resultSetBoundary: {
        resultSetId: string
        kind: 'BEGIN' | 'END'
        stageName: string
        expectedItems?: number
        /** On BEGIN, when there is something to say. */
        notices?: RetrievalNotice[]
      }
    }
  | { memoryDefinition: { memory: Memory & { originalContent?: string } } }
  | { retrievedItem: { chunk: RetrievedChunk } }
  | { abstractReply: { text: string } }
  | { status: { code: string; message: string } }

/** HYBRID weighs a space's keyword list like one embedder of weight 1. */
export const KEYWORD_WEIGHT = 1
/** Each list contributes this many times the requested size, so fusion has candidates beyond the top few. */
const CANDIDATES_PER_ITEM = 2
const MIN_CANDIDATES = 20
/**
 * The HNSW search list per candidate wanted. pgvector's default ef_search of 40 found 0.67
 * of the exact top 10 at 50k chunks of 384 dimensions (bench --memory); recall rises with
 * the list, so it scales with the candidates asked for: 500 for the default 10 items,
 * which with the graph of HNSW_EF_CONSTRUCTION (src/db/vector-storage.ts) found 0.97 to
 * 0.99 of the exact top 10 at 100k chunks.
 */
const EF_SEARCH_PER_CANDIDATE = 25
/** pgvector's own bounds for hnsw.ef_search. */
const MIN_EF_SEARCH = 1
const MAX_EF_SEARCH = 1_000
const LLM_TIMEOUT_MS = 120_000
const RERANK_TIMEOUT_MS = QUERY_PROVIDER_TIMEOUT_MS
const STAGE_NAME = 'retrieval'
const MIN_ITERATIVE_SCAN_VERSION = [0, 8]
/** Long texts are loaded up to this many bytes per query: small memories share a round trip, a large one has its own. */
export const TEXT_BATCH_BYTES = 1024 * 1024
/**
 * A loaded text is held about three times while it goes out: the string read, its event
 * framed as JSON (or encoded as protobuf) and what the socket has not taken yet.
 */
const COPIES_WHILE_STREAMING = 3
/** What a transport holds of an answer beyond the event it is writing (a write batch, a high-water mark). */
const STREAM_OVERHEAD_BYTES = 64 * 1024
/** A string holds at most two bytes per character. */
const BYTES_PER_CHAR = 2

/** What a list searched with: enough to score the chunks the other lists of its space found. */
type ListSource =
  | { kind: 'vector'; embedderId: string; embedding: readonly number[] }
  | { kind: 'keyword'; language: string }

/** One ranked list to fuse, with the weight of its source. */
interface WeightedList {
  spaceId: string
  weight: number
  source: ListSource
  chunks: RankedChunk[]
  /**
   * Each chunk's relevance in this list, 0..1: for its own rows, then (completeScores) for the
   * chunks the other lists of its space found. A chunk absent here holds none of it: 0.
   */
  scores: Map<string, number>
}

interface SpacePlan {
  spaceId: string
  filter?: CompiledFilter
  /**
   * Leave out memories past their validUntil: only where the space ever held one
   * (has_expiring_memories, migration 16), so other spaces' searches read no memory row.
   */
  excludeExpired: boolean
  /** The space's text search configuration. */
  language: string
  /** READY embedders with a weight above zero, each with its registration. */
  embedders: Array<{ member: SpaceEmbedderTarget; weight: number }>
}

/** Cosine similarity from pgvector's cosine distance, in 0..1: a vector pointing away is as unrelated as an orthogonal one. */
const similarity = (distance: number) => (Number.isFinite(distance) ? Math.min(1, Math.max(0, 1 - distance)) : 0)
/** A keyword score as keywordChunks gives it (0..1 already; guarded all the same). */
const keywordRelevance = (score: number) => (Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0)

/** How many candidates each list contributes for `requestedSize` items, and the HNSW search list length that finds them. */
export function vectorSearchPlan(requestedSize: number, efSearch?: number): { limit: number; efSearch: number } {
  const limit = Math.max(requestedSize * CANDIDATES_PER_ITEM, MIN_CANDIDATES)
  // An explicit hnsw.efSearch is taken as given, but never shorter than the candidates wanted.
  const wanted = efSearch === undefined ? limit * EF_SEARCH_PER_CANDIDATE : Math.max(efSearch, limit)
  return { limit, efSearch: Math.min(MAX_EF_SEARCH, Math.max(MIN_EF_SEARCH, wanted)) }
}

function supportsIterativeScan(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return (
    major > MIN_ITERATIVE_SCAN_VERSION[0]! ||
    (major === MIN_ITERATIVE_SCAN_VERSION[0] && minor >= MIN_ITERATIVE_SCAN_VERSION[1]!)
  )
}

/**
 * The spaces, and their embedders with the embedders' registrations: kept by the server
 * (src/domain/space-rows-cache.ts), or read in two queries in one write and kept.
 */
async function spaceRows(context: DomainContext, spaceIds: string[]): Promise<SpaceRows> {
  const kept = context.spaceRows.lookup(spaceIds)
  if (kept) return kept
  const generation = context.spaceRows.generation
  const [found, targets] = await pipelined<[SpaceRow[], SpaceEmbedderTarget[]]>(context.sql, (connection) => [
    spacesSql.findSpaces(connection, spaceIds),
    spacesSql.listSpaceEmbedderTargets(connection, spaceIds),
  ])
  const rows = { spaces: new Map(found.map((space) => [space.id, space])), targets }
  context.spaceRows.fill(spaceIds, rows, generation)
  return rows
}

/**
 * Each key checked in order, as the caller wrote them, against the rows read for its space.
 * VECTOR over a space with no embedder is refused; a space where no vector search can run
 * otherwise gets a notice.
 */
function planSpaces(
  principal: Principal,
  request: RetrieveMemoriesRequest,
  rows: SpaceRows,
  mode: RetrievalMode,
): { plans: SpacePlan[]; notices: RetrievalNotice[] } {
  const plans: SpacePlan[] = []
  const notices: RetrievalNotice[] = []
  for (const [index, key] of request.spaceKeys.entries()) {
    const filter =
      key.filter === undefined
        ? undefined
        : metadataFilter(key.filter, `spaceKeys.${index}.filter`, 'm.metadata').compiled
    // Another user's private space answers exactly like a missing one.
    const space = requireSpaceAccess(principal, rows.spaces.get(key.spaceId), 'MEMORY', 'LIST', `space ${key.spaceId}`)
    const members = rows.targets.filter((member) => member.space_id === key.spaceId)
    if (mode === 'VECTOR' && members.length === 0)
      throw invalidArgument(
        `spaceKeys.${index}.spaceId`,
        `space ${key.spaceId} has no embedders, so mode VECTOR cannot search it: add one (:addEmbedder) or use KEYWORD or HYBRID`,
      )
    const weights = new Map(members.map((member) => [member.embedder_id, member.default_retrieval_weight]))
    for (const [position, entry] of (key.embedderWeights ?? []).entries()) {
      if (!weights.has(entry.embedderId))
        throw invalidArgument(
          `spaceKeys.${index}.embedderWeights.${position}.embedderId`,
          `embedder ${entry.embedderId} is not an embedder of space ${key.spaceId}`,
        )
      weights.set(entry.embedderId, entry.weight)
    }
    const embedders = members
      .filter((member) => member.index_state === 'READY' && weights.get(member.embedder_id)! > 0)
      .map((member) => ({ member, weight: weights.get(member.embedder_id)! }))
    const excludeExpired = request.includeExpired !== true && space.has_expiring_memories === true
    plans.push({ spaceId: key.spaceId, filter, excludeExpired, language: space.text_search_language, embedders })
    if (mode !== 'KEYWORD' && embedders.length === 0) {
      const why = members.length === 0 ? 'has no embedders' : 'has no embedder READY with a weight above 0'
      const answer = mode === 'HYBRID' ? 'its items come from keyword search only' : 'it answers no items'
      notices.push({
        code: 'VECTOR_SEARCH_SKIPPED',
        spaceId: key.spaceId,
        message: `no vector search ran for space ${key.spaceId}: it ${why}; ${answer}`,
      })
    }
  }
  return { plans, notices }
}

/** The query embedding cache's key for one embedder's vector of the message. */
const queryKey = (target: EmbedderTargetRow, message: string) =>
  ({ embedderId: target.id, embedderUpdatedAt: target.updated_at, inputType: 'search_query', message }) as const

/**
 * The spaces' rows decide access and which lists to search; then the searches, and the scores
 * each list gives the chunks the other lists of its space found.
 */
async function planAndSearch(
  context: DomainContext,
  principal: Principal,
  reads: ReadConnection,
  request: RetrieveMemoriesRequest,
  limit: number,
): Promise<{ lists: WeightedList[]; notices: RetrievalNotice[] }> {
  const mode = request.mode ?? 'HYBRID'
  const rows = await spaceRows(
    context,
    request.spaceKeys.map((key) => key.spaceId),
  )
  const { plans, notices } = planSpaces(principal, request, rows, mode)
  const lists = await searchLists(context, reads, request, plans, limit)
  await completeScores(reads, request.message, lists)
  return { lists, notices }
}

/**
 * The message's vector from each embedder, once each whatever the number of spaces using
 * it; a message asked before of the same registration comes from the server's cache.
 */
async function embedMessage(
  context: DomainContext,
  embedders: EmbedderTargetRow[],
  message: string,
): Promise<Map<string, readonly number[]>> {
  const vectors = new Map<string, readonly number[]>()
  for (const target of embedders) {
    const key = queryKey(target, message)
    try {
      const vector = await context.queryEmbeddings.embed(key, async () => {
        const call: EmbeddingCall = {
          embedder: embedderProfile(target),
          access: openProviderAccess(context.secrets, 'embedders', target),
          policy: QUERY_EMBEDDING_POLICY,
          maxVectorValue: MAX_INDEXED_VECTOR_VALUE,
          localModels: context.localModels,
        }
        const [embedded] = await embedTexts(call, [message], key.inputType)
        return embedded!
      })
      vectors.set(target.id, vector)
    } catch (error) {
      if (error instanceof EmbeddingError)
        throw new AppError(
          error.permanent ? 'FAILED_PRECONDITION' : 'UNAVAILABLE',
          `cannot embed the message: ${error.message}`,
        )
      throw error
    }
  }
  return vectors
}

/**
 * Every list's search at once, each on its own pooled connection: the keyword searches need
 * no query vector, so they run while the message is embedded, and the vector searches of
 * several spaces or embedders do not wait for each other. The lists keep a fixed order
 * (vector lists by space and embedder, then keyword lists by space), so the fused scores
 * are summed in the same order every time.
 */
async function searchLists(
  context: DomainContext,
  reads: ReadConnection,
  request: RetrieveMemoriesRequest,
  plans: SpacePlan[],
  limit: number,
): Promise<WeightedList[]> {
  const mode = request.mode ?? 'HYBRID'
  const vectorLists = async (): Promise<WeightedList[]> => {
    if (mode === 'KEYWORD') return []
    const embedders = new Map(plans.flatMap((plan) => plan.embedders.map(({ member }) => [member.id, member] as const)))
    const vectors = await embedMessage(context, [...embedders.values()], request.message)
    const support = context.vectorSupport
    const iterativeScan = support.available && supportsIterativeScan(support.version)
    const { efSearch } = vectorSearchPlan(requestedSizeOf(request), request.hnsw?.efSearch)
    return Promise.all(
      plans.flatMap((plan) =>
        plan.embedders.map(async ({ member, weight }) => {
          const embedding = vectors.get(member.embedder_id)!
          const search = {
            spaceId: plan.spaceId,
            embedderId: member.embedder_id,
            dimensionality: embedding.length,
            embedding,
            limit,
            filter: plan.filter,
            excludeExpired: plan.excludeExpired,
            efSearch,
            iterativeScan,
          }
          const chunks = await reads.run((sql) => retrievalSql.nearestChunks(sql, search))
          const scores = new Map(chunks.map((chunk) => [chunk.chunk_id, similarity(chunk.score)]))
          const source: ListSource = { kind: 'vector', embedderId: member.embedder_id, embedding }
          return { spaceId: plan.spaceId, weight, source, chunks, scores }
        }),
      ),
    )
  }
  const keywordLists = async (): Promise<WeightedList[]> => {
    if (mode === 'VECTOR') return []
    return Promise.all(
      plans.map(async (plan) => {
        const search = {
          spaceId: plan.spaceId,
          language: plan.language,
          message: request.message,
          limit,
          filter: plan.filter,
          excludeExpired: plan.excludeExpired,
        }
        const chunks = await reads.run((sql) => retrievalSql.keywordChunks(sql, search))
        const scores = new Map(chunks.map((chunk) => [chunk.chunk_id, keywordRelevance(chunk.score)]))
        const source: ListSource = { kind: 'keyword', language: plan.language }
        return { spaceId: plan.spaceId, weight: KEYWORD_WEIGHT, source, chunks, scores }
      }),
    )
  }
  // One Promise.all over both: the first failure is the answer, and a later one of the other side is handled.
  const [vector, keyword] = await Promise.all([vectorLists(), keywordLists()])
  return [...vector, ...keyword]
}

/**
 * Each list's score for the chunks the other lists of its space found and it did not: the
 * exact cosine of a chunk a keyword search (or another embedder) found, the keyword score of
 * one a vector search found. Without them a chunk would count 0 in every list whose top few
 * it missed, and a fused score would say where it ranked, not how well it matches. A few
 * key lookups per list, all at once.
 */
async function completeScores(reads: ReadConnection, message: string, lists: WeightedList[]): Promise<void> {
  const found = new Map<string, Set<string>>()
  for (const list of lists) {
    const ids = found.get(list.spaceId) ?? new Set<string>()
    for (const chunk of list.chunks) ids.add(chunk.chunk_id)
    found.set(list.spaceId, ids)
  }
  await Promise.all(
    lists.map(async (list) => {
      const missing = [...found.get(list.spaceId)!].filter((id) => !list.scores.has(id))
      if (missing.length === 0) return
      const { source } = list
      if (source.kind === 'vector') {
        const query = { ...source, dimensionality: source.embedding.length }
        for (const row of await reads.run((sql) => retrievalSql.chunkDistances(sql, query, missing)))
          list.scores.set(row.chunk_id, similarity(row.score))
      } else {
        const query = { spaceId: list.spaceId, language: source.language, message }
        for (const row of await reads.run((sql) => retrievalSql.keywordScores(sql, query, missing)))
          list.scores.set(row.chunk_id, keywordRelevance(row.score))
      }
    }),
  )
}

export interface FusedChunk {
  chunkId: string
  memoryId: string
  /** 0..1: the weighted mean of the chunk's scores in the lists of its space. */
  relevanceScore: number
}

/**
 * A chunk's fused score is the weighted mean of its scores in every list of its space
 * (cosine similarity per embedder, the keyword score), each list weighted as the space or
 * the request says. Scores keep their absolute meaning: a chunk that matches nothing well
 * scores low whatever its rank, and spaces compare as they are. Ties go by chunk id.
 */
export function fuseScores(lists: WeightedList[]): FusedChunk[] {
  const weights = new Map<string, number>()
  const fused = new Map<string, { memoryId: string; spaceId: string; score: number }>()
  for (const list of lists) {
    weights.set(list.spaceId, (weights.get(list.spaceId) ?? 0) + list.weight)
    for (const chunk of list.chunks)
      if (!fused.has(chunk.chunk_id))
        fused.set(chunk.chunk_id, { memoryId: chunk.memory_id, spaceId: list.spaceId, score: 0 })
  }
  for (const list of lists)
    for (const [chunkId, entry] of fused)
      if (entry.spaceId === list.spaceId) entry.score += list.weight * (list.scores.get(chunkId) ?? 0)
  return [...fused.entries()]
    .map(([chunkId, entry]) => ({
      chunkId,
      memoryId: entry.memoryId,
      relevanceScore: Math.min(1, entry.score / weights.get(entry.spaceId)!),
    }))
    .sort((a, b) => b.relevanceScore - a.relevanceScore || a.chunkId.localeCompare(b.chunkId))
}

/** Where the text of a streamed item comes from. */
type ItemText =
  /** The search row's text (whole, or its start when the caller asked for no more). */
  | 'row'
  /** Its memory's content, loaded for the memoryDefinition just before it. */
  | 'content'
  /** Loaded on its own (`PreparedAnswer.chunkTexts`). */
  | 'chunk'

type StreamedItem = Candidate & { textFrom: ItemText }

interface PreparedAnswer {
  items: StreamedItem[]
  notices: RetrievalNotice[]
  fetchMemory: boolean
  memories: Map<string, Memory>
  /** With fetchMemoryContent: each memory's content, loaded as its definition goes out. */
  contents?: TextsOnDemand
  /** The whole texts of the chunks whose search row carried only their start. */
  chunkTexts?: TextsOnDemand
  /** This answer's share of the response budget, released when its stream ends. */
  reservation: Reservation
  /** Starts the LLM call; `signal` cancels it. */
  answer?: (signal: AbortSignal) => Promise<string>
}

/**
 * How much of a long chunk's text the answer carries: `whole` (REST and gRPC, loaded as it
 * streams) or `start` (the first SEARCH_TEXT_CHARS characters, as the search read it: MCP,
 * which collects the answer into one result before sending it).
 */
export type ChunkTextLength = 'whole' | 'start'

/**
 * A fused candidate with its chunk's text as the search carried it (the whole text, or the
 * first SEARCH_TEXT_CHARS characters of a longer one) and its offsets.
 */
type Candidate = FusedChunk & {
  text: string
  /** `text` is the chunk's whole text. */
  wholeText: boolean
  /** The whole text's size in UTF-8 bytes. */
  textBytes: number
  startOffset: number
  endOffset: number
  source: ChunkSource | null
  scoreParts?: ScoreParts
}

/** The text and offsets each fused chunk's search returned with it (every fused chunk is in some list). */
function withChunkText(lists: WeightedList[], ranked: FusedChunk[]): Candidate[] {
  const rows = new Map<string, RankedChunk>()
  for (const list of lists) for (const chunk of list.chunks) rows.set(chunk.chunk_id, chunk)
  return ranked.map((item) => {
    const row = rows.get(item.chunkId)!
    // left() counts code points, `length` UTF-16 units (never fewer): a shorter text was not cut,
    // nor one whose bytes are no more than the characters kept.
    const wholeText = row.text_bytes <= SEARCH_TEXT_CHARS || row.text.length < SEARCH_TEXT_CHARS
    return {
      ...item,
      text: row.text,
      wholeText,
      textBytes: row.text_bytes,
      startOffset: row.start_offset,
      endOffset: row.end_offset,
      source: row.source,
    }
  })
}

/** Where a passage came from, for the LLM to cite: "report.pdf, page 12" (documents only). */
function citationOf(
  memory: Memory | undefined,
  item: { memoryId: string; source: ChunkSource | null },
): string | undefined {
  const source = item.source
  if (!source) return undefined
  const where = [
    source.page === undefined
      ? undefined
      : source.pageEnd === undefined
        ? `page ${source.page}`
        : `pages ${source.page}-${source.pageEnd}`,
    source.slide === undefined ? undefined : `slide ${source.slide}`,
    source.sheet === undefined ? undefined : `sheet "${source.sheet}"`,
    source.headingPath && source.headingPath.length > 0 ? `section "${source.headingPath.join(' > ')}"` : undefined,
  ].filter((part) => part !== undefined)
  return [memory?.fileName ?? `memory ${item.memoryId}`, ...where].join(', ')
}

/** The reranker's order and scores replace the fused ones. */
async function reranked(
  context: DomainContext,
  call: CallContext,
  reranker: RerankerRow,
  message: string,
  candidates: Candidate[],
): Promise<Candidate[]> {
  let scores: number[]
  try {
    scores = await rerankDocuments({
      reranker: rerankerProfile(reranker),
      access: openProviderAccess(context.secrets, 'rerankers', reranker),
      query: message,
      documents: candidates.map((item) => item.text),
      timeoutMs: RERANK_TIMEOUT_MS,
      signal: call.signal,
    })
  } catch (error) {
    throw new AppError('UNAVAILABLE', `the reranker did not answer: ${(error as Error).message}`)
  }
  return candidates
    .map((item, index) => ({ ...item, relevanceScore: scores[index]! }))
    .sort((a, b) => b.relevanceScore - a.relevanceScore || a.chunkId.localeCompare(b.chunkId))
}

/** A registration named in postProcessor that the caller may not use is a 400 naming the field, whether or not it exists. */
async function usable<T>(find: () => Promise<T>, field: string, what: string): Promise<T> {
  try {
    return await find()
  } catch (error) {
    if (toAppError(error).code === 'NOT_FOUND') throw invalidArgument(field, `there is no ${what} you may use`)
    throw error
  }
}

const MILLIS_PER_SECOND = 1_000

/**
 * Newer memories first: each item's score becomes (1 − weight) × relevance + weight ×
 * 0.5^(age / halfLife), its age counted from its memory's updatedAt (never below 0, whatever
 * the clocks), and the items are sorted again by it. Items whose memory was not read (deleted
 * or expired since the search) are left out.
 */
function withRecency(
  items: Candidate[],
  memories: Map<string, Memory>,
  recency: NonNullable<RetrieveMemoriesRequest['recency']>,
  now: number,
): Candidate[] {
  const recencyWeight = recency.weight ?? DEFAULT_RECENCY_WEIGHT
  return items
    .filter((item) => memories.has(item.memoryId))
    .map((item) => {
      const ageSeconds = Math.max(0, now - memories.get(item.memoryId)!.updatedAt) / MILLIS_PER_SECOND
      const recencyScore = 0.5 ** (ageSeconds / recency.halfLifeSeconds)
      const relevance = item.relevanceScore
      const scoreParts = { relevance, recency: recencyScore, recencyWeight, ageSeconds }
      return { ...item, relevanceScore: (1 - recencyWeight) * relevance + recencyWeight * recencyScore, scoreParts }
    })
    .sort((a, b) => b.relevanceScore - a.relevanceScore || a.chunkId.localeCompare(b.chunkId))
}

const requestedSizeOf = (request: RetrieveMemoriesRequest) => request.requestedSize ?? DEFAULT_REQUESTED_SIZE
/** GoodMem's default: each memory is defined once in the stream, before its first chunk. */
const fetchMemoryOf = (request: RetrieveMemoriesRequest) => request.fetchMemory ?? true

const busy = () =>
  new AppError(
    'UNAVAILABLE',
    `the server is busy sending other answers; try again in ${RETRY_AFTER_SECONDS} s`,
    [],
    RETRY_AFTER_SECONDS,
  )

/**
 * Which long texts the stream will load, in the order it gives them out: each memory's
 * content before its first item (fetchMemoryContent), and the whole text of each item whose
 * search row carried only its start, unless the memory's content just loaded holds it (the
 * first item of a memory defined with its content).
 */
function planTexts(
  items: Candidate[],
  fetchMemory: boolean,
  contentBytes: Map<string, number> | undefined,
  chunkTextLength: ChunkTextLength,
): { items: StreamedItem[]; contentNeeds: TextNeed[]; chunkNeeds: TextNeed[] } {
  const contentNeeds: TextNeed[] = []
  const chunkNeeds: TextNeed[] = []
  const defined = new Set<string>()
  const planned = items.map((item): StreamedItem => {
    const first = !defined.has(item.memoryId)
    defined.add(item.memoryId)
    const withContent = first && fetchMemory && contentBytes !== undefined
    if (withContent) contentNeeds.push({ id: item.memoryId, bytes: contentBytes.get(item.memoryId) ?? 0 })
    if (item.wholeText || chunkTextLength === 'start') return { ...item, textFrom: 'row' }
    if (withContent) return { ...item, textFrom: 'content' }
    chunkNeeds.push({ id: item.chunkId, bytes: item.textBytes })
    return { ...item, textFrom: 'chunk' }
  })
  return { items: planned, contentNeeds, chunkNeeds }
}

/**
 * What the stream holds at most: the items' texts as the searches carried them, and, for
 * each kind of long text, its largest load while it goes out.
 */
function streamBytes(items: Candidate[], contentNeeds: TextNeed[], chunkNeeds: TextNeed[]): number {
  const rowTexts = items.reduce((sum, item) => sum + item.text.length * BYTES_PER_CHAR, 0)
  const loads =
    TextsOnDemand.largestLoad(contentNeeds, TEXT_BATCH_BYTES) + TextsOnDemand.largestLoad(chunkNeeds, TEXT_BATCH_BYTES)
  return STREAM_OVERHEAD_BYTES + rowTexts + COPIES_WHILE_STREAMING * loads
}

async function prepare(
  context: DomainContext,
  call: CallContext,
  { principal, reads }: { principal: Principal; reads: ReadConnection },
  request: RetrieveMemoriesRequest,
  chunkTextLength: ChunkTextLength,
): Promise<PreparedAnswer> {
  const requestedSize = request.requestedSize ?? DEFAULT_REQUESTED_SIZE
  const post = request.postProcessor ?? {}
  // Refused before any search when not even the smallest answer would fit.
  if (!context.responseBudget.fits(STREAM_OVERHEAD_BYTES)) throw busy()
  const reranker =
    post.rerankerId === undefined
      ? undefined
      : await usable(
          () => findUsableReranker(context, principal, post.rerankerId!),
          'postProcessor.rerankerId',
          `reranker ${post.rerankerId}`,
        )
  const llm =
    post.llmId === undefined
      ? undefined
      : await usable(() => findUsableLlm(context, principal, post.llmId!), 'postProcessor.llmId', `LLM ${post.llmId}`)
  const { limit } = vectorSearchPlan(requestedSize)
  const { lists, notices } = await planAndSearch(context, principal, reads, request, limit)
  const fused = fuseScores(lists)
  const recency = request.recency
  // A reranker sees every candidate the fusion found (up to `limit`), not only the top few;
  // so does recency, which may raise a newer candidate above older ones ranked before it.
  let items = reranker
    ? await reranked(context, call, reranker, request.message, withChunkText(lists, fused.slice(0, limit)))
    : withChunkText(lists, fused.slice(0, recency ? limit : requestedSize))
  // The threshold asks how well an item matches: it compares with the relevance before
  // recency, so a new memory that matches nothing is never let in by its age.
  if (post.relevanceThreshold !== undefined)
    items = items.filter((item) => item.relevanceScore >= post.relevanceThreshold!)
  const memories = new Map<string, Memory>()
  const fetchMemory = fetchMemoryOf(request)
  const withContent = fetchMemory && request.fetchMemoryContent === true
  const contentBytes = withContent ? new Map<string, number>() : undefined
  // The memoryDefinition events, the chronological order and recency need the memory rows. A
  // found chunk's memory existed when the search read the chunk (memories delete their
  // chunks), so without those there is nothing to read.
  // An LLM's passages cite their documents by file name.
  const loadMemories = async () => {
    const memoryIds = [...new Set(items.map((item) => item.memoryId))]
    const memoryRows = await reads.run((sql) =>
      memoriesSql.findMemories(sql, memoryIds, { withContentBytes: withContent }),
    )
    const now = Date.now()
    for (const row of memoryRows) {
      const memory = toMemory(row)
      // A search leaves expired memories out only in spaces known to hold some; this catches
      // one whose space's rows were read before the flag was set.
      if (request.includeExpired !== true && memory.validUntil !== undefined && memory.validUntil <= now) continue
      memories.set(row.id, memory)
      if (row.text_bytes !== undefined) contentBytes?.set(row.id, row.text_bytes)
    }
    // A memory deleted since the search is left out.
    items = items.filter((item) => memories.has(item.memoryId))
  }
  // Recency scores every candidate before the answer keeps its top few: their rows are read first.
  if (recency) {
    await loadMemories()
    items = withRecency(items, memories, recency, Date.now())
  }
  items = items.slice(0, Math.min(requestedSize, post.maxResults ?? requestedSize))
  if (!recency && (fetchMemory || post.chronologicalResort || llm)) await loadMemories()
  // After recency: it chose the items, this orders them by creation time.
  if (post.chronologicalResort) {
    items.sort(
      (a, b) =>
        memories.get(a.memoryId)!.createdAt - memories.get(b.memoryId)!.createdAt ||
        a.memoryId.localeCompare(b.memoryId) ||
        a.startOffset - b.startOffset,
    )
  }
  // An LLM, like a reranker, reads each chunk as the search carried it: the start of a long one.
  const answer = llm
    ? (signal: AbortSignal) =>
        answerFromPassages({
          llm: llmProfile(llm),
          access: openProviderAccess(context.secrets, 'llms', llm),
          message: request.message,
          passages: items.map((item) => ({ text: item.text, citation: citationOf(memories.get(item.memoryId), item) })),
          temperature: post.llmTemperature,
          systemPrompt: post.systemPrompt,
          timeoutMs: LLM_TIMEOUT_MS,
          signal,
        })
    : undefined
  const plan = planTexts(items, fetchMemory, contentBytes, chunkTextLength)
  const reservation = context.responseBudget.tryReserve(streamBytes(items, plan.contentNeeds, plan.chunkNeeds))
  if (!reservation) throw busy()
  const onDemand = (needs: TextNeed[], find: (sql: Queryable, ids: string[]) => ReturnType<TextLoader>) =>
    needs.length === 0
      ? undefined
      : new TextsOnDemand(needs, (ids) => reads.run((sql) => find(sql, ids)), TEXT_BATCH_BYTES)
  return {
    items: plan.items,
    notices,
    fetchMemory,
    memories,
    contents: onDemand(plan.contentNeeds, memoriesSql.findMemoryContents),
    chunkTexts: onDemand(plan.chunkNeeds, chunksSql.findChunkTexts),
    reservation,
    answer,
  }
}

/**
 * The stream. The LLM call is cancelled when the caller goes away (`call.signal`) and when
 * the consumer stops iterating early, so no provider call outlives the stream it feeds.
 */
async function* events(prepared: PreparedAnswer, callSignal: AbortSignal | undefined): AsyncGenerator<RetrievalEvent> {
  const resultSetId = crypto.randomUUID()
  // Without an LLM call there is nothing to cancel: an abort costs a DOMException with its
  // stack (about 6 % of memsvc's CPU per VECTOR retrieval in a profile of the benchmark).
  if (!prepared.answer) {
    yield* streamed(prepared, resultSetId, undefined)
    return
  }
  const cancel = new AbortController()
  const signal = callSignal ? AbortSignal.any([callSignal, cancel.signal]) : cancel.signal
  try {
    // Started before the items go out, so the model works while the client reads them.
    const answer = prepared.answer(signal).then(
      (text) => ({ text }),
      (error: unknown) => ({ error }),
    )
    yield* streamed(prepared, resultSetId, answer)
  } finally {
    cancel.abort()
  }
}

/**
 * The events, with each long text loaded as its event's turn comes. A memory deleted while
 * the answer streams (its content or chunk gone) is left out from then on, as one deleted
 * before the answer started is; `expectedItems` was already sent, and then says more.
 */
async function* streamed(
  prepared: PreparedAnswer,
  resultSetId: string,
  answer: Promise<{ text: string } | { error: unknown }> | undefined,
): AsyncGenerator<RetrievalEvent> {
  const notices = prepared.notices.length > 0 ? { notices: prepared.notices } : {}
  yield {
    resultSetBoundary: {
      resultSetId,
      kind: 'BEGIN',
      stageName: STAGE_NAME,
      expectedItems: prepared.items.length,
      ...notices,
    },
  }
  const memoryIndexes = new Map<string, number>()
  const deleted = new Set<string>()
  for (const item of prepared.items) {
    if (deleted.has(item.memoryId)) continue
    let memoryIndex = memoryIndexes.get(item.memoryId)
    let content: string | undefined
    if (memoryIndex === undefined) {
      if (prepared.fetchMemory) {
        const memory = prepared.memories.get(item.memoryId)!
        if (prepared.contents) {
          content = await prepared.contents.take(item.memoryId)
          if (content === undefined) {
            deleted.add(item.memoryId)
            continue
          }
        }
        yield { memoryDefinition: { memory: content === undefined ? memory : { ...memory, originalContent: content } } }
      }
      memoryIndex = memoryIndexes.size
      memoryIndexes.set(item.memoryId, memoryIndex)
    }
    let chunkText: string | undefined = item.text
    // The chunk is exactly content.slice(startOffset, endOffset) (chunking/chunking-config.ts TextChunk).
    if (item.textFrom === 'content') chunkText = content?.slice(item.startOffset, item.endOffset)
    else if (item.textFrom === 'chunk') chunkText = await prepared.chunkTexts!.take(item.chunkId)
    if (chunkText === undefined) {
      deleted.add(item.memoryId)
      continue
    }
    yield {
      retrievedItem: {
        chunk: {
          chunkId: item.chunkId,
          memoryId: item.memoryId,
          memoryIndex,
          chunkText,
          startOffset: item.startOffset,
          endOffset: item.endOffset,
          relevanceScore: item.relevanceScore,
          ...(item.source ? { source: item.source } : {}),
          ...(item.scoreParts ? { scoreParts: item.scoreParts } : {}),
        },
      },
    }
  }
  yield { resultSetBoundary: { resultSetId, kind: 'END', stageName: STAGE_NAME } }
  if (!answer) return
  const outcome = await answer
  if ('text' in outcome) {
    yield { abstractReply: { text: outcome.text } }
    return
  }
  const message =
    outcome.error instanceof ProviderCallError || outcome.error instanceof Error
      ? outcome.error.message
      : String(outcome.error)
  yield { status: { code: 'UNAVAILABLE', message: `the LLM did not answer: ${message}` } }
}

/**
 * The reservations of answers whose consumer dropped them without ending or returning them
 * (a path that forgets `return()` on an iterator it never started): released when the
 * iterator is collected, so that a bug there costs memory for a while, not the budget for good.
 */
const droppedAnswers = new FinalizationRegistry<Reservation>((reservation) => reservation.release())

/** The events; the answer's reservation is released when they end, fail or are returned, started or not. */
function releasingAtEnd(
  source: AsyncGenerator<RetrievalEvent>,
  reservation: Reservation,
): AsyncIterable<RetrievalEvent> {
  const iterator: AsyncIterableIterator<RetrievalEvent> = {
    async next() {
      try {
        const result = await source.next()
        if (result.done) reservation.release()
        return result
      } catch (error) {
        reservation.release()
        throw error
      }
    },
    async return(value?: unknown) {
      reservation.release()
      return source.return(value)
    },
    [Symbol.asyncIterator]: () => iterator,
  }
  droppedAnswers.register(iterator, reservation)
  return iterator
}

/** Checks and searches, then returns the events to stream (see the comment at the top). */
export async function retrieveMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
  chunkTextLength: ChunkTextLength = 'whole',
): Promise<AsyncIterable<RetrievalEvent>> {
  const { principal, reads } = await context.authenticateRead(call)
  const request = parseInput(retrieveMemoriesSchema, input)
  requireVectorStorage(context)
  const prepared = await prepare(context, call, { principal, reads }, request, chunkTextLength)
  // A caller gone while the answer was prepared will not read it: its share goes back now.
  if (call.signal?.aborted) {
    prepared.reservation.release()
    throw new AppError('UNAVAILABLE', 'the caller went away before the answer started')
  }
  return releasingAtEnd(events(prepared, call.signal), prepared.reservation)
}
