import { describe, expect, it } from 'vitest'
import { compileFilter } from '../../src/domain/filters/filter-compiler.js'
import { MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, parseFilterText } from '../../src/domain/filters/filter-parser.js'
import { FilterError } from '../../src/domain/filters/filter-tree.js'
import { metadataFilter } from '../../src/domain/filters/metadata-filter.js'

const sqlTextOf = (filter: string) => compileFilter(parseFilterText(filter), 'metadata').strings.join('$?')

function positionOf(filter: string): number {
  try {
    parseFilterText(filter)
  } catch (error) {
    if (error instanceof FilterError) return error.position
    throw error
  }
  throw new Error(`parsed: ${filter}`)
}

describe('metadata filter: parsing', () => {
  it('builds a tree with precedence NOT > AND > OR and parentheses overriding it', () => {
    expect(parseFilterText("val('$.a') = 'x' OR val('$.b') = 1 AND NOT val('$.c') = true")).toEqual({
      kind: 'or',
      left: { kind: 'compare', target: { path: ['a'] }, operator: '=', value: 'x' },
      right: {
        kind: 'and',
        left: { kind: 'compare', target: { path: ['b'] }, operator: '=', value: 1 },
        right: { kind: 'not', operand: { kind: 'compare', target: { path: ['c'] }, operator: '=', value: true } },
      },
    })
    expect(parseFilterText("(val('$.a') = 'x' or val('$.b') = 1) and val('$.c') = true")).toMatchObject({
      kind: 'and',
      left: { kind: 'or' },
    })
  })

  it('reads every operator, nested paths, array indexes, casts and quoted quotes', () => {
    expect(parseFilterText("val('$.a.b[2].c') != 'it''s'")).toEqual({
      kind: 'compare',
      target: { path: ['a', 'b', '2', 'c'] },
      operator: '!=',
      value: "it's",
    })
    expect(parseFilterText("val('$.a') <> 'x'")).toMatchObject({ operator: '!=' })
    for (const operator of ['<', '<=', '>', '>='] as const) {
      expect(parseFilterText(`CAST(val('$.n') AS NUMBER) ${operator} -2.5e1`)).toEqual({
        kind: 'compare',
        target: { path: ['n'], cast: 'NUMBER' },
        operator,
        value: -25,
      })
    }
    expect(parseFilterText("val('$.k') IN ('a', 2, FALSE)")).toEqual({
      kind: 'in',
      target: { path: ['k'] },
      values: ['a', 2, false],
      negated: false,
    })
    expect(parseFilterText("val('$.k') not in ('a')")).toMatchObject({ kind: 'in', negated: true })
    expect(parseFilterText("val('$.t') LIKE 'ab%'")).toEqual({
      kind: 'like',
      target: { path: ['t'] },
      pattern: 'ab%',
      caseInsensitive: false,
      negated: false,
    })
    expect(parseFilterText("val('$.t') NOT ILIKE '%x'")).toMatchObject({
      kind: 'like',
      caseInsensitive: true,
      negated: true,
    })
    expect(parseFilterText("val('$.t') IS NULL")).toEqual({ kind: 'null', target: { path: ['t'] }, negated: false })
    expect(parseFilterText("val('$.t') is not null")).toMatchObject({ kind: 'null', negated: true })
    expect(parseFilterText("val('$.tags') CONTAINS 'a'")).toEqual({
      kind: 'contains',
      target: { path: ['tags'] },
      values: ['a'],
    })
    expect(parseFilterText("val('$.tags') CONTAINS ('a', 'b')")).toMatchObject({ kind: 'contains', values: ['a', 'b'] })
    expect(parseFilterText("val('$.tags') OVERLAPS ('a', 'b')")).toMatchObject({ kind: 'overlaps', values: ['a', 'b'] })
    expect(parseFilterText("CAST(val('$.at') AS TIMESTAMP) >= '2024-05-01'")).toMatchObject({
      value: '2024-05-01T00:00:00.000Z',
    })
    expect(parseFilterText("CAST(val('$.ok') AS BOOLEAN) = TRUE")).toMatchObject({
      target: { cast: 'BOOLEAN' },
      value: true,
    })
    expect(parseFilterText("CAST(val('$.n') AS TEXT) = '5'")).toMatchObject({ target: { cast: 'TEXT' }, value: '5' })
  })

  it('names the position of syntax and type errors', () => {
    expect(positionOf("val('$.a') = ")).toBe(14)
    expect(positionOf("val('$.a') == 'x'")).toBe(13)
    expect(positionOf("val('$.a') = 'x' AND")).toBe(21)
    expect(positionOf("val('a') = 'x'")).toBe(5)
    expect(positionOf("CAST(val('$.n') AS NUMBER) = 'ten'")).toBe(30)
    expect(positionOf("CAST(val('$.n') AS INTEGER) = 1")).toBe(20)
    expect(positionOf("CAST(val('$.n') AS NUMBER) LIKE 'x'")).toBe(28)
    expect(positionOf("CAST(val('$.d') AS TIMESTAMP) > 'yesterday-ish'")).toBe(33)
    expect(positionOf("val('$.a') = 'open")).toBe(14)
    expect(positionOf("(val('$.a') = 'x'")).toBe(18)
    expect(positionOf('')).toBe(1)
  })

  it('answers INVALID_ARGUMENT naming the request field and the position', () => {
    expect(() => metadataFilter("val('$.a') = = 'x'", 'spaceKeys.0.filter', 'metadata')).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        details: [{ field: 'spaceKeys.0.filter', description: expect.stringContaining('at position 14') }],
      }),
    )
  })
})

describe('metadata filter: compiled SQL', () => {
  it('puts paths and values in parameters, never in the SQL text', () => {
    const compiled = compileFilter(
      parseFilterText("val('$.author.name') = 'Ada' AND CAST(val('$.n') AS NUMBER) IN (1, 2)"),
      'm.metadata',
    )
    expect(compiled.strings).toHaveLength(compiled.values.length + 1)
    expect(compiled.values).toEqual([['author', 'name'], '"Ada"', ['author', 'name'], '"Ada"', ['n'], ['1', '2']])
    const text = compiled.strings.join('$?')
    expect(text).not.toMatch(/Ada|author/)
    expect(text).toContain('m.metadata #> $?::text[]')
    expect(text).toContain('memsvc_filter_number(')
  })

  it('flattens long AND chains into one level', () => {
    const filter = Array.from({ length: 300 }, (_, i) => `val('$.k${i}') = ${i}`).join(' AND ')
    expect(sqlTextOf(filter).match(/\(/g)!.length).toBeLessThan(300 * 6)
    expect(sqlTextOf(filter).startsWith('(coalesce(')).toBe(true)
  })
})

describe('metadata filter: hostile input is an error or a plain comparison, never SQL', () => {
  const plainComparisons = [
    "val('$.a') = 'x''; drop table memories; --'",
    "val('$.a') = '/* comment */ or 1=1'",
    "val('$.a') = 'x'' or ''1''=''1'",
    "val('$.a') = '1); select pg_sleep(10); --'",
    "val('$.a') LIKE '%'' OR true --'",
    "val('$.a') IN ('a'')); drop table spaces; --', 'pg_sleep(5)')",
  ]
  it.each(plainComparisons)('%s compiles to fixed SQL with the text as a value', (filter) => {
    const compiled = compileFilter(parseFilterText(filter), 'metadata')
    const text = compiled.strings.join('$?')
    expect(text).not.toMatch(/drop|pg_sleep|--|\/\*|;|1=1|or true/i)
    expect(JSON.stringify(compiled.values)).toMatch(/drop|pg_sleep|comment|1|true/)
  })

  const errors: Array<[string, string]> = [
    ["val('$.a') = 'x'; drop table memories", 'unexpected character ";"'],
    ["val('$.a') = 'x' -- comment", 'unexpected character "-"'],
    ["val('$.a') = 'x' /* c */", 'unexpected character "/"'],
    ['pg_sleep(10) = 1', "expected val('$.path')"],
    ["val('$.a') = pg_sleep(10)", 'expected a value'],
    ["val('$.a''); drop table x; --') = 1", 'is not of the form'],
    ["val('$.a; select 1') = 1", 'is not of the form'],
    ["val('$.a') = 'x' OR 1 = 1", "expected val('$.path')"],
    ["CAST(val('$.a') AS NUMBER); select 1", 'unexpected character ";"'],
    ["CAST(val('$.a') AS NUMBER) select 1", 'expected a comparison'],
    ["val('$.a') = 1e999", 'out of range'],
  ]
  it.each(errors)('%s is an error', (filter, reason) => {
    expect(() => parseFilterText(filter)).toThrow(reason)
  })

  it('refuses 10,000 levels of parentheses or NOT at the depth limit, without exhausting the stack', () => {
    const deep = `${'('.repeat(10_000)}val('$.a') = 1${')'.repeat(10_000)}`
    expect(() => parseFilterText(deep.slice(0, MAX_FILTER_LENGTH))).toThrow(`nest at most ${MAX_FILTER_DEPTH} deep`)
    expect(() => metadataFilter(deep, 'filter', 'metadata')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    )
    expect(positionOf(`${'NOT '.repeat(2_000)}val('$.a') = 1`)).toBe(MAX_FILTER_DEPTH * 4 + 1)
    expect(
      parseFilterText(`${'('.repeat(MAX_FILTER_DEPTH)}val('$.a') = 1${')'.repeat(MAX_FILTER_DEPTH)}`),
    ).toMatchObject({ kind: 'compare' })
  })

  it('refuses a 1 MB filter before reading it', () => {
    const huge = `val('$.a') = '${'x'.repeat(1024 * 1024)}'`
    expect(() => parseFilterText(huge)).toThrow(`at most ${MAX_FILTER_LENGTH} characters`)
  })
})
