import type { ChunkingConfig, RecursiveChunking, SentenceChunking, TextChunk } from './chunking-config.js'

/**
 * Pure chunkers. Each works on spans [start, end) of the original text, never on copies
 * joined back together, so every chunk's text is exactly content.slice(start, end) and
 * its offsets point into the memory as stored. Chunks are trimmed of surrounding
 * whitespace; chunks left empty are dropped.
 */

interface Span {
  start: number
  end: number
}

const length = (span: Span) => span.end - span.start

function trimmed(content: string, span: Span): Span {
  let { start, end } = span
  while (start < end && /\s/.test(content[start]!)) start++
  while (end > start && /\s/.test(content[end - 1]!)) end--
  return { start, end }
}

function toChunks(content: string, spans: Span[]): TextChunk[] {
  return spans
    .map((span) => trimmed(content, span))
    .filter((span) => length(span) > 0)
    .map((span) => ({ text: content.slice(span.start, span.end), startOffset: span.start, endOffset: span.end }))
}

export function chunkText(content: string, config: ChunkingConfig): TextChunk[] {
  if ('recursive' in config) return recursiveChunks(content, config.recursive)
  if ('sentence' in config) return sentenceChunks(content, config.sentence)
  return toChunks(content, [{ start: 0, end: content.length }])
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Where `separator` occurs inside `span`, as spans of the original text. */
function separatorMatches(content: string, span: Span, separator: RegExp): Span[] {
  const matches: Span[] = []
  separator.lastIndex = span.start
  for (let match = separator.exec(content); match && match.index < span.end; match = separator.exec(content)) {
    const end = match.index + match[0].length
    if (match[0].length === 0) {
      // An empty match (the "" separator, or a regex such as \b) splits between characters.
      if (match.index > span.start && match.index < span.end) matches.push({ start: match.index, end: match.index })
      separator.lastIndex = match.index + 1
      continue
    }
    if (end > span.end) break
    matches.push({ start: match.index, end })
  }
  return matches
}

/** Cuts `span` at each separator match, giving the separator to the piece the strategy says. */
function splitSpan(span: Span, matches: Span[], keep: RecursiveChunking['keepStrategy']): Span[] {
  const pieces: Span[] = []
  let pieceStart = span.start
  for (const match of matches) {
    if (keep === 'KEEP_END') {
      pieces.push({ start: pieceStart, end: match.end })
      pieceStart = match.end
    } else if (keep === 'KEEP_START') {
      pieces.push({ start: pieceStart, end: match.start })
      pieceStart = match.start
    } else {
      pieces.push({ start: pieceStart, end: match.start })
      pieceStart = match.end
    }
  }
  pieces.push({ start: pieceStart, end: span.end })
  return pieces.filter((piece) => length(piece) > 0)
}

/**
 * Joins consecutive pieces into chunks of at most chunkSize; each new chunk starts with
 * the last pieces of the one before, up to chunkOverlap, so context carries across.
 */
function mergePieces(pieces: Span[], config: RecursiveChunking): Span[] {
  const chunks: Span[] = []
  let window: Span[] = []
  const windowLength = () => (window.length === 0 ? 0 : window[window.length - 1]!.end - window[0]!.start)
  for (const piece of pieces) {
    const withPiece = window.length === 0 ? length(piece) : piece.end - window[0]!.start
    if (window.length > 0 && withPiece > config.chunkSize) {
      chunks.push({ start: window[0]!.start, end: window[window.length - 1]!.end })
      // Keep a tail no longer than the overlap, and short enough for the next piece to fit.
      while (
        window.length > 0 &&
        (windowLength() > config.chunkOverlap || piece.end - window[0]!.start > config.chunkSize)
      )
        window.shift()
    }
    window.push(piece)
  }
  if (window.length > 0) chunks.push({ start: window[0]!.start, end: window[window.length - 1]!.end })
  return chunks
}

function recursiveSpans(content: string, span: Span, separators: RegExp[], config: RecursiveChunking): Span[] {
  if (length(span) <= config.chunkSize) return [span]
  const index = separators.findIndex((separator) => separatorMatches(content, span, separator).length > 0)
  if (index === -1) {
    // No separator applies: cut at the size, so no chunk is ever longer than asked.
    const cuts: Span[] = []
    for (let start = span.start; start < span.end; start += config.chunkSize)
      cuts.push({ start, end: Math.min(start + config.chunkSize, span.end) })
    return cuts
  }
  const rest = separators.slice(index + 1)
  const pieces = splitSpan(span, separatorMatches(content, span, separators[index]!), config.keepStrategy)
  const fitting: Span[] = []
  const chunks: Span[] = []
  const flush = () => {
    chunks.push(...mergePieces(fitting, config))
    fitting.length = 0
  }
  for (const piece of pieces) {
    if (length(piece) <= config.chunkSize) {
      fitting.push(piece)
    } else {
      flush()
      chunks.push(...recursiveSpans(content, piece, rest, config))
    }
  }
  flush()
  return chunks
}

export function recursiveChunks(content: string, config: RecursiveChunking): TextChunk[] {
  const separators = config.separators.map(
    (separator) => new RegExp(config.separatorIsRegex ? separator : escapeRegex(separator), 'gu'),
  )
  return toChunks(content, recursiveSpans(content, { start: 0, end: content.length }, separators, config))
}

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' })

/**
 * Whole sentences packed into chunks of at most maxChunkSize; a sentence longer than that
 * is cut at the size. A chunk shorter than minChunkSize (a stray "Yes." between long
 * sentences) joins the chunk before it, or the one after if it is the first, so such a
 * chunk may reach maxChunkSize + minChunkSize.
 */
export function sentenceChunks(content: string, config: SentenceChunking): TextChunk[] {
  const sentences: Span[] = []
  for (const segment of sentenceSegmenter.segment(content)) {
    const span = { start: segment.index, end: segment.index + segment.segment.length }
    for (let start = span.start; start < span.end; start += config.maxChunkSize)
      sentences.push({ start, end: Math.min(start + config.maxChunkSize, span.end) })
  }
  const packed: Span[] = []
  for (const sentence of sentences) {
    const current = packed[packed.length - 1]
    if (current && sentence.end - current.start <= config.maxChunkSize) current.end = sentence.end
    else packed.push({ ...sentence })
  }
  const chunks = packed.filter((span) => length(trimmed(content, span)) > 0)
  const merged: Span[] = []
  for (const [index, chunk] of chunks.entries()) {
    const small = length(trimmed(content, chunk)) < config.minChunkSize
    const previous = merged[merged.length - 1]
    if (small && previous) previous.end = chunk.end
    else if (small && index + 1 < chunks.length) chunks[index + 1]!.start = chunk.start
    else merged.push({ ...chunk })
  }
  return toChunks(content, merged)
}
