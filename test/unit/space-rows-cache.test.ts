import { describe, expect, it } from 'vitest'
import type { ChangeFeedHandlers } from '../../src/db/database.js'
import type { SpaceEmbedderTarget, SpaceRow } from '../../src/db/sql/spaces.js'
import { SPACE_ROWS_TTL_MS, type SpaceRows, SpaceRowsCache } from '../../src/domain/space-rows-cache.js'
import type { Logger } from '../../src/observability/logger.js'

const quiet = { info() {}, warn() {}, error() {}, debug() {} } as unknown as Logger

const space = (id: string) => ({ id }) as SpaceRow
const target = (spaceId: string, embedderId: string) =>
  ({ space_id: spaceId, embedder_id: embedderId }) as SpaceEmbedderTarget
const rowsOf = (...entries: Array<[string, string]>): SpaceRows => ({
  spaces: new Map(entries.map(([spaceId]) => [spaceId, space(spaceId)])),
  targets: entries.map(([spaceId, embedderId]) => target(spaceId, embedderId)),
})

/** A cache on a feed the test controls, with a clock the test moves. */
function startedCache(maxEntries?: number) {
  let handlers: ChangeFeedHandlers | undefined
  const feed = { live: true, close: async () => {} }
  const clock = { now: 1_000 }
  const cache = new SpaceRowsCache(maxEntries, () => clock.now)
  cache.start(
    {
      subscribe: (_channels, given) => {
        handlers = given
        return feed
      },
    },
    quiet,
  )
  const notify = (payload: string) => handlers!.onMessage('memsvc_spaces', payload)
  const setLive = (live: boolean) => {
    feed.live = live
    handlers!.onLiveChange(live)
  }
  return { cache, clock, notify, setLive }
}

describe('space rows cache', () => {
  it('answers every space a read kept, and nothing when one of them is missing', () => {
    const { cache } = startedCache()
    cache.fill(['a', 'b'], rowsOf(['a', 'e1'], ['b', 'e2']), cache.generation)
    expect(cache.lookup(['b', 'a', 'b'])).toEqual(rowsOf(['b', 'e2'], ['a', 'e1']))
    expect(cache.lookup(['a', 'c'])).toBeUndefined()
  })

  it('keeps nothing before it listens, nor a space the read did not find', () => {
    const unstarted = new SpaceRowsCache()
    unstarted.fill(['a'], rowsOf(['a', 'e1']), unstarted.generation)
    expect(unstarted.lookup(['a'])).toBeUndefined()
    const { cache } = startedCache()
    cache.fill(['a', 'gone'], rowsOf(['a', 'e1']), cache.generation)
    expect(cache.size).toBe(1)
  })

  it('drops a read that started before an eviction, whatever the eviction touched', () => {
    const { cache, notify } = startedCache()
    const generation = cache.generation
    notify('space:other')
    cache.fill(['a'], rowsOf(['a', 'e1']), generation)
    expect(cache.lookup(['a'])).toBeUndefined()
  })

  it('a space notification evicts that space; an embedder notification evicts the spaces using it', () => {
    const { cache, notify } = startedCache()
    cache.fill(['a', 'b', 'c'], rowsOf(['a', 'e1'], ['b', 'e2'], ['c', 'e1']), cache.generation)
    notify('space:b')
    expect(cache.lookup(['b'])).toBeUndefined()
    expect(cache.lookup(['a'])).toBeDefined()
    notify('embedder:e1')
    expect(cache.lookup(['a'])).toBeUndefined()
    expect(cache.lookup(['c'])).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('an unknown notification forgets everything', () => {
    const { cache, notify } = startedCache()
    cache.fill(['a'], rowsOf(['a', 'e1']), cache.generation)
    notify('something new')
    expect(cache.size).toBe(0)
  })

  it('while the feed is down nothing is kept or answered, and what was kept before is gone', () => {
    const { cache, setLive } = startedCache()
    cache.fill(['a'], rowsOf(['a', 'e1']), cache.generation)
    setLive(false)
    expect(cache.lookup(['a'])).toBeUndefined()
    cache.fill(['a'], rowsOf(['a', 'e1']), cache.generation)
    setLive(true)
    expect(cache.lookup(['a'])).toBeUndefined()
  })

  it('rows older than the bound are read again', () => {
    const { cache, clock } = startedCache()
    cache.fill(['a'], rowsOf(['a', 'e1']), cache.generation)
    clock.now += SPACE_ROWS_TTL_MS
    expect(cache.lookup(['a'])).toBeDefined()
    clock.now += 1
    expect(cache.lookup(['a'])).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('the least recently used space goes first when full', () => {
    const { cache } = startedCache(2)
    cache.fill(['a', 'b'], rowsOf(['a', 'e1'], ['b', 'e1']), cache.generation)
    cache.lookup(['a'])
    cache.fill(['c'], rowsOf(['c', 'e1']), cache.generation)
    expect(cache.lookup(['b'])).toBeUndefined()
    expect(cache.lookup(['a'])).toBeDefined()
    expect(cache.lookup(['c'])).toBeDefined()
  })

  it('needs at least one entry', () => {
    expect(() => new SpaceRowsCache(0)).toThrow('at least one entry')
  })
})
