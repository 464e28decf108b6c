import type { ProviderAccess } from './credentials.js'
import { ProviderCallError, postJson } from './http.js'
import { type ProviderTarget, rerankRequest, rerankScores } from './protocol.js'

const MAX_RERANK_RESPONSE_BYTES = 4 * 1024 * 1024

/** What the client needs to know of a registered reranker. */
export interface RerankerProfile extends ProviderTarget {
  id: string
  displayName: string
}

export interface RerankCall {
  reranker: RerankerProfile
  access: ProviderAccess
  query: string
  documents: string[]
  timeoutMs: number
  signal?: AbortSignal
}

/** Cohere-style APIs and TEI (by default) answer in 0..1; raw logits are mapped there by the logistic function. */
const toUnitInterval = (score: number) => (score >= 0 && score <= 1 ? score : 1 / (1 + Math.exp(-score)))

/** How errors name a reranker: its display name and id, so the caller knows which registration failed. */
export const describeReranker = (reranker: Pick<RerankerProfile, 'id' | 'displayName'>): string =>
  `reranker "${reranker.displayName}" (${reranker.id})`

/**
 * Scores each document against the query with the provider's own rerank API; one score
 * in 0..1 per document, in input order (a document the provider left out scores 0).
 * Throws ProviderCallError when the provider fails, Error when the answer is unreadable;
 * either message starts with the reranker's name.
 */
export async function rerankDocuments(call: RerankCall): Promise<number[]> {
  if (call.documents.length === 0) return []
  const name = describeReranker(call.reranker)
  let body: unknown
  try {
    body = await postJson(rerankRequest(call.reranker, call.access.credential, call.query, call.documents), {
      timeoutMs: call.timeoutMs,
      maxResponseBytes: MAX_RERANK_RESPONSE_BYTES,
      redact: call.access.redact,
      signal: call.signal,
    })
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error
    throw new ProviderCallError(
      `${name}: ${error.message}`,
      error.transient,
      error.status,
      error.retryAfterMs,
      error.timedOut,
    )
  }
  const scores = rerankScores(body, call.documents.length)
  if (!scores) throw new Error(`${name} answered with something that is not a list of scores by index`)
  return scores.map((score) => (Number.isFinite(score) ? toUnitInterval(score) : 0))
}
