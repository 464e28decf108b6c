import type { ChangeFeed, Database } from '../db/database.js'
import type { SpaceEmbedderTarget, SpaceRow } from '../db/sql/spaces.js'
import type { Logger } from '../observability/logger.js'

/** Spaces per process whose rows are kept: each is one space row and its few embedder rows. */
export const SPACE_ROWS_CACHE_ENTRIES = 1_000
/** Upper bound on how long kept rows can outlive a change whose notification was lost (as for API keys). */
export const SPACE_ROWS_TTL_MS = 10_000
/** Written by the triggers of migration 10 (src/db/migrations.ts). */
export const SPACE_CHANGE_CHANNEL = 'memsvc_spaces'

/** What retrieval reads about its spaces before it searches: the spaces, and their embedders with the registrations. */
export interface SpaceRows {
  spaces: Map<string, SpaceRow>
  targets: SpaceEmbedderTarget[]
}

interface Entry {
  space: SpaceRow
  targets: SpaceEmbedderTarget[]
  cachedAt: number
}

/**
 * The rows retrieval plans its searches from, kept per space so a retrieval does no read
 * before it searches. A change to a space, its embedders or an embedder's registration,
 * made by any process or tool, reaches every server as a notification (triggers) and
 * evicts what it touched; this server's own writes evict at once, before they answer.
 * While the listening connection is down nothing is kept or used, and nothing is kept
 * longer than SPACE_ROWS_TTL_MS. Least recently used spaces go first when it is full.
 *
 * A read that started before an eviction may finish after it with the rows as they were:
 * every eviction moves `generation` on, and `fill` keeps a read only if none happened
 * since the read started.
 */
export class SpaceRowsCache {
  readonly #maxEntries: number
  readonly #now: () => number
  /** A Map iterates in insertion order: use re-inserts, so the first key is the least recently used. */
  readonly #entries = new Map<string, Entry>()
  #feed: ChangeFeed | undefined
  #generation = 0

  constructor(maxEntries = SPACE_ROWS_CACHE_ENTRIES, now: () => number = Date.now) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
      throw new Error(`the space rows cache needs at least one entry, not ${maxEntries}`)
    this.#maxEntries = maxEntries
    this.#now = now
  }

  /** Listens for changes; until then, and whenever the feed is down, the cache keeps nothing. */
  start(database: Pick<Database, 'subscribe'>, log: Logger): void {
    this.#feed = database.subscribe([SPACE_CHANGE_CHANNEL], {
      onMessage: (_channel, payload) => this.#onChange(payload),
      onLiveChange: (live) => {
        // Whatever changed while we were not listening is unknown: forget everything.
        this.clear()
        log.info(live ? 'listening for space changes' : 'space change feed down; retrieval reads every space', {
          live,
        })
      },
    })
  }

  async stop(): Promise<void> {
    await this.#feed?.close()
    this.#feed = undefined
    this.clear()
  }

  get size(): number {
    return this.#entries.size
  }

  /** Take this before reading, and hand it to `fill` with what the read found. */
  get generation(): number {
    return this.#generation
  }

  /** The rows of every one of `spaceIds`, or undefined if any is not kept (or the feed is down). */
  lookup(spaceIds: readonly string[]): SpaceRows | undefined {
    if (!this.#feed?.live) return undefined
    const now = this.#now()
    const spaces = new Map<string, SpaceRow>()
    const targets: SpaceEmbedderTarget[] = []
    for (const id of spaceIds) {
      if (spaces.has(id)) continue
      const entry = this.#entries.get(id)
      if (!entry) return undefined
      if (now - entry.cachedAt > SPACE_ROWS_TTL_MS) {
        this.#entries.delete(id)
        return undefined
      }
      this.#entries.delete(id)
      this.#entries.set(id, entry)
      spaces.set(id, entry.space)
      targets.push(...entry.targets)
    }
    return { spaces, targets }
  }

  /**
   * Keeps what a read of `spaceIds` found, if nothing was evicted since it started (see
   * `generation`). A space the read did not find is not kept: creating it evicts nothing.
   */
  fill(spaceIds: readonly string[], rows: SpaceRows, generation: number): void {
    if (generation !== this.#generation || !this.#feed?.live) return
    const cachedAt = this.#now()
    for (const id of spaceIds) {
      const space = rows.spaces.get(id)
      if (!space) continue
      this.#entries.delete(id)
      this.#entries.set(id, { space, targets: rows.targets.filter((target) => target.space_id === id), cachedAt })
      if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    }
  }

  /**
   * Runs a write to a space's rows, then evicts the space once the write has ended,
   * committed or not, so the writer's next retrieval reads it again.
   */
  async afterSpaceWrite<T>(spaceId: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } finally {
      this.forgetSpace(spaceId)
    }
  }

  /** The same for a write to an embedder's registration, which the rows of every space using it carry. */
  async afterEmbedderWrite<T>(embedderId: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } finally {
      this.forgetEmbedder(embedderId)
    }
  }

  forgetSpace(spaceId: string): void {
    this.#generation++
    this.#entries.delete(spaceId)
  }

  /** Every space that uses the embedder: its registration (endpoint, credentials, dimensionality) is in their rows. */
  forgetEmbedder(embedderId: string): void {
    this.#generation++
    for (const [id, entry] of this.#entries)
      if (entry.targets.some((target) => target.embedder_id === embedderId)) this.#entries.delete(id)
  }

  clear(): void {
    this.#generation++
    this.#entries.clear()
  }

  #onChange(payload: string): void {
    const separator = payload.indexOf(':')
    const kind = payload.slice(0, separator)
    const id = payload.slice(separator + 1)
    if (kind === 'space' && id) this.forgetSpace(id)
    else if (kind === 'embedder' && id) this.forgetEmbedder(id)
    else this.clear()
  }
}
