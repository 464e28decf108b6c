import type { SpaceEmbedderTarget, SpaceRow } from '../db/sql/spaces.js'

/** Spaces per process whose rows are kept: each is one space row and its few embedder rows. */
export const RECENT_SPACE_ROWS_ENTRIES = 1_000

/** What retrieval reads about its spaces before it searches: the spaces, and their embedders with the registrations. */
export interface SpaceRows {
  spaces: Map<string, SpaceRow>
  targets: SpaceEmbedderTarget[]
}

/**
 * The rows retrieval last read for each space, least recently used first out. They are a
 * guess of what the next read will find, which lets the search start before that read
 * answers (src/domain/retrieval.ts); nothing is ever answered or allowed from them alone.
 * Another server process's change is seen at the next read, like this one's.
 */
export class RecentSpaceRows {
  readonly #maxEntries: number
  /** A Map iterates in insertion order: use re-inserts, so the first key is the least recently used. */
  readonly #entries = new Map<string, { space: SpaceRow; targets: SpaceEmbedderTarget[] }>()

  constructor(maxEntries = RECENT_SPACE_ROWS_ENTRIES) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
      throw new Error(`recent space rows need at least one entry, not ${maxEntries}`)
    this.#maxEntries = maxEntries
  }

  get size(): number {
    return this.#entries.size
  }

  /** Keeps what a read of `spaceIds` found; a space it did not find is forgotten. */
  remember(spaceIds: readonly string[], rows: SpaceRows): void {
    for (const id of spaceIds) {
      this.#entries.delete(id)
      const space = rows.spaces.get(id)
      if (!space) continue
      this.#entries.set(id, { space, targets: rows.targets.filter((target) => target.space_id === id) })
      if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    }
  }

  /** The rows last read for every one of `spaceIds`, or undefined if any is not kept. */
  recall(spaceIds: readonly string[]): SpaceRows | undefined {
    const spaces = new Map<string, SpaceRow>()
    const targets: SpaceEmbedderTarget[] = []
    for (const id of new Set(spaceIds)) {
      const entry = this.#entries.get(id)
      if (!entry) return undefined
      this.#entries.delete(id)
      this.#entries.set(id, entry)
      spaces.set(id, entry.space)
      targets.push(...entry.targets)
    }
    return { spaces, targets }
  }
}
