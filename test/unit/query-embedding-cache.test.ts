import { describe, expect, it } from 'vitest'
import {
  QUERY_EMBEDDING_CACHE_ENTRIES,
  QueryEmbeddingCache,
  type QueryEmbeddingKey,
  type QueryEmbeddingOutcome,
} from '../../src/providers/query-embedding-cache.js'

const EMBEDDER = '0b8a1f4e-5c0d-4a57-9d0e-3f1b2c4d5e6f'
const CREATED = new Date('2026-11-25T10:00:00.000Z')

const key = (message: string, overrides: Partial<QueryEmbeddingKey> = {}): QueryEmbeddingKey => ({
  embedderId: EMBEDDER,
  embedderUpdatedAt: CREATED,
  inputType: 'search_query',
  message,
  ...overrides,
})

/** A stand-in provider: counts its calls and answers a vector naming the call. */
function provider() {
  let calls = 0
  return {
    get calls() {
      return calls
    },
    embed: async () => [++calls, 0.5],
  }
}

describe('query embedding cache', () => {
  it('a repeated message is answered from the cache without asking the provider again', async () => {
    const outcomes: QueryEmbeddingOutcome[] = []
    const cache = new QueryEmbeddingCache({ observe: (outcome) => outcomes.push(outcome) })
    const embedder = provider()
    const first = await cache.embed(key('where is the tower'), embedder.embed)
    const second = await cache.embed(key('where is the tower'), embedder.embed)
    expect(second).toEqual(first)
    expect(embedder.calls).toBe(1)
    expect(outcomes).toEqual(['miss', 'hit'])
  })

  it('another message, embedder or input type is a miss', async () => {
    const cache = new QueryEmbeddingCache()
    const embedder = provider()
    await cache.embed(key('tower'), embedder.embed)
    await cache.embed(key('towers'), embedder.embed)
    await cache.embed(key('tower', { embedderId: 'f2d1c0b9-0000-4000-8000-000000000001' }), embedder.embed)
    await cache.embed(key('tower', { inputType: 'search_document' }), embedder.embed)
    expect(embedder.calls).toBe(4)
  })

  it('misses after the embedder was updated, and the new vector is the one kept', async () => {
    const cache = new QueryEmbeddingCache()
    const embedder = provider()
    expect(await cache.embed(key('tower'), embedder.embed)).toEqual([1, 0.5])
    const updated = { embedderUpdatedAt: new Date(CREATED.getTime() + 1) }
    expect(await cache.embed(key('tower', updated), embedder.embed)).toEqual([2, 0.5])
    expect(await cache.embed(key('tower', updated), embedder.embed)).toEqual([2, 0.5])
    expect(embedder.calls).toBe(2)
  })

  it('keeps nothing when the provider fails: the next ask calls it again', async () => {
    const cache = new QueryEmbeddingCache()
    const failing = async (): Promise<number[]> => {
      throw new Error('HTTP 503')
    }
    await expect(cache.embed(key('tower'), failing)).rejects.toThrow('HTTP 503')
    expect(cache.size).toBe(0)
    const embedder = provider()
    expect(await cache.embed(key('tower'), embedder.embed)).toEqual([1, 0.5])
    expect(embedder.calls).toBe(1)
  })

  it('holds at most its bound, dropping the least recently used entry first', async () => {
    const cache = new QueryEmbeddingCache({ maxEntries: 3 })
    const embedder = provider()
    for (const message of ['a', 'b', 'c']) await cache.embed(key(message), embedder.embed)
    await cache.embed(key('a'), embedder.embed) // a is now the most recently used
    await cache.embed(key('d'), embedder.embed) // evicts b
    expect(cache.size).toBe(3)
    expect(embedder.calls).toBe(4)
    for (const message of ['a', 'c', 'd']) await cache.embed(key(message), embedder.embed)
    expect(embedder.calls).toBe(4)
    await cache.embed(key('b'), embedder.embed)
    expect(embedder.calls).toBe(5)
  })

  it('is bounded by default and refuses a bound below one', () => {
    expect(QUERY_EMBEDDING_CACHE_ENTRIES).toBe(1_000)
    expect(() => new QueryEmbeddingCache({ maxEntries: 0 })).toThrow('at least one entry')
  })
})
