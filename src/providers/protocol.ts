import { authHeaders, type ProviderCredential } from './credentials.js'
import type { ProviderRequest } from './http.js'

/**
 * What memsvc sends to each kind of provider (embedding, rerank and chat calls, and the
 * connectivity probes made of them), and how it reads the answers. Pure functions: no I/O,
 * so every provider's shape is unit-tested.
 */

export const PROBE_INPUT = 'memsvc connectivity probe'

/** endpointUrl and apiPath are joined as text: new URL(path, base) would drop a base path such as /v1. */
export function joinUrl(endpointUrl: string, apiPath: string): string {
  return `${endpointUrl.replace(/\/+$/, '')}/${apiPath.replace(/^\/+/, '')}`
}

/** A registered model as the calls to it need it: which API it speaks, where, and the model to ask for. */
export interface ProviderTarget {
  providerType: string
  endpointUrl: string
  apiPath: string
  modelIdentifier: string
}

/** The embedding call for `inputs`, in the provider's own request shape. */
export function embeddingRequest(
  embedder: ProviderTarget,
  credential: ProviderCredential,
  inputs: string[],
  inputType: 'search_document' | 'search_query',
): ProviderRequest {
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...authHeaders(credential) }
  const url = joinUrl(embedder.endpointUrl, embedder.apiPath)
  switch (embedder.providerType) {
    case 'TEI':
      return { url, headers, body: { inputs } }
    case 'VENDORD':
      return {
        url,
        headers,
        body: { model: embedder.modelIdentifier, texts: inputs, input_type: inputType, embedding_types: ['float'] },
      }
    default:
      // VENDORA, VLLM, LLAMA_CPP and the other OpenAI-compatible embedding APIs.
      return { url, headers, body: { model: embedder.modelIdentifier, input: inputs } }
  }
}

export function embeddingProbeRequest(embedder: ProviderTarget, credential: ProviderCredential): ProviderRequest {
  const request = embeddingRequest(embedder, credential, [PROBE_INPUT], 'search_query')
  // TEI takes one text as a plain string; the probe has always sent it that way.
  return embedder.providerType === 'TEI' ? { ...request, body: { inputs: PROBE_INPUT } } : request
}

/** Every chat API memsvc calls is OpenAI-style, whatever its provider type. */
export type ChatTarget = Omit<ProviderTarget, 'providerType'>

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** An OpenAI-style chat completions call; `options` are the sampling fields in the provider's names. */
export function chatRequest(
  llm: ChatTarget,
  credential: ProviderCredential,
  messages: ChatMessage[],
  options: Record<string, unknown> = {},
): ProviderRequest {
  return {
    url: joinUrl(llm.endpointUrl, llm.apiPath),
    headers: { 'content-type': 'application/json', accept: 'application/json', ...authHeaders(credential) },
    body: { model: llm.modelIdentifier, messages, ...options },
  }
}

export function chatProbeRequest(llm: ChatTarget, credential: ProviderCredential): ProviderRequest {
  // One token: enough to prove the model answers, as cheap as a request can be.
  return chatRequest(llm, credential, [{ role: 'user', content: 'ping' }], { max_tokens: 1 })
}

/** The rerank call in the provider's own request shape: TEI {query, texts}, the Cohere-style others {model, query, documents, top_n}. */
export function rerankRequest(
  reranker: ProviderTarget,
  credential: ProviderCredential,
  query: string,
  documents: string[],
): ProviderRequest {
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...authHeaders(credential) }
  const url = joinUrl(reranker.endpointUrl, reranker.apiPath)
  if (reranker.providerType === 'TEI') return { url, headers, body: { query, texts: documents } }
  return { url, headers, body: { model: reranker.modelIdentifier, query, documents, top_n: documents.length } }
}

export function rerankProbeRequest(reranker: ProviderTarget, credential: ProviderCredential): ProviderRequest {
  return rerankRequest(reranker, credential, PROBE_INPUT, [PROBE_INPUT])
}

/** A provider's answer, read field by field: each reader checks every value it takes. */
// biome-ignore lint/suspicious/noExplicitAny: the shape is the provider's own, known only once checked
type AnswerJson = Record<string, any>

/**
 * The score of each document by its input index, from TEI's [{index, score}] or the
 * Cohere-style {results: [{index, relevance_score}]}; undefined when the answer is neither.
 */
export function rerankScores(body: unknown, documentCount: number): number[] | undefined {
  const record = body as AnswerJson | null
  const entries: unknown = Array.isArray(body) ? body : record?.results
  if (!Array.isArray(entries)) return undefined
  const scores = new Array<number>(documentCount).fill(Number.NEGATIVE_INFINITY)
  for (const entry of entries) {
    const index = entry?.index
    const score = entry?.relevance_score ?? entry?.score
    if (
      !Number.isInteger(index) ||
      index < 0 ||
      index >= documentCount ||
      typeof score !== 'number' ||
      !Number.isFinite(score)
    )
      return undefined
    scores[index] = score
  }
  return scores
}

const isNumberArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'number')

const isVectorList = (value: unknown): value is number[][] =>
  Array.isArray(value) && value.length > 0 && value.every(isNumberArray)

/**
 * Every vector of an embedding answer, in input order, in any of the response shapes the
 * supported providers use: OpenAI `data[].embedding` (ordered by `index`), VENDORD
 * `embeddings.float`, TEI's bare list of lists, `embeddings[]` as lists or `{values}`,
 * or a single vector. Undefined when the answer holds none.
 */
export function allEmbeddings(body: unknown): number[][] | undefined {
  const record = body as AnswerJson | null
  if (isVectorList(body)) return body
  if (isNumberArray(body)) return [body]
  if (!record || typeof record !== 'object') return undefined
  if (Array.isArray(record.data)) {
    const ordered = [...record.data].sort((a, b) => (a?.index ?? 0) - (b?.index ?? 0)).map((item) => item?.embedding)
    if (isVectorList(ordered)) return ordered
  }
  const candidates: unknown[] = [
    record.embeddings?.float,
    record.embeddings,
    Array.isArray(record.embeddings)
      ? record.embeddings.map((item: AnswerJson | undefined) => item?.values)
      : undefined,
  ]
  const found = candidates.find(isVectorList)
  if (found) return found
  return isNumberArray(record.embedding) ? [record.embedding] : undefined
}

/** The first vector in any of the response shapes the supported providers use, or undefined. */
export function firstEmbedding(body: unknown): number[] | undefined {
  return allEmbeddings(body)?.[0]
}

/** The text of a chat answer in the OpenAI shape (choices[0].message) or Ollama's native one (message), or undefined. */
export function chatAnswerText(body: unknown): string | undefined {
  const record = body as AnswerJson | null
  const content = Array.isArray(record?.choices) ? record.choices[0]?.message?.content : record?.message?.content
  return typeof content === 'string' ? content : undefined
}

/** A chat answer in the OpenAI shape (choices) or Ollama's native one (message). */
export function looksLikeChatCompletion(body: unknown): boolean {
  const record = body as AnswerJson | null
  return !!record && typeof record === 'object' && (Array.isArray(record.choices) || typeof record.message === 'object')
}
