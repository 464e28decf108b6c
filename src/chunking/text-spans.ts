/**
 * Chunkers work on spans [start, end) of the original text, never on copies joined back
 * together, so every chunk's text is exactly content.slice(start, end) and its offsets point
 * into the memory as stored.
 */
export interface Span {
  start: number
  end: number
}

/** Where the chunkers send each span they make, in order. */
export type SpanSink = (start: number, end: number) => void

const WHITESPACE = /\s/

/** The span without the whitespace around it (empty when it is all whitespace). */
export function trimmed(content: string, start: number, end: number): Span {
  while (start < end && WHITESPACE.test(content[start]!)) start++
  while (end > start && WHITESPACE.test(content[end - 1]!)) end--
  return { start, end }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** The index after the character at `index`: a surrogate pair is one character, never cut in two. */
export function afterCharacter(content: string, index: number): number {
  const pair = isHighSurrogate(content.charCodeAt(index)) && isLowSurrogate(content.charCodeAt(index + 1))
  return index + (pair ? 2 : 1)
}
