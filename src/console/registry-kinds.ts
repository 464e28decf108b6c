// What differs between the embedder, LLM and reranker registries, as the console shows
// them. The lists, default paths and ranges are the server's own (src/validation/registry-values.ts, limits.ts).

import { MAX_PENALTY, MAX_TEMPERATURE, MAX_TOP_P } from '../validation/limits.js'
import {
  DEFAULT_LLM_API_PATH,
  defaultEmbedderApiPath,
  defaultRerankerApiPath,
  EMBEDDER_PROVIDER_TYPES,
  INT32_MAX,
  LLM_PROVIDER_TYPES,
  RERANKER_PROVIDER_TYPES,
} from '../validation/registry-values.js'

export { DISTRIBUTION_TYPES, INT32_MAX, LOCAL_PROVIDER_TYPE, MODALITIES } from '../validation/registry-values.js'

export interface RegistryKind {
  kind: 'embedder' | 'llm' | 'reranker'
  /** Route and page names. */
  route: string
  path: string
  listField: string
  idField: string
  singular: string
  /** With its article, as buttons say it: "an embedder", "a reranker". */
  article: string
  plural: string
  title: string
  providers: readonly string[]
  defaultApiPath(provider: string): string
}

export const EMBEDDERS: RegistryKind = {
  kind: 'embedder',
  route: 'embedders',
  path: '/v1/embedders',
  listField: 'embedders',
  idField: 'embedderId',
  singular: 'embedder',
  article: 'an embedder',
  plural: 'embedders',
  title: 'Embedders',
  providers: EMBEDDER_PROVIDER_TYPES,
  defaultApiPath: defaultEmbedderApiPath,
}

export const LLMS: RegistryKind = {
  kind: 'llm',
  route: 'llms',
  path: '/v1/llms',
  listField: 'llms',
  idField: 'llmId',
  singular: 'LLM',
  article: 'an LLM',
  plural: 'LLMs',
  title: 'LLMs',
  providers: LLM_PROVIDER_TYPES,
  defaultApiPath: () => DEFAULT_LLM_API_PATH,
}

export const RERANKERS: RegistryKind = {
  kind: 'reranker',
  route: 'rerankers',
  path: '/v1/rerankers',
  listField: 'rerankers',
  idField: 'rerankerId',
  singular: 'reranker',
  article: 'a reranker',
  plural: 'rerankers',
  title: 'Rerankers',
  providers: RERANKER_PROVIDER_TYPES,
  defaultApiPath: defaultRerankerApiPath,
}

/** Usual local addresses, offered as placeholders only (never sent unless typed). */
const LOCAL_ENDPOINTS: Record<string, string> = {
  VLLM: 'http://localhost:8000',
  TEI: 'http://localhost:8080',
  LLAMA_CPP: 'http://localhost:8080',
  OLLAMA: 'http://localhost:11434',
}

export const endpointPlaceholder = (provider: string): string => LOCAL_ENDPOINTS[provider] ?? 'https://api.example.com'

export const CAPABILITIES = [
  ['supportsChat', 'Chat', true],
  ['supportsCompletion', 'Completion', false],
  ['supportsFunctionCalling', 'Function calling', false],
  ['supportsSamplingParameters', 'Sampling parameters', true],
  ['supportsStreaming', 'Streaming', false],
  ['supportsSystemMessages', 'System messages', true],
] as const

export interface NumberSpec {
  name: string
  label: string
  min: number
  max: number
  step: string
  hint: string
}

const WHOLE = 'A positive whole number.'
/** A decimal setting from min to max, with its range as the hint ("0.0 to 2.0"). */
const decimal = (name: string, label: string, min: number, max: number): NumberSpec => ({
  name,
  label,
  min,
  max,
  step: '0.01',
  hint: `${min.toFixed(1)} to ${max.toFixed(1)}`,
})

/** Sampling settings and their ranges, as the server's validation (samplingParamsSchema) accepts them. */
export const SAMPLING: NumberSpec[] = [
  { name: 'maxTokens', label: 'Max tokens', min: 1, max: INT32_MAX, step: '1', hint: WHOLE },
  decimal('temperature', 'Temperature', 0, MAX_TEMPERATURE),
  decimal('topP', 'Top-p', 0, MAX_TOP_P),
  { name: 'topK', label: 'Top-k', min: 1, max: INT32_MAX, step: '1', hint: WHOLE },
  decimal('frequencyPenalty', 'Frequency penalty', -MAX_PENALTY, MAX_PENALTY),
  decimal('presencePenalty', 'Presence penalty', -MAX_PENALTY, MAX_PENALTY),
]
