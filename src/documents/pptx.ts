/**
 * PowerPoint decks: each slide's text in presentation order (the order of p:sldIdLst, not
 * of the slide files' numbers, which keep their creation order), the title first, then the
 * speaker's notes under a "Notes:" line.
 */
import { BLOCK_SEPARATOR, DocumentTextBuilder, LINE_SEPARATOR } from './document-text-builder.js'
import {
  type DocumentPage,
  type ExtractedDocument,
  ExtractionError,
  type ExtractionOptions,
} from './extracted-document.js'
import { readRelationships, relationshipKind } from './ooxml-relationships.js'
import { childElements, findElements, firstChild, parseXmlRoot, type XmlElement } from './safe-xml.js'
import { ZipArchive } from './zip-archive.js'

const PRESENTATION_PART = 'ppt/presentation.xml'
const NOTES_HEADING = 'Notes:'
const TABLE_CELL_SEPARATOR = ' | '
const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle'])
/** Placeholders on a notes page that are not the notes: the slide's picture, its number, header, footer, date. */
const NOTES_PAGE_FURNITURE = new Set(['sldImg', 'sldNum', 'hdr', 'ftr', 'dt'])

export function extractPptx(bytes: Uint8Array, options: ExtractionOptions): ExtractedDocument {
  const zip = ZipArchive.open(bytes, options.limits, 'the PowerPoint presentation')
  const presentation = parseXmlRoot(zip.readText(PRESENTATION_PART), PRESENTATION_PART)
  const relationships = readRelationships(zip, PRESENTATION_PART)
  const slideIds = childElements(firstChild(presentation, 'p:sldIdLst') ?? presentation, 'p:sldId')
  const builder = new DocumentTextBuilder(options.limits.maxTextCharacters)
  const pages: DocumentPage[] = []
  slideIds.forEach((slideId, index) => {
    const slideNumber = index + 1
    const target = relationships.get(slideId.attributes['r:id'] ?? '')
    if (target === undefined || !zip.has(target.target)) {
      throw new ExtractionError(`the PowerPoint presentation is damaged: slide ${slideNumber} is missing`)
    }
    const slide = readSlide(zip, target.target)
    const textBefore = builder.length
    const source =
      slide.title === undefined ? { slide: slideNumber } : { slide: slideNumber, headingPath: [slide.title] }
    builder.addBlock(slide.text, source)
    if (slide.notes !== '') builder.addBlock(`${NOTES_HEADING}${LINE_SEPARATOR}${slide.notes}`, source)
    const added = builder.length - textBefore
    // What the slide added, without the blank line that separates it from the slide before.
    const characters = added === 0 ? 0 : added - (textBefore > 0 ? BLOCK_SEPARATOR.length : 0)
    pages.push(
      characters > 0
        ? { pageNumber: slideNumber, method: 'TEXT', characters }
        : { pageNumber: slideNumber, method: 'NONE', characters: 0, note: 'the slide has no text' },
    )
  })
  const { text, sections } = builder.build()
  return { kind: 'pptx', text, sections, pages }
}

interface SlideText {
  title?: string
  text: string
  notes: string
}

function readSlide(zip: ZipArchive, slidePath: string): SlideText {
  const slide = parseXmlRoot(zip.readText(slidePath), slidePath)
  const shapes = shapesOf(slide)
  const titles = shapes.filter((shape) => TITLE_PLACEHOLDERS.has(shape.placeholder ?? ''))
  const others = shapes.filter((shape) => !TITLE_PLACEHOLDERS.has(shape.placeholder ?? ''))
  const title = titles
    .map((shape) => shape.text)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()
  const text = [...titles, ...others].map((shape) => shape.text).filter((shapeText) => shapeText.trim() !== '')
  const notesRelationship = [...readRelationships(zip, slidePath).values()].find(
    (relationship) => relationshipKind(relationship) === 'notesSlide' && !relationship.external,
  )
  let notes = ''
  if (notesRelationship !== undefined && zip.has(notesRelationship.target)) {
    const notesSlide = parseXmlRoot(zip.readText(notesRelationship.target), notesRelationship.target)
    notes = shapesOf(notesSlide)
      .filter((shape) => !NOTES_PAGE_FURNITURE.has(shape.placeholder ?? ''))
      .map((shape) => shape.text)
      .filter((shapeText) => shapeText.trim() !== '')
      .join(LINE_SEPARATOR)
  }
  return { ...(title === '' ? {} : { title }), text: text.join(LINE_SEPARATOR), notes }
}

interface ShapeText {
  /** The placeholder type (`title`, `body`…); undefined for a plain text box. An untyped placeholder is a body. */
  placeholder?: string
  text: string
}

/** The text shapes and tables of a slide's shape tree, in document order, groups opened. */
function shapesOf(slide: XmlElement): ShapeText[] {
  const tree = firstChild(firstChild(slide, 'p:cSld'), 'p:spTree')
  if (tree === undefined) return []
  const shapes: ShapeText[] = []
  const visit = (group: XmlElement) => {
    for (const element of childElements(group)) {
      if (element.name === 'p:sp') {
        const placeholder = firstChild(firstChild(firstChild(element, 'p:nvSpPr'), 'p:nvPr'), 'p:ph')
        const text = paragraphsText(firstChild(element, 'p:txBody'))
        const shape: ShapeText = { text }
        if (placeholder !== undefined) shape.placeholder = placeholder.attributes.type ?? 'body'
        shapes.push(shape)
      } else if (element.name === 'p:graphicFrame') {
        shapes.push({ text: tablesText(element) })
      } else if (element.name === 'p:grpSp') {
        visit(element)
      }
    }
  }
  visit(tree)
  return shapes
}

function paragraphsText(body: XmlElement | undefined): string {
  if (body === undefined) return ''
  return childElements(body, 'a:p')
    .map(paragraphText)
    .filter((line) => line.trim() !== '')
    .join(LINE_SEPARATOR)
}

function paragraphText(paragraph: XmlElement): string {
  let text = ''
  for (const child of childElements(paragraph)) {
    if (child.name === 'a:r' || child.name === 'a:fld') {
      text += childElements(child, 'a:t')
        .flatMap((element) => element.children.filter((node) => typeof node === 'string'))
        .join('')
    } else if (child.name === 'a:br') {
      text += LINE_SEPARATOR
    }
  }
  return text
}

/** A table's rows, one line each, cells joined as in Word tables. */
function tablesText(frame: XmlElement): string {
  return findElements(frame, 'a:tbl')
    .flatMap((table) => childElements(table, 'a:tr'))
    .map((row) =>
      childElements(row, 'a:tc')
        .map((cell) => paragraphsText(firstChild(cell, 'a:txBody')).replace(/\s+/g, ' ').trim())
        .join(TABLE_CELL_SEPARATOR),
    )
    .filter((line) => line.replace(/[|\s]/g, '') !== '')
    .join(LINE_SEPARATOR)
}
