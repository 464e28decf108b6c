import type { ChunkingConfig, RecursiveChunking, TextChunk } from './chunking-config.js'
import { type Pacer, runAtOnce, runInTurns, SLICE_MS, type SliceRunner } from './event-loop-turns.js'
import { recursiveSpans } from './recursive-spans.js'
import { sentenceSpans } from './sentence-spans.js'
import { isLiteralPattern } from './separator-regex.js'
import { literalSearch, regexSearch } from './separator-search.js'
import { type SpanSink, trimmed } from './text-spans.js'
import { runWithinTimeBudget, TimeBudgetExceeded } from './time-budget.js'

/**
 * The chunkers, in two forms over the same steps: chunkText runs them in one go, and
 * chunkTextInTurns gives the event loop a turn every SLICE_MS (ingestion uses it: chunking
 * the largest memory is seconds of work otherwise done between two requests). Chunks are
 * trimmed of surrounding whitespace; chunks left empty are dropped.
 */

/**
 * Chunks one memory may make. Default chunking makes 9,363 of the largest memory (4 MiB of
 * one-byte characters); chunkSize 1 would make four million, each embedded and stored.
 */
export const MAX_CHUNKS_PER_MEMORY = 50_000
/**
 * Characters all of one memory's chunks may hold together: four times the largest memory.
 * The overlap repeats text in every chunk, so chunkSize 100,000 with chunkOverlap 99,999
 * would make a chunk of 100,000 characters at every character, 400 billion in all.
 */
export const MAX_CHUNKED_LENGTH = 16 * 1024 * 1024

/**
 * How long regex separators may work on one memory in all. RE2 keeps each search linear, but
 * a pattern such as `x.*y|x` reads to the end of the text at every match, so finding all of
 * them still grows with the square of the length: the budget bounds that. It leaves room for
 * the chunking itself on the largest memory.
 */
export const REGEX_CHUNKING_BUDGET_MS = 3_000
/**
 * How long one search for a regex separator may hold the event loop (chunking pauses between
 * searches, not inside one). A search that finds nothing reads the rest of the text: over the
 * largest memory that takes 200 ms for `[.!?]\s+` and 490 ms for `(?i)chapter \d+`, while
 * `(?i)c{40}d` takes 6.5 s; the limit keeps such a pause within half the second /livez has.
 */
export const REGEX_SEARCH_LIMIT_MS = 500

export class ChunkingTooSlow extends Error {
  override name = 'ChunkingTooSlow'
}

export class ChunkingTooLarge extends Error {
  override name = 'ChunkingTooLarge'
}

const USE_FEWER_CHUNKS = 'use a larger chunkSize, a smaller chunkOverlap or a smaller memory'

/** Receives the chunkers' spans: trims them, drops the empty ones, and stops a chunking that makes too much. */
class ChunkCollector {
  readonly chunks: TextChunk[] = []
  #spans = 0
  #length = 0

  constructor(private readonly content: string) {}

  readonly add: SpanSink = (start, end) => {
    // Counted before trimming: trimming reads each span, so the bound is on the work as well.
    if (++this.#spans > MAX_CHUNKS_PER_MEMORY)
      throw new ChunkingTooLarge(`this content makes more than ${MAX_CHUNKS_PER_MEMORY} chunks; ${USE_FEWER_CHUNKS}`)
    this.#length += end - start
    if (this.#length > MAX_CHUNKED_LENGTH)
      throw new ChunkingTooLarge(
        `the chunks of this content hold more than ${MAX_CHUNKED_LENGTH} characters in all ` +
          `(the overlap repeats text in every chunk); ${USE_FEWER_CHUNKS}`,
      )
    const inner = trimmed(this.content, start, end)
    if (inner.end > inner.start)
      this.chunks.push({
        text: this.content.slice(inner.start, inner.end),
        startOffset: inner.start,
        endOffset: inner.end,
      })
  }
}

type ChunkingWork = (pacer: Pacer) => Generator<void, TextChunk[], void>

function chunkingWork(content: string, config: ChunkingConfig): ChunkingWork {
  return function* (pacer) {
    const collector = new ChunkCollector(content)
    if ('recursive' in config) {
      const { separators, separatorIsRegex } = config.recursive
      // Regex patterns are compiled here, on the first step, so within the time budget that
      // step runs in: a compilation stopped halfway leaves nothing behind that another memory would use.
      const searches = separators.map((separator) =>
        separatorIsRegex ? regexSearch(content, separator) : literalSearch(content, separator),
      )
      yield* recursiveSpans(content, searches, config.recursive, pacer, collector.add)
    } else if ('sentence' in config) {
      yield* sentenceSpans(content, config.sentence, pacer, collector.add)
    } else {
      collector.add(0, content.length)
    }
    return collector.chunks
  }
}

const usesRegex = (config: ChunkingConfig): config is { recursive: RecursiveChunking } =>
  'recursive' in config &&
  config.recursive.separatorIsRegex &&
  !config.recursive.separators.every((separator) => isLiteralPattern(separator))

const tooSlowInAll = () =>
  new ChunkingTooSlow(
    `the regex separators took longer than ${REGEX_CHUNKING_BUDGET_MS} ms on this content; ` +
      'use simpler patterns, literal separators or a smaller memory',
  )

/** Chunks the content in one go, holding the event loop until done. */
export function chunkText(content: string, config: ChunkingConfig): TextChunk[] {
  const work = chunkingWork(content, config)
  if (!usesRegex(config)) return runAtOnce(work)
  try {
    return runWithinTimeBudget(REGEX_CHUNKING_BUDGET_MS, () => runAtOnce(work))
  } catch (error) {
    if (error instanceof TimeBudgetExceeded) throw tooSlowInAll()
    throw error
  }
}

/**
 * Each slice within what is left of the regex budget, and within one search's limit past the
 * slice's own length: a slice runs on until a search ends, so only a search can make it longer.
 */
function regexBudgetSlices(): SliceRunner {
  let spentMs = 0
  return (next) => {
    const leftMs = REGEX_CHUNKING_BUDGET_MS - spentMs
    const searchLimited = SLICE_MS + REGEX_SEARCH_LIMIT_MS < leftMs
    const started = performance.now()
    try {
      return runWithinTimeBudget(
        Math.max(1, Math.ceil(searchLimited ? SLICE_MS + REGEX_SEARCH_LIMIT_MS : leftMs)),
        next,
      )
    } catch (error) {
      if (!(error instanceof TimeBudgetExceeded)) throw error
      if (!searchLimited) throw tooSlowInAll()
      throw new ChunkingTooSlow(
        `one search for a regex separator took longer than ${REGEX_SEARCH_LIMIT_MS} ms on this content; ` +
          'use simpler patterns, literal separators or a smaller memory',
      )
    } finally {
      spentMs += performance.now() - started
    }
  }
}

/** Chunks the content a slice at a time, giving the event loop a turn between slices. */
export function chunkTextInTurns(content: string, config: ChunkingConfig): Promise<TextChunk[]> {
  const work = chunkingWork(content, config)
  return usesRegex(config) ? runInTurns(work, regexBudgetSlices()) : runInTurns(work)
}
