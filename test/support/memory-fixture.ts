import type { CallContext } from '../../src/domain/call-context.js'
import * as memories from '../../src/domain/memories.js'
import type { StartOptions } from '../../src/server/server.js'
import type { Engine } from './databases.js'
import { type FakeEmbedder, startFakeEmbedder } from './fake-embedder.js'
import { type Actor, type IdentityFixture, startIdentityFixture } from './identity-fixture.js'
import { waitFor } from './wait.js'

/**
 * A running server with the identity fixture's users and a local embedding server, for
 * calling the memory use cases directly (the transports come in a later round).
 */
export interface MemoryFixture extends IdentityFixture {
  embedder: FakeEmbedder
  as(actor: Actor): CallContext
  /** Registers an embedder for `owner` pointing at the fake embedder; returns its id. */
  registerEmbedder(owner: Actor, overrides?: Record<string, unknown>): Promise<string>
  /** Waits until the memory's ingest has finished and returns it. */
  settled(memoryId: string): Promise<memories.Memory>
}

/** Short waits: retries and leases in milliseconds, so fault tests finish quickly. */
export const FAST_MEMORY_JOBS: StartOptions = {
  jobs: { pollIntervalMs: 50, retryBaseMs: 20, maxRetryDelayMs: 200 },
  embeddingPolicy: {
    requestTimeoutMs: 1_000,
    retryBaseMs: 10,
    maxRetryDelayMs: 2_000,
    attemptsPerBatch: 4,
    batchSize: 8,
    stallCooldownMs: 200,
  },
}

let embedderCounter = 0

export async function startMemoryFixture(
  engine: Engine,
  startOptions: StartOptions = FAST_MEMORY_JOBS,
  embedderOptions: { dimensions?: number } = {},
  flags: Record<string, unknown> = {},
): Promise<MemoryFixture> {
  const identity = await startIdentityFixture(engine, flags, startOptions)
  const embedder = await startFakeEmbedder(embedderOptions)
  const as = (actor: Actor): CallContext => ({
    requestId: 'memory-test',
    transport: 'rest',
    authorization: `Bearer ${actor.apiKey}`,
  })
  const context = () => identity.server.server.context
  return {
    ...identity,
    embedder,
    as,
    async registerEmbedder(owner, overrides = {}) {
      const created = await identity.call(
        'rest',
        'createEmbedder',
        {
          displayName: `fake ${++embedderCounter}`,
          providerType: 'TEI',
          endpointUrl: embedder.url,
          modelIdentifier: `hashed-bow-${embedderCounter}`,
          dimensionality: embedder.dimensions,
          ...overrides,
        },
        owner.apiKey,
      )
      if (created.status !== 'OK') throw new Error(`embedder registration failed: ${JSON.stringify(created.body)}`)
      return created.body.embedderId as string
    },
    async settled(memoryId) {
      return waitFor(`memory ${memoryId} to finish ingest`, async () => {
        const memory = await memories.getMemory(context(), as(identity.root), memoryId)
        return memory.processingStatus === 'COMPLETED' || memory.processingStatus === 'FAILED' ? memory : undefined
      })
    },
    async stop() {
      await identity.stop()
      await embedder.close()
    },
  }
}
