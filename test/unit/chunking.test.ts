import { describe, expect, it } from 'vitest'
import { chunkText } from '../../src/chunking/chunk-text.js'
import { DEFAULT_CHUNKING, type RecursiveChunking, type TextChunk } from '../../src/chunking/chunking-config.js'

const recursive = (overrides: Partial<RecursiveChunking>) => ({
  recursive: { ...(DEFAULT_CHUNKING as { recursive: RecursiveChunking }).recursive, ...overrides },
})

/** Every chunk is exactly the original text at its offsets. */
function expectFaithful(content: string, chunks: TextChunk[]) {
  for (const chunk of chunks) expect(content.slice(chunk.startOffset, chunk.endOffset)).toBe(chunk.text)
}

const PROSE = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} talks about topic ${i % 7}.`).join(' ')
const PARAGRAPHS = [
  'First paragraph line one.\nLine two of it.',
  'Second paragraph, rather short.',
  `Third ${'word '.repeat(60)}`,
].join('\n\n')

describe('chunking', () => {
  it('none keeps the whole content as one chunk with offsets into it', () => {
    const chunks = chunkText('  hello world \n', { none: {} })
    expect(chunks).toEqual([{ text: 'hello world', startOffset: 2, endOffset: 13 }])
  })

  it('recursive chunks never exceed chunkSize, cover the text in order and point at the original', () => {
    const chunks = chunkText(PARAGRAPHS, recursive({ chunkSize: 60, chunkOverlap: 10 }))
    expect(chunks.length).toBeGreaterThan(3)
    expectFaithful(PARAGRAPHS, chunks)
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(60)
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.startOffset).toBeGreaterThan(chunks[i - 1]!.startOffset)
    // Every non-space character lies in some chunk.
    const covered = new Set(
      chunks.flatMap((chunk) =>
        Array.from({ length: chunk.endOffset - chunk.startOffset }, (_, k) => chunk.startOffset + k),
      ),
    )
    for (let i = 0; i < PARAGRAPHS.length; i++) if (!/\s/.test(PARAGRAPHS[i]!)) expect(covered.has(i)).toBe(true)
  })

  it('recursive prefers the first separator: paragraphs that fit stay whole', () => {
    const chunks = chunkText('alpha beta\n\ngamma delta', recursive({ chunkSize: 12, chunkOverlap: 0 }))
    expect(chunks.map((chunk) => chunk.text)).toEqual(['alpha beta', 'gamma delta'])
  })

  it('recursive overlap repeats the end of one chunk at the start of the next, at most chunkOverlap long', () => {
    const content = 'one two three four five six seven eight nine ten eleven twelve'
    const chunks = chunkText(content, recursive({ chunkSize: 20, chunkOverlap: 10 }))
    expectFaithful(content, chunks)
    for (let i = 1; i < chunks.length; i++) {
      const shared = chunks[i - 1]!.endOffset - chunks[i]!.startOffset
      expect(shared).toBeGreaterThan(0)
      expect(shared).toBeLessThanOrEqual(10)
    }
  })

  it('keepStrategy decides which side of the split keeps the separator', () => {
    const content = 'aaa;bbb;ccc'
    const texts = (keepStrategy: RecursiveChunking['keepStrategy']) =>
      chunkText(content, recursive({ chunkSize: 4, chunkOverlap: 0, separators: [';'], keepStrategy })).map(
        (chunk) => chunk.text,
      )
    expect(texts('KEEP_END')).toEqual(['aaa;', 'bbb;', 'ccc'])
    expect(texts('KEEP_START')).toEqual(['aaa', ';bbb', ';ccc'])
    expect(texts('DISCARD')).toEqual(['aaa', 'bbb', 'ccc'])
  })

  it('a regex separator splits where it matches', () => {
    const content = 'Intro text\n## Part one\nbody one\n## Part two\nbody two'
    const chunks = chunkText(
      content,
      recursive({
        chunkSize: 25,
        chunkOverlap: 0,
        separators: ['\\n#{2} '],
        separatorIsRegex: true,
        keepStrategy: 'KEEP_START',
      }),
    )
    expect(chunks.map((chunk) => chunk.text)).toEqual(['Intro text', '## Part one\nbody one', '## Part two\nbody two'])
  })

  it('text without any separator is cut at chunkSize', () => {
    const content = 'x'.repeat(25)
    const chunks = chunkText(content, recursive({ chunkSize: 10, chunkOverlap: 0, separators: ['\n'] }))
    expect(chunks.map((chunk) => [chunk.startOffset, chunk.endOffset])).toEqual([
      [0, 10],
      [10, 20],
      [20, 25],
    ])
  })

  it('sentence chunking packs whole sentences up to maxChunkSize', () => {
    const chunks = chunkText(PROSE, { sentence: { maxChunkSize: 120, minChunkSize: 0 } })
    expectFaithful(PROSE, chunks)
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(120)
      expect(chunk.text).toMatch(/\.$/)
    }
  })

  it('sentence chunking joins a chunk under minChunkSize to its neighbour', () => {
    const content =
      'This first sentence is fairly long indeed, yes. Yes. And this third sentence is rather long as well.'
    const without = chunkText(content, { sentence: { maxChunkSize: 50, minChunkSize: 0 } })
    const withMin = chunkText(content, { sentence: { maxChunkSize: 50, minChunkSize: 10 } })
    expect(without.some((chunk) => chunk.text === 'Yes.')).toBe(true)
    expect(withMin.some((chunk) => chunk.text === 'Yes.')).toBe(false)
    expect(withMin.length).toBe(without.length - 1)
    expectFaithful(content, withMin)
  })

  it('the default is recursive 512/64 and empty or blank content gives no chunks', () => {
    expect(DEFAULT_CHUNKING).toEqual({
      recursive: expect.objectContaining({ chunkSize: 512, chunkOverlap: 64, keepStrategy: 'KEEP_END' }),
    })
    expect(chunkText('   \n ', DEFAULT_CHUNKING)).toEqual([])
    const long = chunkText(PROSE.repeat(3), DEFAULT_CHUNKING)
    for (const chunk of long) expect(chunk.text.length).toBeLessThanOrEqual(512)
  })
})
