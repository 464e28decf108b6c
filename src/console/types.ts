// Shapes of the API's JSON (lowerCamelCase; times in epoch ms). Where the server's domain
// defines a response, the console uses that definition: type-only imports, which the
// console bundle drops, so no server code reaches the browser.
import type { User } from '../domain/users.js'

export type { ChunkingConfig } from '../chunking/chunking-config.js'
export type { ApiKey } from '../domain/api-keys.js'
export type { Memory, MemoryContent } from '../domain/memories.js'
export type { RetrievalEvent, RetrievedChunk } from '../domain/retrieval.js'
export type { Space, SpaceEmbedder } from '../domain/spaces.js'
export type { InitializeSystemResult as InitResult, SystemInfo } from '../domain/system.js'
export type { User } from '../domain/users.js'

export interface Credentials {
  kind: 'API_KEY' | 'CLOUD_ADC' | 'NONE'
  apiKey?: { inlineSecret?: string; headerName?: string; prefix?: string; secretFingerprint?: string }
  cloudAdc?: { scopes?: string[]; quotaProjectId?: string }
}

/** An embedder or an LLM as the API returns it; the fields differ per kind. */
export type Registration = Record<string, unknown> & {
  ownerId?: string
  displayName?: string
  providerType?: string
  endpointUrl?: string
  apiPath?: string
  modelIdentifier?: string
  labels?: Record<string, string>
  credentials?: Credentials
  createdAt?: number | string
  updatedAt?: number | string
}

export interface PageContext {
  /** The page's container. */
  root: HTMLElement
  me: User
  /** Route segments after the page name, e.g. ["<id>", "edit"]. */
  params: string[]
  query: URLSearchParams
  /** False once the user has moved on to another route (stop rendering). */
  isCurrent(): boolean
  navigate(hash: string): void
  /** Renders the current route again. */
  reload(): void
}
