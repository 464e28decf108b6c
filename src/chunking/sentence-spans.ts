import type { SentenceChunking } from './chunking-config.js'
import type { Pacer } from './event-loop-turns.js'
import { type Span, type SpanSink, trimmed } from './text-spans.js'

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' })

const trimmedLength = (content: string, span: Span) => {
  const inner = trimmed(content, span.start, span.end)
  return inner.end - inner.start
}

/**
 * Whole sentences packed into chunks of at most maxChunkSize; a sentence longer than that
 * is cut at the size. A chunk shorter than minChunkSize (a stray "Yes." between long
 * sentences) joins the chunk before it, or the one after if it is the first, so such a
 * chunk may reach maxChunkSize + minChunkSize. Chunks go to `emit` as soon as no later
 * sentence can join them; the generator pauses whenever the pacer says so.
 */
export function* sentenceSpans(
  content: string,
  config: SentenceChunking,
  pacer: Pacer,
  emit: SpanSink,
): Generator<void, void, void> {
  // A chunk that a following small chunk may still join.
  let previous: Span | undefined
  // Small chunks at the very start, waiting for the chunk after them to take them in.
  let carried: Span | undefined

  function place(packed: Span) {
    if (trimmedLength(content, packed) === 0) return
    const chunk = carried ? { start: carried.start, end: packed.end } : { ...packed }
    carried = undefined
    const small = trimmedLength(content, chunk) < config.minChunkSize
    if (small && previous) previous.end = chunk.end
    else if (small) carried = chunk
    else {
      if (previous) emit(previous.start, previous.end)
      previous = chunk
    }
  }

  let packing: Span | undefined
  for (const segment of sentenceSegmenter.segment(content)) {
    const sentenceEnd = segment.index + segment.segment.length
    for (let start = segment.index; start < sentenceEnd; start += config.maxChunkSize) {
      const end = Math.min(start + config.maxChunkSize, sentenceEnd)
      if (packing && end - packing.start <= config.maxChunkSize) {
        packing.end = end
      } else {
        if (packing) place(packing)
        packing = { start, end }
      }
      if (pacer.due()) yield
    }
  }
  if (packing) place(packing)
  // The last chunk, or small chunks with nothing after them to join: they stand alone.
  const last = previous ?? carried
  if (last) emit(last.start, last.end)
}
