import { describe, expect, it } from 'vitest'
import type { SpaceEmbedderTarget, SpaceRow } from '../../src/db/sql/spaces.js'
import { RecentSpaceRows, type SpaceRows } from '../../src/domain/recent-space-rows.js'

const space = (id: string) => ({ id, owner_id: 'owner' }) as SpaceRow
const target = (spaceId: string, embedderId: string) =>
  ({ space_id: spaceId, embedder_id: embedderId }) as SpaceEmbedderTarget
const rows = (ids: string[], targets: SpaceEmbedderTarget[] = []): SpaceRows => ({
  spaces: new Map(ids.map((id) => [id, space(id)])),
  targets,
})

describe('recent space rows', () => {
  it('recalls each space with its own embedders', () => {
    const recent = new RecentSpaceRows()
    recent.remember(['a', 'b'], rows(['a', 'b'], [target('a', 'e1'), target('b', 'e2'), target('b', 'e3')]))
    const recalled = recent.recall(['b'])!
    expect([...recalled.spaces.keys()]).toEqual(['b'])
    expect(recalled.targets.map((row) => row.embedder_id)).toEqual(['e2', 'e3'])
  })

  it('recalls nothing unless every space asked for was read', () => {
    const recent = new RecentSpaceRows()
    recent.remember(['a'], rows(['a']))
    expect(recent.recall(['a', 'b'])).toBeUndefined()
  })

  it('forgets a space that a later read did not find', () => {
    const recent = new RecentSpaceRows()
    recent.remember(['a'], rows(['a']))
    recent.remember(['a'], rows([]))
    expect(recent.recall(['a'])).toBeUndefined()
    expect(recent.size).toBe(0)
  })

  it('drops the least recently used space when full', () => {
    const recent = new RecentSpaceRows(2)
    recent.remember(['a', 'b'], rows(['a', 'b']))
    recent.recall(['a'])
    recent.remember(['c'], rows(['c']))
    expect(recent.recall(['b'])).toBeUndefined()
    expect(recent.recall(['a'])).toBeDefined()
    expect(recent.recall(['c'])).toBeDefined()
  })

  it('refuses a size below one', () => {
    expect(() => new RecentSpaceRows(0)).toThrow('at least one entry')
  })
})
