/**
 * How a memory's content is cut into chunks: exactly one strategy, as GoodMem names them.
 * Sizes and offsets count UTF-16 code units (JavaScript string indices), like the
 * offsets stored with each chunk.
 */
import { DEFAULT_CHUNK_SIZE } from '../validation/limits.js'

export const KEEP_STRATEGIES = ['KEEP_START', 'KEEP_END', 'DISCARD'] as const
export type KeepStrategy = (typeof KEEP_STRATEGIES)[number]

export interface RecursiveChunking {
  chunkSize: number
  chunkOverlap: number
  /** Tried in order: the first that occurs in a piece too long splits it. "" splits between characters. */
  separators: string[]
  /** Where a separator goes once it has split: with the piece after it, the piece before it, or nowhere. */
  keepStrategy: KeepStrategy
  separatorIsRegex: boolean
}

export interface SentenceChunking {
  maxChunkSize: number
  /** A last chunk shorter than this joins the one before it when they fit together. */
  minChunkSize: number
}

export type ChunkingConfig =
  | { none: Record<string, never> }
  | { recursive: RecursiveChunking }
  | { sentence: SentenceChunking }

export { DEFAULT_CHUNK_SIZE }
export const DEFAULT_CHUNK_OVERLAP = 64
export const DEFAULT_SEPARATORS = ['\n\n', '\n', ' ', '']
export const DEFAULT_MIN_SENTENCE_CHUNK = 0

/** The chunking a space gets when its request names none: recursive, 512 characters, overlap 64, KEEP_END. */
export const DEFAULT_CHUNKING: ChunkingConfig = {
  recursive: {
    chunkSize: DEFAULT_CHUNK_SIZE,
    chunkOverlap: DEFAULT_CHUNK_OVERLAP,
    separators: DEFAULT_SEPARATORS,
    keepStrategy: 'KEEP_END',
    separatorIsRegex: false,
  },
}

/** A piece of the original text: `text` is exactly content.slice(startOffset, endOffset). */
export interface TextChunk {
  text: string
  startOffset: number
  endOffset: number
}
