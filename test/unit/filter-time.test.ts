// The memory's own times in the filter language (createdAt, updatedAt, validUntil): what they
// parse to, the SQL they compile to, and the literals refused with their position; the CLI's
// half-life durations; the GET form's recency parameters.
import { describe, expect, it } from 'vitest'
import { parseHalfLife } from '../../src/cli/commands/memory-retrieve.js'
import { compileFilter } from '../../src/domain/filters/filter-compiler.js'
import { parseFilterText } from '../../src/domain/filters/filter-parser.js'
import { FilterError } from '../../src/domain/filters/filter-tree.js'
import { metadataFilter } from '../../src/domain/filters/metadata-filter.js'
import type { RestRequest } from '../../src/transport/rest/rest-messages.js'
import { retrieveQuery } from '../../src/transport/rest/retrieve-query.js'

const compiled = (filter: string, column: 'metadata' | 'm.metadata' = 'm.metadata') => {
  const result = compileFilter(parseFilterText(filter), column)
  return { text: result.strings.join('$?'), values: result.values }
}

function errorOf(filter: string): FilterError {
  try {
    parseFilterText(filter)
  } catch (error) {
    if (error instanceof FilterError) return error
    throw error
  }
  throw new Error(`parsed: ${filter}`)
}

describe('filter language: createdAt, updatedAt and validUntil', () => {
  it('reads ISO dates and epoch milliseconds as instants in UTC, at millisecond precision', () => {
    expect(parseFilterText("createdAt > '2026-01-01'")).toEqual({
      kind: 'timeCompare',
      field: 'createdAt',
      operator: '>',
      value: '2026-01-01T00:00:00.000Z',
    })
    expect(parseFilterText('updatedAt <= 1764300000000')).toMatchObject({ value: '2025-11-28T03:20:00.000Z' })
    expect(parseFilterText("createdAt = '2026-01-01T12:30'")).toMatchObject({ value: '2026-01-01T12:30:00.000Z' })
    expect(parseFilterText("createdAt = '2026-01-01 10:00:00.1234+02:00'")).toMatchObject({
      value: '2026-01-01T08:00:00.123Z',
    })
    expect(parseFilterText("CREATEDAT != '2024-02-29T23:59:59-0130'")).toMatchObject({
      field: 'createdAt',
      value: '2024-03-01T01:29:59.000Z',
    })
  })

  it('takes ranges, IN lists and IS [NOT] NULL, and mixes with metadata predicates', () => {
    expect(parseFilterText("createdAt >= '2026-01-01' AND createdAt < '2026-02-01T12:00:00Z'")).toEqual({
      kind: 'and',
      left: { kind: 'timeCompare', field: 'createdAt', operator: '>=', value: '2026-01-01T00:00:00.000Z' },
      right: { kind: 'timeCompare', field: 'createdAt', operator: '<', value: '2026-02-01T12:00:00.000Z' },
    })
    expect(parseFilterText("updatedAt NOT IN ('2026-01-01', 0)")).toEqual({
      kind: 'timeIn',
      field: 'updatedAt',
      values: ['2026-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z'],
      negated: true,
    })
    expect(parseFilterText('validUntil IS NOT NULL')).toEqual({ kind: 'timeNull', field: 'validUntil', negated: true })
    expect(parseFilterText("val('$.topic') = 'x' OR NOT validUntil IS NULL")).toMatchObject({ kind: 'or' })
  })

  it("compiles to the memory row's columns, with the metadata column's table alias, values as parameters", () => {
    expect(compiled("createdAt > '2026-01-01'")).toEqual({
      text: '(m.created_at > $?::text::timestamptz)',
      values: ['2026-01-01T00:00:00.000Z'],
    })
    expect(compiled('updatedAt <= 0', 'metadata').text).toBe('(updated_at <= $?::text::timestamptz)')
    // valid_until may be null: the comparison stays two-valued, so NOT of it holds for a memory without one.
    expect(compiled("validUntil < '2026-01-01'").text).toBe('coalesce(m.valid_until < $?::text::timestamptz, false)')
    expect(compiled("NOT validUntil IN ('2026-01-01')").text).toBe(
      '(not coalesce(m.valid_until = any($?::text[]::timestamptz[]), false))',
    )
    expect(compiled('validUntil IS NULL', 'metadata')).toEqual({ text: '(valid_until is null)', values: [] })
  })

  const refused: Array<[string, number, string]> = [
    ["createdAt > 'yesterday'", 13, "createdAt is compared with a date or time such as '2026-01-01'"],
    ["createdAt > 'March 7, 2026'", 13, 'epoch milliseconds'],
    ["createdAt > '2026-02-30'", 13, 'createdAt is compared with'],
    ["updatedAt < '2023-02-29T00:00:00Z'", 13, 'updatedAt is compared with'],
    ["createdAt > '2026-01-01T25:00:00Z'", 13, 'createdAt is compared with'],
    ["createdAt > '0000-01-01'", 13, 'createdAt is compared with'],
    ['createdAt > -1', 13, 'createdAt is compared with'],
    ['createdAt > 1.5', 13, 'createdAt is compared with'],
    ['createdAt > 253402300800000', 13, 'createdAt is compared with'],
    ['validUntil = TRUE', 14, 'validUntil is compared with'],
    ["createdAt IN ('2026-01-01', 'soon')", 29, 'createdAt is compared with'],
    ["createdAt LIKE '2026%'", 11, 'createdAt is a time: expected a comparison'],
    ["updatedAt CONTAINS '2026-01-01'", 11, 'updatedAt is a time'],
    ["createdAt('$.a') = 1", 10, 'createdAt is a time'],
    [
      "created_at > '2026-01-01'",
      1,
      "expected val('$.path'), CAST(val('$.path') AS type), createdAt, updatedAt or validUntil",
    ],
  ]
  it.each(refused)('%s is refused at position %i', (filter, position, reason) => {
    const error = errorOf(filter)
    expect(error.position).toBe(position)
    expect(error.reason).toContain(reason)
  })

  it('a refused time names the request field and the position', () => {
    expect(() => metadataFilter("createdAt > 'soon'", 'spaceKeys.0.filter', 'm.metadata')).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        details: [
          { field: 'spaceKeys.0.filter', description: expect.stringMatching(/at position 13: createdAt is compared/) },
        ],
      }),
    )
  })

  it('a hostile string compared with a time is refused, never compiled', () => {
    expect(() => parseFilterText("createdAt > '2026-01-01''; drop table memories; --'")).toThrow(FilterError)
    expect(() => parseFilterText("createdAt > '2026-01-01' OR pg_sleep(1) = 1")).toThrow(FilterError)
  })
})

describe('memsvc memory retrieve --recency-half-life', () => {
  it.each([
    ['3600', 3600],
    ['1.5', 1.5],
    ['3600s', 3600],
    ['90m', 5400],
    ['12h', 43_200],
    ['30d', 2_592_000],
    ['1w2d', 777_600],
    [' 12H ', 43_200],
  ])('%s is %d seconds', (text, seconds) => expect(parseHalfLife(text)).toBe(seconds))

  it.each(['', 'soon', '-5', '12 h', '3y', 'd'])('%j is refused naming the flag', (text) => {
    expect(() => parseHalfLife(text)).toThrow(/--recency-half-life/)
  })
})

describe('GET /v1/memories:retrieve: recency and includeExpired as query parameters', () => {
  const requestWith = (query: Array<[string, string]>) => ({ query }) as unknown as RestRequest
  const spaceId = '00000000-0000-4000-8000-000000000001'

  it('builds the recency object and the includeExpired flag, numbers and booleans converted', () => {
    expect(
      retrieveQuery(
        requestWith([
          ['message', 'tower'],
          ['spaceIds', spaceId],
          ['recencyHalfLifeSeconds', '86400'],
          ['recency_weight', '0.5'],
          ['includeExpired', 'true'],
        ]),
      ),
    ).toEqual({
      message: 'tower',
      spaceKeys: [{ spaceId }],
      recency: { halfLifeSeconds: 86_400, weight: 0.5 },
      includeExpired: true,
    })
  })

  it('leaves text that is not a number as it is, for the shared validation to name', () => {
    expect(retrieveQuery(requestWith([['recencyHalfLifeSeconds', '30d']]))).toMatchObject({
      recency: { halfLifeSeconds: '30d' },
    })
  })
})
