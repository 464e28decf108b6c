import { describe, expect, it } from 'vitest'
import { ChunkingTooSlow, chunkText } from '../../src/chunking/chunk-text.js'
import { DEFAULT_CHUNKING, type RecursiveChunking, type TextChunk } from '../../src/chunking/chunking-config.js'
import {
  firstSeparatorRegexProblem,
  MAX_SEPARATOR_PROGRAM_SIZE,
  separatorRegexProblem,
} from '../../src/chunking/separator-regex.js'
import { runWithinTimeBudget, TimeBudgetExceeded } from '../../src/chunking/time-budget.js'

/**
 * Separators are user input that runs on the event loop while a memory is ingested. Each
 * case here held the loop for seconds, minutes or for ever before chunking ran regexes on
 * RE2 and read the text once per separator; now each answers at once, so a regression shows
 * as this file timing out.
 */

const recursive = (overrides: Partial<RecursiveChunking>) => ({
  recursive: { ...(DEFAULT_CHUNKING as { recursive: RecursiveChunking }).recursive, ...overrides },
})
const regexSeparators = (separators: string[], overrides: Partial<RecursiveChunking> = {}) =>
  recursive({ chunkSize: 10, chunkOverlap: 0, separators, separatorIsRegex: true, ...overrides })
const offsets = (chunks: TextChunk[]) => chunks.map((chunk) => [chunk.startOffset, chunk.endOffset])

function expectFaithful(content: string, chunks: TextChunk[]) {
  for (const chunk of chunks) expect(content.slice(chunk.startOffset, chunk.endOffset)).toBe(chunk.text)
}

describe('regex separators run in linear time', () => {
  it('(a+)+$ over 10,000 a and a b finds no match and cuts the text at chunkSize', () => {
    // JavaScript's engine needed 21.6 s for 31 a; every further a doubles that.
    const content = `${'a'.repeat(10_000)}b`
    const chunks = chunkText(content, regexSeparators(['(a+)+$']))
    expect(chunks).toHaveLength(1_001)
    expect(chunks.at(-1)).toEqual({ text: 'b', startOffset: 10_000, endOffset: 10_001 })
    expectFaithful(content, chunks)
  })

  it('(a+)+$ that does match splits where the run of a starts', () => {
    const content = `b${'a'.repeat(10_000)}`
    const chunks = chunkText(content, regexSeparators(['(a+)+$'], { keepStrategy: 'DISCARD' }))
    expect(chunks).toEqual([{ text: 'b', startOffset: 0, endOffset: 1 }])
  })

  it('a regex separator gives the offsets JavaScript gave: \\b sees the text around each piece', () => {
    const content = 'alpha beta. gamma delta. epsilon zeta'
    const chunks = chunkText(content, regexSeparators(['\\.\\s+', '\\b'], { chunkSize: 12 }))
    expect(offsets(chunks)).toEqual([
      [0, 11],
      [12, 23],
      [23, 24],
      [25, 37],
    ])
    expectFaithful(content, chunks)
  })
})

describe('separators whose matches cost more than linear time are stopped', () => {
  it('x.*y|x, which reads to the end of the text at every match, fails the memory instead of holding the loop', () => {
    // About 10^10 steps: minutes for any engine that finds every match, so the budget always ends it.
    const content = 'x'.repeat(200_000)
    expect(() => chunkText(content, regexSeparators(['x.*y|x'], { chunkSize: 1 }))).toThrow(ChunkingTooSlow)
  })

  it('a separator found only at the end of the text is searched for once, not once per piece', () => {
    // 20,000 pieces longer than chunkSize, each asking where [#%] is: read to the end each time, it ran out of budget.
    const content = `${'ab;'.repeat(20_000)}#`
    const chunks = chunkText(content, regexSeparators([';', '[#%]'], { chunkSize: 2 }))
    expect(chunks).toHaveLength(40_001)
    expect(chunks.slice(0, 2)).toEqual([
      { text: 'ab', startOffset: 0, endOffset: 2 },
      { text: ';', startOffset: 2, endOffset: 3 },
    ])
  })

  it('the default "" separator steps over surrogate pairs instead of matching the same place for ever', () => {
    const content = '😀'.repeat(300)
    const chunks = chunkText(content, DEFAULT_CHUNKING)
    expect(offsets(chunks)).toEqual([
      [0, 512],
      [448, 600],
    ])
    expectFaithful(content, chunks)
  })
})

describe('patterns RE2 cannot run are refused with the reason', () => {
  it.each([
    ['\\n(?=## )', /lookahead/],
    ['(?<!\\\\)\\n', /lookbehind/],
    ['(.)\\1', /backreferences/],
    ['(?<name>a)\\k<name>', /backreferences/],
    ['(', /not an RE2 regular expression \(missing closing \)/],
    ['.{1000}', new RegExp(`at most ${MAX_SEPARATOR_PROGRAM_SIZE}`)],
  ])('%s is refused: %s', (pattern, reason) => {
    expect(separatorRegexProblem(pattern)).toMatch(reason)
  })

  it.each(['(a+)+$', '\\n#{1,6} ', '(?m)^## ', '[.!?]\\s+', '\\p{Lu}', '(?<title>#+) ', ''])(
    '%s is accepted',
    (pattern) => {
      expect(separatorRegexProblem(pattern)).toBeUndefined()
    },
  )

  it('the first refused separator of a setting is named by its index', () => {
    expect(firstSeparatorRegexProblem(['\\n\\n', ' ', '(?=x)', '(?!y)'])).toEqual({
      index: 2,
      problem: expect.stringMatching(/lookahead/),
    })
    expect(firstSeparatorRegexProblem(['\\n\\n', ' ', ''])).toBeUndefined()
  })

  it('a pattern that would compile to thousands of instructions is refused before it is compiled', () => {
    expect(separatorRegexProblem('.{1000}'.repeat(12))).toMatch(/too complex: it compiles to about 12000 instructions/)
  })

  it('a stored pattern RE2 refuses fails the chunking with the reason', () => {
    expect(() => chunkText('a\n## b', regexSeparators(['\\n(?=## )'], { chunkSize: 1 }))).toThrow(/lookahead/)
  })
})

describe('a time budget', () => {
  it('stops a task that never yields and lets the next task run', () => {
    expect(() =>
      runWithinTimeBudget(50, () => {
        for (;;);
      }),
    ).toThrow(TimeBudgetExceeded)
    expect(runWithinTimeBudget(50, () => 'done')).toBe('done')
  })

  it("passes the task's own error through", () => {
    expect(() =>
      runWithinTimeBudget(50, () => {
        throw new RangeError('from the task')
      }),
    ).toThrow(RangeError)
  })
})
