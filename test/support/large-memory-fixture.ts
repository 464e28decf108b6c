import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import type { StartOptions } from '../../src/server/server.js'
import type { Engine } from './databases.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from './memory-fixture.js'
import { waitFor } from './wait.js'

/**
 * A running server with one space of alice's holding large memories stored with chunking
 * `none` (each memory is one chunk of its whole text), so that a retrieval asking for memory
 * content answers with megabytes: every memory twice, once as content and once as chunk text.
 * Every memory shares the words of RETRIEVAL_MESSAGE, so every mode finds all of them.
 */
export interface LargeMemoryFixture extends MemoryFixture {
  spaceId: string
  /** Memory id → its text, to check what an answer carries. */
  texts: Map<string, string>
}

export const RETRIEVAL_MESSAGE = 'alpha beta'

/** Large texts take the fake embedder longer than FAST_MEMORY_JOBS's one-second timeout. */
const LARGE_TEXT_JOBS: StartOptions = {
  ...FAST_MEMORY_JOBS,
  embeddingPolicy: { ...FAST_MEMORY_JOBS.embeddingPolicy, requestTimeoutMs: 30_000, batchSize: 4 },
}
const INGEST_TIMEOUT_MS = 180_000

/** A text of about `bytes` ASCII bytes, different for each `seed`. */
export function largeText(seed: number, bytes: number): string {
  const words = [`memory${seed}`, RETRIEVAL_MESSAGE]
  let state = seed * 2_654_435_761
  let size = 0
  while (size < bytes) {
    state = (state * 1_103_515_245 + 12_345) >>> 0
    const word = `w${(state >>> 8) % 5_000}`
    words.push(word)
    size += word.length + 1
  }
  return words.join(' ')
}

export async function startLargeMemoryFixture(
  engine: Engine,
  options: { count: number; bytesEach: number },
): Promise<LargeMemoryFixture> {
  const fixture = await startMemoryFixture(engine, LARGE_TEXT_JOBS, { dimensions: 32 })
  const context = fixture.server.server.context
  const call = fixture.as(fixture.alice)
  const embedderId = await fixture.registerEmbedder(fixture.alice)
  const space = await spaces.createSpace(context, call, {
    name: `large-${crypto.randomUUID().slice(0, 8)}`,
    spaceEmbedders: [{ embedderId }],
    defaultChunkingConfig: { none: {} },
  })
  const texts = new Map<string, string>()
  for (let index = 0; index < options.count; index++) {
    const text = largeText(index + 1, options.bytesEach)
    const { memory } = await memories.createMemory(context, call, { spaceId: space.spaceId, originalContent: text })
    texts.set(memory.memoryId, text)
  }
  for (const id of texts.keys()) {
    const done = await waitFor(
      `memory ${id} to finish ingest`,
      async () => {
        const memory = await memories.getMemory(context, fixture.as(fixture.root), id)
        return memory.processingStatus === 'COMPLETED' || memory.processingStatus === 'FAILED' ? memory : undefined
      },
      { timeoutMs: INGEST_TIMEOUT_MS },
    )
    if (done.processingStatus !== 'COMPLETED') throw new Error(`memory ${id} ended ${done.processingStatus}`)
  }
  return { ...fixture, spaceId: space.spaceId, texts }
}
