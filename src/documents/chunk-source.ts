/**
 * Where a chunk of a document's text came from: its page (and last page, when it crosses
 * pages), slide, sheet and headings, from the sections extraction recorded. Runs once per
 * chunk, so it searches the sections instead of scanning them.
 */
import type { DocumentSection } from './extracted-document.js'

export interface ChunkSource {
  page?: number
  /** The last page the chunk reaches, when it is not `page`. */
  pageEnd?: number
  slide?: number
  sheet?: string
  headingPath?: string[]
}

/**
 * The source of the text between `startOffset` and `endOffset` (end exclusive): the fields of the
 * first section it overlaps, and `pageEnd` from the last one when that is another page. Empty when
 * no section overlaps (text between sections, such as the blank line joining two pages).
 */
export function sourceOfSpan(
  sections: readonly DocumentSection[],
  startOffset: number,
  endOffset: number,
): ChunkSource {
  const first = firstSectionEndingAfter(sections, startOffset)
  const firstSection = sections[first]
  if (firstSection === undefined || !overlaps(firstSection, startOffset, endOffset)) return {}
  const source: ChunkSource = {}
  if (firstSection.page !== undefined) source.page = firstSection.page
  if (firstSection.slide !== undefined) source.slide = firstSection.slide
  if (firstSection.sheet !== undefined) source.sheet = firstSection.sheet
  if (firstSection.headingPath !== undefined && firstSection.headingPath.length > 0) {
    source.headingPath = [...firstSection.headingPath]
  }
  if (firstSection.page !== undefined) {
    const lastSection = sections[lastSectionStartingBefore(sections, endOffset)]
    if (lastSection?.page !== undefined && lastSection.page !== firstSection.page) source.pageEnd = lastSection.page
  }
  return source
}

function overlaps(section: DocumentSection, startOffset: number, endOffset: number): boolean {
  // An empty span still belongs to the section it sits in.
  if (startOffset === endOffset) return section.startOffset <= startOffset && startOffset < section.endOffset
  return section.startOffset < endOffset && startOffset < section.endOffset
}

/** The index of the first section whose end is after `offset` (sections.length when none is). */
function firstSectionEndingAfter(sections: readonly DocumentSection[], offset: number): number {
  let low = 0
  let high = sections.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((sections[middle]?.endOffset ?? 0) > offset) high = middle
    else low = middle + 1
  }
  return low
}

/** The index of the last section that starts before `offset` (-1 when none does). */
function lastSectionStartingBefore(sections: readonly DocumentSection[], offset: number): number {
  let low = 0
  let high = sections.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((sections[middle]?.startOffset ?? 0) < offset) low = middle + 1
    else high = middle
  }
  return low - 1
}
