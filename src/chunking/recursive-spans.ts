import type { RecursiveChunking } from './chunking-config.js'
import type { Pacer } from './event-loop-turns.js'
import type { SeparatorSearch } from './separator-search.js'
import { SpanMerger } from './span-merger.js'
import { afterCharacter, type Span, type SpanSink } from './text-spans.js'

/**
 * The separator's matches inside [start, end), left to right, one at a time. An empty match
 * (the "" separator, or a regex such as \b) splits between characters, never at the start;
 * a match reaching past the end ends the search.
 */
class MatchCursor {
  #from: number
  #done = false

  constructor(
    private readonly content: string,
    private readonly search: SeparatorSearch,
    private readonly start: number,
    private readonly end: number,
  ) {
    this.#from = start
  }

  next(): Span | undefined {
    while (!this.#done) {
      const match = this.#from > this.content.length ? undefined : this.search.next(this.#from)
      if (!match || match.start >= this.end || match.end > this.end) break
      if (match.end === match.start) {
        this.#from = afterCharacter(this.content, match.start)
        if (match.start > this.start) return match
      } else {
        this.#from = match.end
        return match
      }
    }
    this.#done = true
    return undefined
  }
}

/**
 * Recursive chunking: a span longer than chunkSize is cut at the first separator that occurs
 * in it; the pieces that fit are merged into chunks (SpanMerger), and each piece still too
 * long is cut the same way with the separators after that one. A span no separator applies
 * to is cut at chunkSize, so no chunk is ever longer than asked. Spans go to `emit` in order
 * as they are made; the generator pauses whenever the pacer says so.
 */
export function* recursiveSpans(
  content: string,
  separators: SeparatorSearch[],
  config: RecursiveChunking,
  pacer: Pacer,
  emit: SpanSink,
): Generator<void, void, void> {
  const { chunkSize, chunkOverlap, keepStrategy } = config

  function* split(start: number, end: number, firstSeparator: number): Generator<void, void, void> {
    if (end - start <= chunkSize) {
      emit(start, end)
      return
    }
    for (let index = firstSeparator; index < separators.length; index++) {
      const search = separators[index]!
      const matches = new MatchCursor(content, search, start, end)
      let match = matches.next()
      if (pacer.due(search.weight)) yield
      if (!match) continue
      const merger = new SpanMerger(chunkSize, chunkOverlap, emit)
      // A piece that fits joins the merger; one too long ends the merger's run and is split with the separators after.
      const splitFurther = function* (pieceStart: number, pieceEnd: number): Generator<void, void, void> {
        merger.flush()
        yield* split(pieceStart, pieceEnd, index + 1)
      }
      if (search.betweenEveryCharacter) {
        // Every keep strategy gives the same pieces here: one character each, read off the text
        // instead of found one empty match at a time.
        for (let at = start; at < end; ) {
          const next = Math.min(afterCharacter(content, at), end)
          if (next - at <= chunkSize) merger.add(at, next)
          else yield* splitFurther(at, next)
          at = next
          if (pacer.due()) yield
        }
      } else {
        let pieceStart = start
        for (; match; match = matches.next()) {
          const pieceEnd = keepStrategy === 'KEEP_END' ? match.end : match.start
          if (pieceEnd - pieceStart > chunkSize) yield* splitFurther(pieceStart, pieceEnd)
          else if (pieceEnd > pieceStart) merger.add(pieceStart, pieceEnd)
          pieceStart = keepStrategy === 'KEEP_START' ? match.start : match.end
          if (pacer.due(search.weight)) yield
        }
        if (end - pieceStart > chunkSize) yield* splitFurther(pieceStart, end)
        else if (end > pieceStart) merger.add(pieceStart, end)
      }
      merger.flush()
      return
    }
    for (let cut = start; cut < end; cut += chunkSize) {
      emit(cut, Math.min(cut + chunkSize, end))
      if (pacer.due()) yield
    }
  }

  yield* split(0, content.length, 0)
}
