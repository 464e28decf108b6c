import crypto from 'node:crypto'

/**
 * The query vectors retrieval asked embedders for, most recently used first. Agents ask the
 * same thing often, and every retrieval in VECTOR or HYBRID mode otherwise waits for a
 * provider call before it can search: a repeated message costs none.
 *
 * A vector is only valid for the registration that made it, so the key holds the
 * embedder's id and its row's updated_at: updating the embedder (model, endpoint,
 * dimensionality, credential) changes updated_at and the old entries are never asked for
 * again (they age out). The message is hashed, so a key is short whatever the message's
 * length. Only vectors the provider returned are kept; a failure is asked again next time.
 */

/** Entries per process (one cache per server): 1,000 vectors of 384 dimensions are about 3 MB of doubles. */
export const QUERY_EMBEDDING_CACHE_ENTRIES = 1_000

export type QueryEmbeddingOutcome = 'hit' | 'miss'

export interface QueryEmbeddingKey {
  embedderId: string
  /** The embedder row's updated_at: a change to the registration invalidates its vectors. */
  embedderUpdatedAt: Date
  inputType: 'search_document' | 'search_query'
  message: string
}

export interface QueryEmbeddingCacheOptions {
  maxEntries?: number
  /** Told about every lookup, for metrics. */
  observe?: (outcome: QueryEmbeddingOutcome) => void
}

export class QueryEmbeddingCache {
  readonly #maxEntries: number
  readonly #observe?: (outcome: QueryEmbeddingOutcome) => void
  /** A Map iterates in insertion order: a hit is re-inserted, so the first key is the least recently used. */
  readonly #entries = new Map<string, readonly number[]>()

  constructor(options: QueryEmbeddingCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? QUERY_EMBEDDING_CACHE_ENTRIES
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries < 1)
      throw new Error(`a query embedding cache needs at least one entry, not ${this.#maxEntries}`)
    this.#observe = options.observe
  }

  get size(): number {
    return this.#entries.size
  }

  /**
   * The cached vector for `key`, or the one `embed` returns, which is then kept. A failure
   * of `embed` propagates and nothing is kept. Concurrent misses of one key each call
   * `embed` (rare; the last answer is kept).
   */
  async embed(key: QueryEmbeddingKey, embed: () => Promise<number[]>): Promise<readonly number[]> {
    const id = cacheKey(key)
    const cached = this.#entries.get(id)
    if (cached) {
      this.#entries.delete(id)
      this.#entries.set(id, cached)
      this.#observe?.('hit')
      return cached
    }
    this.#observe?.('miss')
    const vector = await embed()
    this.#entries.delete(id)
    this.#entries.set(id, vector)
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    return vector
  }
}

/** Unambiguous: the id is a UUID and the time a number, so only the message needs hashing to keep keys short. */
function cacheKey(key: QueryEmbeddingKey): string {
  const message = crypto.createHash('sha256').update(key.message).digest('base64')
  return `${key.embedderId} ${key.embedderUpdatedAt.getTime()} ${key.inputType} ${message}`
}
