// Where a retrieved chunk of a document came from, as a citation people read: "report.pdf p.12",
// "report.pdf pp.12-13", "deck.pptx slide 3", "book.xlsx sheet Sales", with the headings above it.
import type { ChunkSource } from '../generated/memsvc/v1/memories.js'

/** Headings are shown innermost last, and only the last few: a deep outline would push the text off the line. */
const MAX_HEADINGS_SHOWN = 2
const HEADING_SEPARATOR = ' › '

export function chunkSourceLabel(source: ChunkSource | undefined, fileName: string | undefined): string {
  if (!source) return ''
  const parts: string[] = []
  if (fileName) parts.push(fileName)
  if (source.page !== undefined)
    parts.push(source.pageEnd !== undefined ? `pp.${source.page}-${source.pageEnd}` : `p.${source.page}`)
  if (source.slide !== undefined) parts.push(`slide ${source.slide}`)
  if (source.sheet !== undefined) parts.push(`sheet ${source.sheet}`)
  const headings = source.headingPath ?? []
  if (headings.length > 0) {
    const shown = headings.slice(-MAX_HEADINGS_SHOWN).join(HEADING_SEPARATOR)
    parts.push(headings.length > MAX_HEADINGS_SHOWN ? `…${HEADING_SEPARATOR}${shown}` : shown)
  }
  // A file name alone says nothing a document's memory id does not.
  return parts.length > (fileName ? 1 : 0) ? parts.join(' ') : ''
}
