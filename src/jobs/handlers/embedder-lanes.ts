import type { ProviderCalls } from '../../providers/provider-calls.js'

/** Spaces remembered at most (an id and a few embedder ids each); the least recently ingested are forgotten first. */
const MAX_REMEMBERED_SPACES = 10_000

/**
 * Ingest jobs queue by space (their lane), but what they wait on is the space's embedders,
 * which other spaces may share. This keeps which embedders each space's memories went to,
 * as this process last read them, so that the spaces of an embedder that is busy (every
 * call it may take under way) or stalled (a trial call under way) are held back from the
 * queue's claims: their jobs stay queued, not claimed to hold a worker while they wait.
 * A space not ingested here yet is not known: its first run finds out.
 */
export class EmbedderLanes {
  readonly #embeddersOf = new Map<string, string[]>()

  constructor(readonly providerCalls: ProviderCalls) {}

  /** A run read the space's embedders. */
  remember(spaceId: string, embedderIds: string[]): void {
    this.#embeddersOf.delete(spaceId)
    this.#embeddersOf.set(spaceId, embedderIds)
    if (this.#embeddersOf.size > MAX_REMEMBERED_SPACES) this.#embeddersOf.delete(this.#embeddersOf.keys().next().value!)
  }

  /** Spaces whose ingest must wait: one of their embedders has `limit` calls under way, or a trial call after a stall. */
  held(limit: number): string[] {
    const busy = this.providerCalls.busy(limit)
    if (busy.size === 0) return []
    const held: string[] = []
    for (const [spaceId, embedderIds] of this.#embeddersOf)
      if (embedderIds.some((embedderId) => busy.has(embedderId))) held.push(spaceId)
    return held
  }
}
