import crypto from 'node:crypto'
import { pipelined } from '../db/database.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { RerankerRow } from '../db/sql/rerankers.js'
import type { RankedChunk } from '../db/sql/retrieval.js'
import * as retrievalSql from '../db/sql/retrieval.js'
import type { EmbedderTargetRow, SpaceEmbedderTarget, SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import { type EmbeddingCall, EmbeddingError, embedderProfile, embedTexts } from '../embedding/embedding-client.js'
import { AppError, invalidArgument, toAppError } from '../errors/app-error.js'
import { answerFromPassages } from '../llm/llm-answer.js'
import { ProviderCallError } from '../probes/provider-http.js'
import { rerankDocuments } from '../rerank/rerank-client.js'
import { parseInput } from '../validation/parse.js'
import {
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
import { providerAccess } from './provider-access.js'
import { findUsableReranker } from './rerankers.js'
import { requireSpaceAccess, requireVectorStorage } from './space-access.js'
import type { SpaceRows } from './space-rows-cache.js'

/**
 * POST /v1/memories:retrieve. Everything that can be refused is checked before the
 * answer starts (validation, spaces, embedders in the weights, the reranker and the LLM,
 * the searches and the rerank), so a transport answers those as a 4xx or 5xx. What follows is an async
 * iterable of events the transports only serialise: the items are yielded as soon as the
 * fused ranking is known; the LLM answer, if asked for, comes after them, and its failure
 * is a `status` event at the end rather than a lost stream.
 */

export interface RetrievedChunk {
  chunkId: string
  memoryId: string
  /** Index of the memory among this answer's memoryDefinition events. */
  memoryIndex: number
  chunkText: string
  startOffset: number
  endOffset: number
  relevanceScore: number
}

export type RetrievalEvent =
  | { resultSetBoundary: { resultSetId: string; kind: 'BEGIN' | 'END'; stageName: string; expectedItems?: number } }
  | { memoryDefinition: { memory: Memory & { originalContent?: string } } }
  | { retrievedItem: { chunk: RetrievedChunk } }
  | { abstractReply: { text: string } }
  | { status: { code: string; message: string } }

/** The usual RRF constant (Cormack et al.): dampens the lead of the very first ranks. */
export const RRF_K = 60
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
/** A query embedding is on the request path: fail within seconds rather than hold the caller. */
const QUERY_EMBEDDING_POLICY = {
  batchSize: 1,
  requestTimeoutMs: 15_000,
  attemptsPerBatch: 2,
  retryBaseMs: 200,
  maxRetryDelayMs: 1_000,
}
const LLM_TIMEOUT_MS = 120_000
const RERANK_TIMEOUT_MS = 30_000
const STAGE_NAME = 'retrieval'
const MIN_ITERATIVE_SCAN_VERSION = [0, 8]

/** One ranked list to fuse, with the weight of its source. */
interface WeightedList {
  spaceId: string
  weight: number
  chunks: RankedChunk[]
}

interface SpacePlan {
  spaceId: string
  filter?: CompiledFilter
  /** READY embedders with a weight above zero, each with its registration. */
  embedders: Array<{ member: SpaceEmbedderTarget; weight: number }>
}

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

/** Each key checked in order, as the caller wrote them, against the rows read for its space. */
function planSpaces(principal: Principal, request: RetrieveMemoriesRequest, rows: SpaceRows): SpacePlan[] {
  const plans: SpacePlan[] = []
  for (const [index, key] of request.spaceKeys.entries()) {
    const filter =
      key.filter === undefined
        ? undefined
        : metadataFilter(key.filter, `spaceKeys.${index}.filter`, 'm.metadata').compiled
    // Another user's private space answers exactly like a missing one.
    requireSpaceAccess(principal, rows.spaces.get(key.spaceId), 'MEMORY', 'LIST', `space ${key.spaceId}`)
    const members = rows.targets.filter((member) => member.space_id === key.spaceId)
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
    plans.push({ spaceId: key.spaceId, filter, embedders })
  }
  return plans
}

/** The query embedding cache's key for one embedder's vector of the message. */
const queryKey = (target: EmbedderTargetRow, message: string) =>
  ({ embedderId: target.id, embedderUpdatedAt: target.updated_at, inputType: 'search_query', message }) as const

/** The spaces' rows decide access and which lists to search; then the searches. */
async function planAndSearch(
  context: DomainContext,
  principal: Principal,
  request: RetrieveMemoriesRequest,
  mode: RetrievalMode,
  limit: number,
): Promise<WeightedList[]> {
  const rows = await spaceRows(
    context,
    request.spaceKeys.map((key) => key.spaceId),
  )
  return searchLists(context, request, planSpaces(principal, request, rows), mode, limit)
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
          access: providerAccess(context.secrets, 'embedders', target),
          policy: QUERY_EMBEDDING_POLICY,
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
  request: RetrieveMemoriesRequest,
  plans: SpacePlan[],
  mode: RetrievalMode,
  limit: number,
): Promise<WeightedList[]> {
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
          const chunks = await retrievalSql.nearestChunks(context.sql, {
            spaceId: plan.spaceId,
            embedderId: member.embedder_id,
            dimensionality: embedding.length,
            embedding,
            limit,
            filter: plan.filter,
            efSearch,
            iterativeScan,
          })
          return { spaceId: plan.spaceId, weight, chunks }
        }),
      ),
    )
  }
  const keywordLists = async (): Promise<WeightedList[]> => {
    if (mode === 'VECTOR') return []
    return Promise.all(
      plans.map(async (plan) => {
        const chunks = await retrievalSql.keywordChunks(context.sql, {
          spaceId: plan.spaceId,
          message: request.message,
          limit,
          filter: plan.filter,
        })
        return { spaceId: plan.spaceId, weight: KEYWORD_WEIGHT, chunks }
      }),
    )
  }
  // One Promise.all over both: the first failure is the answer, and a later one of the other side is handled.
  const [vector, keyword] = await Promise.all([vectorLists(), keywordLists()])
  return [...vector, ...keyword]
}

export interface FusedChunk {
  chunkId: string
  memoryId: string
  /** 0..1: the weighted RRF score over the best score a chunk of its space could reach. */
  relevanceScore: number
}

/**
 * Weighted Reciprocal Rank Fusion: each list adds weight / (RRF_K + rank) for the chunks
 * it holds. A chunk first in every list of its space scores 1; spaces with more lists are
 * not favoured, because each space is scaled by its own best possible sum.
 */
export function fuseRankings(lists: WeightedList[]): FusedChunk[] {
  const bestPossible = new Map<string, number>()
  const fused = new Map<string, { memoryId: string; spaceId: string; score: number }>()
  for (const list of lists) {
    bestPossible.set(list.spaceId, (bestPossible.get(list.spaceId) ?? 0) + list.weight / (RRF_K + 1))
    list.chunks.forEach((chunk, index) => {
      const entry = fused.get(chunk.chunk_id) ?? { memoryId: chunk.memory_id, spaceId: list.spaceId, score: 0 }
      entry.score += list.weight / (RRF_K + index + 1)
      fused.set(chunk.chunk_id, entry)
    })
  }
  return [...fused.entries()]
    .map(([chunkId, entry]) => ({
      chunkId,
      memoryId: entry.memoryId,
      relevanceScore: Math.min(1, entry.score / bestPossible.get(entry.spaceId)!),
    }))
    .sort((a, b) => b.relevanceScore - a.relevanceScore || a.chunkId.localeCompare(b.chunkId))
}

interface PreparedAnswer {
  items: Candidate[]
  memories: Map<string, Memory & { originalContent?: string }>
  /** Starts the LLM call; `signal` cancels it. */
  answer?: (signal: AbortSignal) => Promise<string>
}

/** A fused candidate with its chunk's text and offsets. */
type Candidate = FusedChunk & { text: string; startOffset: number; endOffset: number }

/** The text and offsets each fused chunk's search returned with it (every fused chunk is in some list). */
function withChunkText(lists: WeightedList[], ranked: FusedChunk[]): Candidate[] {
  const rows = new Map<string, RankedChunk>()
  for (const list of lists) for (const chunk of list.chunks) rows.set(chunk.chunk_id, chunk)
  return ranked.map((item) => {
    const row = rows.get(item.chunkId)!
    return { ...item, text: row.text, startOffset: row.start_offset, endOffset: row.end_offset }
  })
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
      reranker,
      access: providerAccess(context.secrets, 'rerankers', reranker),
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

const requestedSizeOf = (request: RetrieveMemoriesRequest) => request.requestedSize ?? DEFAULT_REQUESTED_SIZE
/** GoodMem's default: each memory is defined once in the stream, before its first chunk. */
const fetchMemoryOf = (request: RetrieveMemoriesRequest) => request.fetchMemory ?? true

async function prepare(
  context: DomainContext,
  call: CallContext,
  principal: Principal,
  request: RetrieveMemoriesRequest,
): Promise<PreparedAnswer> {
  const requestedSize = request.requestedSize ?? DEFAULT_REQUESTED_SIZE
  const post = request.postProcessor ?? {}
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
  const lists = await planAndSearch(context, principal, request, request.mode ?? 'HYBRID', limit)
  const fused = fuseRankings(lists)
  // A reranker sees every candidate the fusion found (up to `limit`), not only the top few.
  let items = reranker
    ? await reranked(context, call, reranker, request.message, withChunkText(lists, fused.slice(0, limit)))
    : withChunkText(lists, fused.slice(0, requestedSize))
  if (post.relevanceThreshold !== undefined)
    items = items.filter((item) => item.relevanceScore >= post.relevanceThreshold!)
  items = items.slice(0, Math.min(requestedSize, post.maxResults ?? requestedSize))
  const memories = new Map<string, Memory & { originalContent?: string }>()
  // Only the memoryDefinition events and the chronological order need the memory rows. A
  // found chunk's memory existed when the search read the chunk (memories delete their
  // chunks), so without those there is nothing to read.
  if (fetchMemoryOf(request) || post.chronologicalResort) {
    const memoryRows = await memoriesSql.findMemories(context.sql, [...new Set(items.map((item) => item.memoryId))], {
      withContent: request.fetchMemoryContent === true,
    })
    for (const row of memoryRows)
      memories.set(row.id, { ...toMemory(row), ...(row.content === undefined ? {} : { originalContent: row.content }) })
    // A memory deleted since the search is left out.
    items = items.filter((item) => memories.has(item.memoryId))
  }
  if (post.chronologicalResort) {
    items.sort(
      (a, b) =>
        memories.get(a.memoryId)!.createdAt - memories.get(b.memoryId)!.createdAt ||
        a.memoryId.localeCompare(b.memoryId) ||
        a.startOffset - b.startOffset,
    )
  }
  const answer = llm
    ? (signal: AbortSignal) =>
        answerFromPassages({
          llm,
          access: providerAccess(context.secrets, 'llms', llm),
          message: request.message,
          passages: items.map((item) => item.text),
          temperature: post.llmTemperature,
          systemPrompt: post.systemPrompt,
          timeoutMs: LLM_TIMEOUT_MS,
          signal,
        })
    : undefined
  return { items, memories, answer }
}

/**
 * The stream. The LLM call is cancelled when the caller goes away (`call.signal`) and when
 * the consumer stops iterating early, so no provider call outlives the stream it feeds.
 */
async function* events(
  prepared: PreparedAnswer,
  fetchMemory: boolean,
  callSignal: AbortSignal | undefined,
): AsyncGenerator<RetrievalEvent> {
  const resultSetId = crypto.randomUUID()
  // Without an LLM call there is nothing to cancel: an abort costs a DOMException with its
  // stack (about 6 % of memsvc's CPU per VECTOR retrieval in a profile of the benchmark).
  if (!prepared.answer) {
    yield* streamed(prepared, fetchMemory, resultSetId, undefined)
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
    yield* streamed(prepared, fetchMemory, resultSetId, answer)
  } finally {
    cancel.abort()
  }
}

async function* streamed(
  prepared: PreparedAnswer,
  fetchMemory: boolean,
  resultSetId: string,
  answer: Promise<{ text: string } | { error: unknown }> | undefined,
): AsyncGenerator<RetrievalEvent> {
  yield {
    resultSetBoundary: { resultSetId, kind: 'BEGIN', stageName: STAGE_NAME, expectedItems: prepared.items.length },
  }
  const memoryIndexes = new Map<string, number>()
  for (const item of prepared.items) {
    let memoryIndex = memoryIndexes.get(item.memoryId)
    if (memoryIndex === undefined) {
      memoryIndex = memoryIndexes.size
      memoryIndexes.set(item.memoryId, memoryIndex)
      if (fetchMemory) yield { memoryDefinition: { memory: prepared.memories.get(item.memoryId)! } }
    }
    yield {
      retrievedItem: {
        chunk: {
          chunkId: item.chunkId,
          memoryId: item.memoryId,
          memoryIndex,
          chunkText: item.text,
          startOffset: item.startOffset,
          endOffset: item.endOffset,
          relevanceScore: item.relevanceScore,
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

/** Checks and searches, then returns the events to stream (see the comment at the top). */
export async function retrieveMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<AsyncIterable<RetrievalEvent>> {
  const principal = await context.authenticate(call)
  const request = parseInput(retrieveMemoriesSchema, input)
  requireVectorStorage(context)
  const prepared = await prepare(context, call, principal, request)
  return events(prepared, fetchMemoryOf(request), call.signal)
}
