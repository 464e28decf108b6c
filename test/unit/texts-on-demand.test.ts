import { describe, expect, it } from 'vitest'
import { TextsOnDemand } from '../../src/domain/texts-on-demand.js'

const KIB = 1024
const BATCH_BYTES = 100 * KIB

/** A loader over fixed texts that records each query's ids; `gone` rows are not returned. */
function loaderOf(texts: Record<string, string>, gone: string[] = []) {
  const queries: string[][] = []
  const load = async (ids: string[]) => {
    queries.push(ids)
    return ids.filter((id) => !gone.includes(id)).map((id) => ({ id, text: texts[id]! }))
  }
  return { load, queries }
}

describe('texts loaded as a stream reaches them', () => {
  const texts = { a: 'A', b: 'B', c: 'C', d: 'D' }

  it('loads the next texts in stream order, as many as fit in a batch, in one query each', async () => {
    const { load, queries } = loaderOf(texts)
    const needs = [
      { id: 'a', bytes: 40 * KIB },
      { id: 'b', bytes: 40 * KIB },
      { id: 'c', bytes: 40 * KIB },
      { id: 'd', bytes: 10 * KIB },
    ]
    const onDemand = new TextsOnDemand(needs, load, BATCH_BYTES)
    expect([
      await onDemand.take('a'),
      await onDemand.take('b'),
      await onDemand.take('c'),
      await onDemand.take('d'),
    ]).toEqual(['A', 'B', 'C', 'D'])
    expect(queries).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ])
  })

  it('loads a text larger than a batch on its own', async () => {
    const { load, queries } = loaderOf(texts)
    const needs = [
      { id: 'a', bytes: 10 * KIB },
      { id: 'b', bytes: 400 * KIB },
      { id: 'c', bytes: 10 * KIB },
    ]
    const onDemand = new TextsOnDemand(needs, load, BATCH_BYTES)
    for (const id of ['a', 'b', 'c']) await onDemand.take(id)
    expect(queries).toEqual([['a'], ['b'], ['c']])
    expect(TextsOnDemand.largestLoad(needs, BATCH_BYTES)).toBe(400 * KIB)
  })

  it('gives each text out once, and nothing for a row deleted since the search', async () => {
    const { load } = loaderOf(texts, ['b'])
    const needs = ['a', 'b', 'c'].map((id) => ({ id, bytes: KIB }))
    const onDemand = new TextsOnDemand(needs, load, BATCH_BYTES)
    expect(await onDemand.take('a')).toBe('A')
    expect(await onDemand.take('b')).toBeUndefined()
    expect(await onDemand.take('c')).toBe('C')
    expect(await onDemand.take('c')).toBeUndefined()
  })

  it('refuses a text it was not told the stream would need', async () => {
    const onDemand = new TextsOnDemand([{ id: 'a', bytes: KIB }], loaderOf(texts).load, BATCH_BYTES)
    await expect(onDemand.take('z')).rejects.toThrow('text z was not announced')
  })
})
