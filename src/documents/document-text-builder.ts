/**
 * Accumulates an extracted document's text together with its sections, so that every
 * extractor gets the offsets right the same way and the text limit is enforced while the
 * text grows rather than after a gigabyte string exists.
 */
import { type DocumentSection, ExtractionError } from './extracted-document.js'

/** What a section records about where its text came from (everything but the offsets). */
export type SectionSource = Omit<DocumentSection, 'startOffset' | 'endOffset'>

/** Blocks (paragraphs, pages, slides) are separated by a blank line: the separator chunking splits at first. */
export const BLOCK_SEPARATOR = '\n\n'
/** Lines of one block (list items, table rows) by a line break. */
export const LINE_SEPARATOR = '\n'

export class DocumentTextBuilder {
  readonly #parts: string[] = []
  readonly #sections: DocumentSection[] = []
  readonly #maxCharacters: number
  #length = 0

  constructor(maxCharacters: number) {
    this.#maxCharacters = maxCharacters
  }

  get length(): number {
    return this.#length
  }

  /** Adds a paragraph-like block; empty or whitespace-only text adds nothing. */
  addBlock(text: string, source: SectionSource = {}): void {
    this.#add(text, source, BLOCK_SEPARATOR)
  }

  /** Adds a line that belongs with the one before it (the next item of a list, row of a table). */
  addLine(text: string, source: SectionSource = {}): void {
    this.#add(text, source, LINE_SEPARATOR)
  }

  build(): { text: string; sections: DocumentSection[] } {
    return { text: this.#parts.join(''), sections: this.#sections }
  }

  #add(text: string, source: SectionSource, separator: string): void {
    const trimmed = text.replace(/\s+$/, '')
    if (trimmed.trim() === '') return
    const separatorLength = this.#length === 0 ? 0 : separator.length
    const newLength = this.#length + separatorLength + trimmed.length
    if (newLength > this.#maxCharacters) {
      throw new ExtractionError(
        `the extracted text is longer than ${this.#maxCharacters} characters, the limit for one document`,
      )
    }
    if (separatorLength > 0) this.#parts.push(separator)
    const start = this.#length + separatorLength
    this.#parts.push(trimmed)
    this.#length = newLength
    const last = this.#sections.at(-1)
    // Consecutive text from the same place is one section, the separator between them included.
    if (last !== undefined && sameSource(last, source)) last.endOffset = newLength
    else this.#sections.push({ startOffset: start, endOffset: newLength, ...withoutEmptyFields(source) })
  }
}

function withoutEmptyFields(source: SectionSource): SectionSource {
  const cleaned: SectionSource = {}
  if (source.page !== undefined) cleaned.page = source.page
  if (source.slide !== undefined) cleaned.slide = source.slide
  if (source.sheet !== undefined) cleaned.sheet = source.sheet
  if (source.headingPath !== undefined && source.headingPath.length > 0) cleaned.headingPath = [...source.headingPath]
  return cleaned
}

function sameSource(section: DocumentSection, source: SectionSource): boolean {
  const path = source.headingPath ?? []
  const sectionPath = section.headingPath ?? []
  return (
    section.page === source.page &&
    section.slide === source.slide &&
    section.sheet === source.sheet &&
    path.length === sectionPath.length &&
    path.every((heading, index) => heading === sectionPath[index])
  )
}
