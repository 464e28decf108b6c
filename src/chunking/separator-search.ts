import { STEPS_PER_CLOCK_READ } from './event-loop-turns.js'
import { compileSeparatorRegex, isLiteralPattern } from './separator-regex.js'
import type { Span } from './text-spans.js'

/**
 * Where one separator occurs: `next(from)` is its first match starting at or after `from`.
 * Spans are visited left to right and a span never asks again about a separator it split
 * on, so for each separator `from` only grows: the answer found past the end of one span
 * is kept for the next, and the text is read once per separator rather than once per span.
 */
export class SeparatorSearch {
  #askedFrom = -1
  #answer: Span | undefined

  constructor(
    private readonly find: (from: number) => Span | undefined,
    /** What one search weighs for the Pacer: a regex search may read far, so the clock is read after each. */
    readonly weight: number,
    /** The "" separator: it matches between every two characters, so its pieces are the characters themselves. */
    readonly betweenEveryCharacter = false,
  ) {}

  next(from: number): Span | undefined {
    // No match starts in [askedFrom, answer.start), so any `from` in that range gets the same answer.
    const known = this.#askedFrom !== -1 && from >= this.#askedFrom && (!this.#answer || from <= this.#answer.start)
    if (!known) {
      this.#askedFrom = from
      this.#answer = this.find(from)
    }
    return this.#answer
  }
}

export function literalSearch(content: string, literal: string): SeparatorSearch {
  return new SeparatorSearch(
    (from) => {
      const start = content.indexOf(literal, from)
      return start === -1 ? undefined : { start, end: start + literal.length }
    },
    1,
    literal === '',
  )
}

/** A regex separator's search; the pattern is compiled here, so do this inside the time budget. */
export function regexSearch(content: string, pattern: string): SeparatorSearch {
  // Literal patterns (the defaults "\n\n", " " and "" among them) skip the regex engine's cost per match.
  if (isLiteralPattern(pattern)) return literalSearch(content, pattern)
  const matcher = compileSeparatorRegex(pattern).matcher(content)
  return new SeparatorSearch(
    (from) => (matcher.find(from) ? { start: matcher.start(), end: matcher.end() } : undefined),
    STEPS_PER_CLOCK_READ,
  )
}
