// Shapes of the API's JSON (proto3 JSON mapping, lowerCamelCase; times in epoch ms).

export interface User {
  userId: string
  username: string
  displayName?: string
  role: 'ADMIN' | 'USER'
  createdAt?: number
  updatedAt?: number
}

export interface SystemInfo {
  version: string
  lifecycleState: string
  initialized: boolean
  license?: Record<string, unknown>
  storage?: string
  tlsEnabled?: boolean
}

export interface InitResult {
  alreadyInitialized: boolean
  message: string
  rootApiKey?: string
  userId?: string
}

export interface ApiKey {
  apiKeyId: string
  userId: string
  keyPrefix: string
  status: 'ACTIVE' | 'INACTIVE'
  labels: Record<string, string>
  expiresAt?: number | string
  lastUsedAt?: number | string
  createdAt: number | string
  updatedAt: number | string
  createdById?: string
  updatedById?: string
}

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
