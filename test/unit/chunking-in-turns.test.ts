import { describe, expect, it } from 'vitest'
import {
  ChunkingTooLarge,
  ChunkingTooSlow,
  chunkText,
  chunkTextInTurns,
  MAX_CHUNKED_LENGTH,
  MAX_CHUNKS_PER_MEMORY,
  REGEX_SEARCH_LIMIT_MS,
} from '../../src/chunking/chunk-text.js'
import { type ChunkingConfig, DEFAULT_CHUNKING, type RecursiveChunking } from '../../src/chunking/chunking-config.js'

/**
 * Ingestion chunks a memory in turns with the event loop (chunkTextInTurns): the largest
 * memory, 4 MiB without whitespace, is cut between every character by default, and chunking
 * it in one go held the loop for 2.3 s and took 550 MiB of spans.
 */

const MIB = 1024 * 1024
const LARGEST_WITHOUT_WHITESPACE = 'c'.repeat(4 * MIB)
const LARGEST_OF_EMOJI = '😀'.repeat(MIB)

const recursive = (overrides: Partial<RecursiveChunking>): ChunkingConfig => ({
  recursive: { ...(DEFAULT_CHUNKING as { recursive: RecursiveChunking }).recursive, ...overrides },
})

const SAMPLES: Array<[string, string, ChunkingConfig]> = [
  ['4 MiB without whitespace, default chunking', LARGEST_WITHOUT_WHITESPACE, DEFAULT_CHUNKING],
  ['4 MiB of emoji, default chunking', LARGEST_OF_EMOJI, DEFAULT_CHUNKING],
  [
    'words and paragraphs, regex separators',
    'Intro.\n\n## One\nalpha beta gamma. delta!\n\n## Two\n'.repeat(2_000),
    recursive({
      chunkSize: 100,
      chunkOverlap: 20,
      separators: ['\\n## ', '[.!?]\\s+', '\\s+'],
      separatorIsRegex: true,
    }),
  ],
  [
    'sentences',
    'A short one. Then a longer sentence follows it here! Yes. '.repeat(5_000),
    { sentence: { maxChunkSize: 120, minChunkSize: 10 } },
  ],
]

describe('chunking in turns', () => {
  it.each(SAMPLES)('%s: gives exactly the chunks chunking in one go gives', async (_, content, config) => {
    expect(await chunkTextInTurns(content, config)).toEqual(chunkText(content, config))
  })

  it('lets a timer set before it run before the largest memory is chunked', async () => {
    const order: string[] = []
    setTimeout(() => order.push('timer'), 0)
    await chunkTextInTurns(LARGEST_WITHOUT_WHITESPACE, DEFAULT_CHUNKING).then(() => order.push('chunked'))
    expect(order).toEqual(['timer', 'chunked'])
  })

  it('lets two memories chunked at once take turns: the smaller, started second, ends first', async () => {
    const ended: string[] = []
    await Promise.all([
      chunkTextInTurns(LARGEST_WITHOUT_WHITESPACE, DEFAULT_CHUNKING).then(() => ended.push('4 MiB')),
      chunkTextInTurns(LARGEST_OF_EMOJI.slice(0, MIB), DEFAULT_CHUNKING).then(() => ended.push('1 MiB')),
    ])
    expect(ended).toEqual(['1 MiB', '4 MiB'])
  })
})

describe('chunks of many pieces', () => {
  it('chunks of 10,000 characters cut between every character each start 100 before the last ended', () => {
    // The merger keeps the pieces a chunk may repeat and drops the rest in bulk, past 4,096 of them.
    const chunks = chunkText('c'.repeat(20_000), recursive({ chunkSize: 10_000, chunkOverlap: 100 }))
    expect(chunks.map((chunk) => [chunk.startOffset, chunk.endOffset])).toEqual([
      [0, 10_000],
      [9_900, 19_900],
      [19_800, 20_000],
    ])
  })
})

describe('what one memory may be chunked into', () => {
  it(`chunkSize 1 over the largest memory fails: more than ${MAX_CHUNKS_PER_MEMORY} chunks`, async () => {
    await expect(
      chunkTextInTurns(LARGEST_WITHOUT_WHITESPACE, recursive({ chunkSize: 1, chunkOverlap: 0 })),
    ).rejects.toThrow(
      new ChunkingTooLarge(
        `this content makes more than ${MAX_CHUNKS_PER_MEMORY} chunks; use a larger chunkSize, a smaller chunkOverlap or a smaller memory`,
      ),
    )
  })

  it(`an overlap of all but one character fails: the chunks would hold more than ${MAX_CHUNKED_LENGTH} characters`, async () => {
    // Before, a chunk of 100,000 characters at every character: 312 s, then the stack overflowed.
    await expect(
      chunkTextInTurns(LARGEST_WITHOUT_WHITESPACE, recursive({ chunkSize: 100_000, chunkOverlap: 99_999 })),
    ).rejects.toThrow(ChunkingTooLarge)
  })

  it('chunkSize 100 over the largest memory is still chunked: 41,944 chunks', async () => {
    const chunks = await chunkTextInTurns(LARGEST_WITHOUT_WHITESPACE, recursive({ chunkSize: 100, chunkOverlap: 0 }))
    expect(chunks).toHaveLength(41_944)
  })

  it(`a regex search that alone would hold the event loop past ${REGEX_SEARCH_LIMIT_MS} ms fails, saying so`, async () => {
    // Case-insensitive, RE2 steps through every case of every c: a single search over 4 MiB took 6.5 s.
    await expect(
      chunkTextInTurns(LARGEST_WITHOUT_WHITESPACE, recursive({ separators: ['(?i)c{40}d'], separatorIsRegex: true })),
    ).rejects.toThrow(
      new ChunkingTooSlow(
        `one search for a regex separator took longer than ${REGEX_SEARCH_LIMIT_MS} ms on this content; use simpler patterns, literal separators or a smaller memory`,
      ),
    )
  })
})
