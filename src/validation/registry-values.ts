/**
 * The closed lists of the registry (provider types, modalities, …) and the API paths the
 * server fills in when a registration gives none. No imports: the server's validation and
 * domain and the browser console all read them from here, and the console bundles this
 * file as it is.
 */

/** The provider types the service specification lists, in its order. */
const HTTP_EMBEDDING_PROVIDER_TYPES = ['VENDORA', 'VLLM', 'TEI', 'LLAMA_CPP', 'VENDORE', 'VENDORD', 'VENDORF'] as const
/**
 * An embedding model run inside memsvc (src/providers/local), on CPU, with no HTTP: its
 * modelIdentifier names a model directory under the models directories.
 */
export const LOCAL_PROVIDER_TYPE = 'LOCAL'
export const EMBEDDER_PROVIDER_TYPES = [...HTTP_EMBEDDING_PROVIDER_TYPES, LOCAL_PROVIDER_TYPE] as const
export const LLM_PROVIDER_TYPES = [
  'VENDORA',
  'VENDORB_PROXY',
  'VENDORC_ROUTER',
  'VLLM',
  'OLLAMA',
  'LLAMA_CPP',
  'CUSTOM_VENDORA_COMPATIBLE',
] as const
/** Rerank APIs come from the same providers as embedding APIs (no local reranker runs in memsvc). */
export const RERANKER_PROVIDER_TYPES = HTTP_EMBEDDING_PROVIDER_TYPES
export const MODALITIES = ['TEXT', 'IMAGE', 'AUDIO', 'VIDEO'] as const
export const DISTRIBUTION_TYPES = ['DENSE', 'SPARSE'] as const
export const CREDENTIAL_KINDS = ['API_KEY', 'CLOUD_ADC', 'NONE'] as const

export type EmbedderProviderType = (typeof EMBEDDER_PROVIDER_TYPES)[number]
export type RerankerProviderType = (typeof RERANKER_PROVIDER_TYPES)[number]
export type LlmProviderType = (typeof LLM_PROVIDER_TYPES)[number]
export type Modality = (typeof MODALITIES)[number]
export type DistributionType = (typeof DISTRIBUTION_TYPES)[number]
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number]

/** The largest protobuf int32: the bound of every whole-number setting (dimensionality, token counts). */
export const INT32_MAX = 2_147_483_647

/**
 * A LOCAL embedder calls no endpoint: its registration stores and answers these in the
 * endpointUrl and apiPath fields every registration has, and a request may give them only as they are.
 */
export const LOCAL_ENDPOINT_URL = 'local://in-process'
export const LOCAL_API_PATH = '/'

/**
 * Where an embedder's provider serves embeddings when the registration names no path:
 * VENDORD /v2/embed, TEI /embed, LOCAL none, all others /embeddings.
 */
export function defaultEmbedderApiPath(providerType: string): string {
  if (providerType === LOCAL_PROVIDER_TYPE) return LOCAL_API_PATH
  if (providerType === 'VENDORD') return '/v2/embed'
  if (providerType === 'TEI') return '/embed'
  return '/embeddings'
}

/**
 * Where a reranker's provider serves reranking when the registration names no path:
 * VENDORD /v2/rerank, TEI /rerank, all others /v1/rerank.
 */
export function defaultRerankerApiPath(providerType: string): string {
  if (providerType === 'VENDORD') return '/v2/rerank'
  if (providerType === 'TEI') return '/rerank'
  return '/v1/rerank'
}

/** Every LLM provider type serves the chat-completions path unless the registration names another. */
export const DEFAULT_LLM_API_PATH = '/v1/chat/completions'
