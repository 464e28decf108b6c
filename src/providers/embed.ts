import { LOCAL_PROVIDER_TYPE } from '../validation/registry-values.js'
import { type ProviderAccess, UnsupportedCredentialError } from './credentials.js'
import { ProviderCallError, type ProviderRequest, postJson, QUERY_PROVIDER_TIMEOUT_MS } from './http.js'
import { InferenceBusyError, InferenceFailure } from './local/inference-pool.js'
import type { LocalModels } from './local/local-models.js'
import { LocalModelError } from './local/model-directory.js'
import { allEmbeddings, embeddingRequest, type ProviderTarget } from './protocol.js'
import type { ProviderCalls } from './provider-calls.js'

/** What the client needs to know of a registered embedder. */
export interface EmbedderProfile extends ProviderTarget {
  id: string
  /** As registered; errors name the embedder by it. */
  displayName?: string
  dimensionality: number
  /** In tokens, as registered; absent when the provider did not say. */
  maxSequenceLength?: number
}

export interface EmbeddingPolicy {
  /** Inputs per request. */
  batchSize: number
  /** The longest one request may wait for its answer. */
  requestTimeoutMs: number
  /**
   * The longest one batch may take, its tries and the waits between them included: a try's
   * timeout is cut to what is left, and no retry starts past it.
   */
  batchDeadlineMs: number
  /** Tries of one batch before the failure goes back to the job queue, which retries the job later. */
  attemptsPerBatch: number
  /** First wait after a transient failure; doubles each time, up to maxRetryDelayMs. */
  retryBaseMs: number
  maxRetryDelayMs: number
  /** Ingestion only: after a request got no answer in time, how long the embedder is left alone (ProviderCalls). */
  stallCooldownMs?: number
}

/**
 * Ingestion's: a request gets 30 s, a batch a minute with its retries. An embedder that did
 * not answer in 30 s is left alone for 30 s, then tried by one call: with INGEST_MAX_ATTEMPTS
 * (src/jobs/handlers/memory-ingest.ts) a memory whose embedder stalls ends FAILED within
 * about five minutes of its first attempt.
 */
export const DEFAULT_EMBEDDING_POLICY: EmbeddingPolicy = {
  batchSize: 32,
  requestTimeoutMs: 30_000,
  batchDeadlineMs: 60_000,
  attemptsPerBatch: 5,
  retryBaseMs: 500,
  maxRetryDelayMs: 30_000,
  stallCooldownMs: 30_000,
}

/** A query's embedding is on the request path: one answer within QUERY_PROVIDER_TIMEOUT_MS, retries included. */
export const QUERY_EMBEDDING_POLICY: EmbeddingPolicy = {
  batchSize: 1,
  requestTimeoutMs: QUERY_PROVIDER_TIMEOUT_MS,
  batchDeadlineMs: QUERY_PROVIDER_TIMEOUT_MS,
  attemptsPerBatch: 2,
  retryBaseMs: 200,
  maxRetryDelayMs: 1_000,
}

/**
 * No tokenizer is embedded, so a chunk sent to a provider is cut to maxSequenceLength
 * times this many characters. English averages about four characters a token; three
 * keeps most texts under the limit without cutting what would have fitted by much.
 */
export const CHARS_PER_TOKEN_ESTIMATE = 3
const MAX_EMBEDDING_RESPONSE_BYTES = 64 * 1024 * 1024
/** A LOCAL embedder whose inference queue is full: the job queue tries the batch again after this. */
const LOCAL_BUSY_RETRY_MS = 2_000
const RETRY_JITTER = 0.2

export class EmbeddingError extends Error {
  constructor(
    message: string,
    /** Trying again cannot help: wrong dimensionality, a 4xx, an unsupported credential. */
    readonly permanent: boolean,
    /**
     * What was refused: 'embedder' when it is the embedder's own doing (its dimensionality, a
     * request it cannot make), so sending the inputs one by one would meet it again; otherwise
     * 'request', which may be about one input (a 4xx).
     */
    readonly refused: 'request' | 'embedder' = 'request',
    /** For a transient failure: trying again sooner is pointless (a Retry-After, a stalled embedder's cool-down). */
    readonly retryAfterMs?: number,
  ) {
    super(message)
    this.name = 'EmbeddingError'
  }
}

export type EmbeddingOutcome = 'ok' | 'retried' | 'failed'

/** Told about every request, for metrics. */
export type EmbeddingObserver = (outcome: EmbeddingOutcome, seconds: number) => void

export interface EmbeddingCall {
  embedder: EmbedderProfile
  access: ProviderAccess
  policy: EmbeddingPolicy
  observe?: EmbeddingObserver
  /** Ingestion's record of each provider's calls: a stalled embedder is not called again until its cool-down ends. */
  providerCalls?: ProviderCalls
  /**
   * The largest magnitude the vector store holds (db/vector-storage.ts MAX_INDEXED_VECTOR_VALUE):
   * the caller knows where the vectors go, this layer does not.
   */
  maxVectorValue: number
  /** Waits between retries; tests pass a recorder. */
  sleep?: (ms: number) => Promise<void>
  /** The process's local models, for LOCAL embedders (which call no provider); absent where none run. */
  localModels?: LocalModels
}

/** A text the embedder saw only the start of: it had more tokens than the model takes. */
export interface InputTruncation {
  /** The whole text's tokens, special tokens included. */
  tokens: number
  /** The tokens its vector was computed from. */
  keptTokens: number
}

export interface EmbeddedTexts {
  vectors: number[][]
  /**
   * For each text, its truncation when the embedder cut it; only LOCAL embedders know (their
   * tokenizer runs here). An HTTP provider's own truncation is not reported by its API.
   */
  truncations: Array<InputTruncation | undefined>
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function retryDelay(
  policy: EmbeddingPolicy,
  failedAttempts: number,
  retryAfterMs: number | undefined,
  random = Math.random,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs
  const exponential = Math.min(policy.retryBaseMs * 2 ** (failedAttempts - 1), policy.maxRetryDelayMs)
  return Math.round(exponential * (1 - RETRY_JITTER + random() * 2 * RETRY_JITTER))
}

export function truncateForEmbedder(text: string, maxSequenceLength: number | undefined): string {
  if (maxSequenceLength === undefined) return text
  const budget = maxSequenceLength * CHARS_PER_TOKEN_ESTIMATE
  return text.length <= budget ? text : text.slice(0, budget)
}

/**
 * Embeds `texts` in batches with the provider's own API and returns one vector per text,
 * in order. Transient failures are retried here with capped exponential backoff (a 429's
 * Retry-After is honoured when it is within the cap); past attemptsPerBatch they fail
 * transient, for the job queue to retry later. Anything else fails permanent.
 */
export async function embedTexts(
  call: EmbeddingCall,
  texts: string[],
  inputType: 'search_document' | 'search_query' = 'search_document',
): Promise<number[][]> {
  return (await embedTextsReportingTruncation(call, texts, inputType)).vectors
}

/** embedTexts, with which texts the embedder cut to its token limit (ingestion records them on the chunks). */
export async function embedTextsReportingTruncation(
  call: EmbeddingCall,
  texts: string[],
  inputType: 'search_document' | 'search_query' = 'search_document',
): Promise<EmbeddedTexts> {
  const embedded: EmbeddedTexts = { vectors: [], truncations: [] }
  const local = call.embedder.providerType === LOCAL_PROVIDER_TYPE
  for (let start = 0; start < texts.length; start += call.policy.batchSize) {
    const batch = texts.slice(start, start + call.policy.batchSize)
    if (local) {
      const { vectors, truncations } = await embedLocally(call, batch, inputType)
      embedded.vectors.push(...checkedVectors(call.embedder, vectors, batch.length, call.maxVectorValue))
      embedded.truncations.push(...truncations)
      continue
    }
    const cut = batch.map((text) => truncateForEmbedder(text, call.embedder.maxSequenceLength))
    embedded.vectors.push(...(await embedBatch(call, cut, inputType)))
    embedded.truncations.push(...batch.map(() => undefined))
  }
  return embedded
}

/**
 * A LOCAL embedder's batch goes to this process's inference threads: no HTTP and no retries
 * here. A model that cannot be used fails for good; a full queue or a lost thread is
 * transient, for the job queue (or the retrieval's caller) to try again.
 */
async function embedLocally(
  call: EmbeddingCall,
  batch: string[],
  inputType: 'search_document' | 'search_query',
): Promise<EmbeddedTexts> {
  const name = describeEmbedder(call.embedder)
  if (!call.localModels)
    throw new EmbeddingError(`${name} is a LOCAL embedder, and this process runs no local models`, true, 'embedder')
  const started = performance.now()
  const seconds = () => (performance.now() - started) / 1000
  try {
    const priority = inputType === 'search_query' ? 'query' : 'bulk'
    const embedded = await call.localModels.embed(
      call.embedder.modelIdentifier,
      batch,
      priority,
      call.embedder.maxSequenceLength,
    )
    call.observe?.('ok', seconds())
    return {
      vectors: embedded.vectors,
      truncations: embedded.tokenCounts.map((tokens, index) => {
        const keptTokens = embedded.keptTokenCounts[index]!
        return keptTokens < tokens ? { tokens, keptTokens } : undefined
      }),
    }
  } catch (error) {
    call.observe?.('failed', seconds())
    if (error instanceof LocalModelError) throw new EmbeddingError(`${name}: ${error.message}`, true, 'embedder')
    if (error instanceof InferenceFailure)
      throw new EmbeddingError(
        `${name}: ${error.message}`,
        error.modelProblem,
        error.modelProblem ? 'embedder' : 'request',
      )
    if (error instanceof InferenceBusyError)
      throw new EmbeddingError(`${name}: ${error.message}`, false, 'request', LOCAL_BUSY_RETRY_MS)
    throw error
  }
}

/** How errors name an embedder: its display name and id, so an operator knows which registration to look at. */
export function describeEmbedder(embedder: Pick<EmbedderProfile, 'id' | 'displayName'>): string {
  return embedder.displayName ? `embedder "${embedder.displayName}" (${embedder.id})` : `embedder ${embedder.id}`
}

async function embedBatch(
  call: EmbeddingCall,
  batch: string[],
  inputType: 'search_document' | 'search_query',
): Promise<number[][]> {
  const { embedder, access, policy } = call
  const sleep = call.sleep ?? defaultSleep
  const name = describeEmbedder(embedder)
  let request: ProviderRequest
  try {
    request = embeddingRequest(embedder, access.credential, batch, inputType)
  } catch (error) {
    if (error instanceof UnsupportedCredentialError)
      throw new EmbeddingError(error.message.replace('probing', 'embedding'), true, 'embedder')
    throw error
  }
  const deadline = performance.now() + policy.batchDeadlineMs
  for (let attempt = 1; ; attempt++) {
    const admitted = call.providerCalls?.admit(embedder.id)
    if (admitted?.admitted === false)
      throw new EmbeddingError(`${name} ${admitted.reason}`, false, 'request', admitted.retryAfterMs)
    const started = performance.now()
    const seconds = () => (performance.now() - started) / 1000
    let body: unknown
    try {
      body = await postJson(request, {
        timeoutMs: Math.max(1, Math.min(policy.requestTimeoutMs, Math.round(deadline - started))),
        maxResponseBytes: MAX_EMBEDDING_RESPONSE_BYTES,
        redact: access.redact,
      })
      admitted?.answered()
    } catch (error) {
      if (!(error instanceof ProviderCallError)) {
        admitted?.answered()
        throw error
      }
      const message = access.redact(error.message)
      if (error.timedOut) admitted?.noAnswer(message)
      else admitted?.answered()
      // A provider that did not answer in time will hardly answer the same request at once:
      // the job queue tries again later (after the stall's cool-down).
      const delay = error.transient && !error.timedOut ? retryDelay(policy, attempt, error.retryAfterMs) : undefined
      if (
        delay === undefined ||
        attempt >= policy.attemptsPerBatch ||
        delay > policy.maxRetryDelayMs ||
        performance.now() + delay >= deadline
      ) {
        call.observe?.('failed', seconds())
        const tries = attempt === 1 ? '' : ` (after ${attempt} attempts)`
        const retryAfterMs = error.timedOut ? policy.stallCooldownMs : error.retryAfterMs
        throw new EmbeddingError(`${name}: ${message}${tries}`, !error.transient, 'request', retryAfterMs)
      }
      call.observe?.('retried', seconds())
      await sleep(delay)
      continue
    }
    call.observe?.('ok', seconds())
    return checkedVectors(embedder, allEmbeddings(body), batch.length, call.maxVectorValue)
  }
}

/** The vectors, checked: one per input, each of the registered dimensionality, each value storable. */
export function checkedVectors(
  embedder: EmbedderProfile,
  vectors: number[][] | undefined,
  expected: number,
  maxVectorValue: number,
): number[][] {
  if (!vectors)
    throw new EmbeddingError(`${describeEmbedder(embedder)}: the response carries no embedding vectors`, true)
  if (vectors.length !== expected)
    throw new EmbeddingError(
      `${describeEmbedder(embedder)}: asked for ${expected} vectors, the provider returned ${vectors.length}`,
      true,
    )
  const wrong = vectors.find((vector) => vector.length !== embedder.dimensionality)
  if (wrong) {
    throw new EmbeddingError(
      `${describeEmbedder(embedder)}: the provider returned ${wrong.length} dimensions; ` +
        `the embedder is registered with ${embedder.dimensionality}`,
      true,
      'embedder',
    )
  }
  for (const vector of vectors) {
    const position = vector.findIndex((value) => !(Math.abs(value) <= maxVectorValue))
    if (position < 0) continue
    throw new EmbeddingError(
      `${describeEmbedder(embedder)}: the provider returned ${vector[position]} at dimension ${position}; vectors are ` +
        `indexed in half precision, which holds values up to ±${maxVectorValue} (embedding models ` +
        'normally return unit vectors: check the model and its normalisation setting)',
      true,
      'embedder',
    )
  }
  return vectors
}
