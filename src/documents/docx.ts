/**
 * Word documents: the paragraphs, lists and tables of word/document.xml in order, with the
 * headings above each part as its section's headingPath. mammoth would do this too, but it
 * inflates the package with jszip without bounds; here every part goes through ZipArchive.
 */
import { DocumentTextBuilder } from './document-text-builder.js'
import type { ExtractedDocument, ExtractionOptions } from './extracted-document.js'
import { childElements, firstChild, parseXmlRoot, type XmlElement } from './safe-xml.js'
import { ZipArchive } from './zip-archive.js'

const DOCUMENT_PART = 'word/document.xml'
const STYLES_PART = 'word/styles.xml'
const NUMBERING_PART = 'word/numbering.xml'
/** Title sits above every numbered heading level. */
const TITLE_LEVEL = 0
const MAX_HEADING_LEVEL = 9
const LIST_INDENT = '  '
const TABLE_CELL_SEPARATOR = ' | '
const TABLE_HEADER_RULE = '---'
/** Number formats that show no number: the item gets a bullet. */
const UNNUMBERED_FORMATS = new Set(['bullet', 'none'])
/** Inside these elements, text is not the document's: deleted revisions, field codes, properties. */
const SKIPPED_INLINE = new Set(['w:pPr', 'w:rPr', 'w:del', 'w:instrText', 'w:delInstrText', 'w:fldData'])

interface StyleInfo {
  headingLevel?: number
  numbering?: { numId: string; level: number }
}

interface WordContext {
  styles: Map<string, StyleInfo>
  /** numId → the number format of each level. */
  numberFormats: Map<string, string[]>
  builder: DocumentTextBuilder
  headings: Array<{ level: number; text: string }>
  /** Counters of ordered lists by numId, one per level. */
  listCounters: Map<string, number[]>
  /** Whether the previous block was a list item (items follow each other line by line). */
  inList: boolean
}

export function extractDocx(bytes: Uint8Array, options: ExtractionOptions): ExtractedDocument {
  const zip = ZipArchive.open(bytes, options.limits, 'the Word document')
  const document = parseXmlRoot(zip.readText(DOCUMENT_PART), DOCUMENT_PART)
  const context: WordContext = {
    styles: zip.has(STYLES_PART) ? readStyles(parseXmlRoot(zip.readText(STYLES_PART), STYLES_PART)) : new Map(),
    numberFormats: zip.has(NUMBERING_PART)
      ? readNumbering(parseXmlRoot(zip.readText(NUMBERING_PART), NUMBERING_PART))
      : new Map(),
    builder: new DocumentTextBuilder(options.limits.maxTextCharacters),
    headings: [],
    listCounters: new Map(),
    inList: false,
  }
  const body = firstChild(document, 'w:body') ?? document
  addBlocks(body, context)
  const { text, sections } = context.builder.build()
  return { kind: 'docx', text, sections, pages: [] }
}

function addBlocks(container: XmlElement, context: WordContext): void {
  for (const element of childElements(container)) {
    if (element.name === 'w:p') addParagraph(element, context)
    else if (element.name === 'w:tbl') addTable(element, context)
    // Content controls and custom XML wrap ordinary paragraphs and tables.
    else if (element.name === 'w:sdt') addBlocks(firstChild(element, 'w:sdtContent') ?? element, context)
    else if (element.name === 'w:customXml' || element.name === 'w:ins') addBlocks(element, context)
  }
}

function addParagraph(paragraph: XmlElement, context: WordContext): void {
  const properties = firstChild(paragraph, 'w:pPr')
  const styleId = attribute(firstChild(properties, 'w:pStyle'))
  const style = styleId === undefined ? undefined : context.styles.get(styleId)
  const text = inlineText(paragraph)
  // A style id that styles.xml does not define (as files written by other tools have) still names built-in headings.
  const headingLevel =
    outlineLevel(properties) ?? style?.headingLevel ?? (style ? undefined : headingLevelOfName(styleId ?? ''))
  if (headingLevel !== undefined && text.trim() !== '') {
    context.headings = context.headings.filter((heading) => heading.level < headingLevel)
    context.headings.push({ level: headingLevel, text: text.trim() })
    context.inList = false
    context.builder.addBlock(text, { headingPath: headingPath(context) })
    return
  }
  const numbering = paragraphNumbering(properties) ?? style?.numbering
  if (numbering !== undefined && numbering.numId !== '0') {
    const line = `${LIST_INDENT.repeat(numbering.level)}${listMarker(numbering, context)}${text.trim()}`
    if (context.inList) context.builder.addLine(line, { headingPath: headingPath(context) })
    else context.builder.addBlock(line, { headingPath: headingPath(context) })
    context.inList = true
    return
  }
  context.inList = false
  context.builder.addBlock(text, { headingPath: headingPath(context) })
}

function addTable(table: XmlElement, context: WordContext): void {
  const rows = childElements(table, 'w:tr')
    .map((row) => childElements(row, 'w:tc').map(cellText))
    .filter((cells) => cells.some((cell) => cell !== ''))
  context.inList = false
  const [header, ...body] = rows
  if (header === undefined) return
  const lines = [header.join(TABLE_CELL_SEPARATOR)]
  // The first row is the header, marked as Markdown marks one.
  if (body.length > 0) lines.push(header.map(() => TABLE_HEADER_RULE).join(TABLE_CELL_SEPARATOR))
  for (const cells of body) lines.push(cells.join(TABLE_CELL_SEPARATOR))
  const source = { headingPath: headingPath(context) }
  context.builder.addBlock(lines[0] ?? '', source)
  for (const line of lines.slice(1)) context.builder.addLine(line, source)
}

/** A cell's paragraphs (and nested tables' text) on one line: rows must stay one line each. */
function cellText(cell: XmlElement): string {
  const pieces: string[] = []
  const visit = (element: XmlElement) => {
    for (const child of childElements(element)) {
      if (child.name === 'w:p') pieces.push(inlineText(child).replace(/\s+/g, ' ').trim())
      else if (child.name !== 'w:tcPr') visit(child)
    }
  }
  visit(cell)
  return pieces.filter(Boolean).join(' ')
}

/** A paragraph's text: its runs' text, tabs and line breaks, including hyperlinks and inserted revisions. */
function inlineText(element: XmlElement): string {
  let text = ''
  for (const child of element.children) {
    if (typeof child === 'string') continue
    if (SKIPPED_INLINE.has(child.name)) continue
    switch (child.name) {
      case 'w:t':
        text += child.children.filter((node) => typeof node === 'string').join('')
        break
      case 'w:tab':
      case 'w:ptab':
        text += '\t'
        break
      case 'w:br':
      case 'w:cr':
        text += '\n'
        break
      case 'w:noBreakHyphen':
        text += '-'
        break
      case 'w:softHyphen':
        break
      default:
        text += inlineText(child)
    }
  }
  return text
}

function listMarker(numbering: { numId: string; level: number }, context: WordContext): string {
  const format = context.numberFormats.get(numbering.numId)?.[numbering.level] ?? 'bullet'
  if (UNNUMBERED_FORMATS.has(format)) return '- '
  const counters = context.listCounters.get(numbering.numId) ?? []
  // A shallower item restarts the counts of the levels below it.
  counters.length = numbering.level + 1
  counters[numbering.level] = (counters[numbering.level] ?? 0) + 1
  context.listCounters.set(numbering.numId, counters)
  return `${counters[numbering.level]}. `
}

function headingPath(context: WordContext): string[] {
  return context.headings.map((heading) => heading.text)
}

function outlineLevel(properties: XmlElement | undefined): number | undefined {
  const value = attribute(firstChild(properties, 'w:outlineLvl'))
  if (value === undefined) return undefined
  // w:outlineLvl counts from 0 for Heading 1; 9 means body text.
  const level = Number(value) + 1
  return Number.isInteger(level) && level >= 1 && level <= MAX_HEADING_LEVEL ? level : undefined
}

function paragraphNumbering(properties: XmlElement | undefined): { numId: string; level: number } | undefined {
  const numberingProperties = firstChild(properties, 'w:numPr')
  const numId = attribute(firstChild(numberingProperties, 'w:numId'))
  if (numId === undefined) return undefined
  const level = Number(attribute(firstChild(numberingProperties, 'w:ilvl')) ?? 0)
  return { numId, level: Number.isInteger(level) && level >= 0 && level < MAX_HEADING_LEVEL ? level : 0 }
}

/**
 * Heading levels by style id. Localised Word versions give built-in styles other ids
 * (`berschrift1`) but keep the English name (`heading 1`) and an outline level, so the
 * id, the name and the outline level are all consulted.
 */
function readStyles(styles: XmlElement): Map<string, StyleInfo> {
  const byId = new Map<string, StyleInfo>()
  for (const style of childElements(styles, 'w:style')) {
    const id = style.attributes['w:styleId']
    if (id === undefined) continue
    const name = attribute(firstChild(style, 'w:name')) ?? ''
    const properties = firstChild(style, 'w:pPr')
    const info: StyleInfo = {}
    const headingLevel = headingLevelOfName(id) ?? headingLevelOfName(name) ?? outlineLevel(properties)
    if (headingLevel !== undefined) info.headingLevel = headingLevel
    const numbering = paragraphNumbering(properties)
    if (numbering !== undefined) info.numbering = numbering
    byId.set(id, info)
  }
  return byId
}

function headingLevelOfName(name: string): number | undefined {
  const normalized = name.toLowerCase().replace(/\s+/g, '')
  if (normalized === 'title') return TITLE_LEVEL
  const match = /^heading([1-9])$/.exec(normalized)
  return match ? Number(match[1]) : undefined
}

/** numId → the number format of each level (`bullet`, `decimal`, `lowerLetter`…). */
function readNumbering(numbering: XmlElement): Map<string, string[]> {
  const abstractFormats = new Map<string, string[]>()
  for (const abstract of childElements(numbering, 'w:abstractNum')) {
    const formats: string[] = []
    for (const level of childElements(abstract, 'w:lvl')) {
      const index = Number(level.attributes['w:ilvl'] ?? 0)
      if (Number.isInteger(index) && index >= 0 && index < MAX_HEADING_LEVEL) {
        formats[index] = attribute(firstChild(level, 'w:numFmt')) ?? 'decimal'
      }
    }
    abstractFormats.set(abstract.attributes['w:abstractNumId'] ?? '', formats)
  }
  const formatsByNumId = new Map<string, string[]>()
  for (const num of childElements(numbering, 'w:num')) {
    const abstractId = attribute(firstChild(num, 'w:abstractNumId'))
    const formats = abstractId === undefined ? undefined : abstractFormats.get(abstractId)
    if (formats !== undefined) formatsByNumId.set(num.attributes['w:numId'] ?? '', formats)
  }
  return formatsByNumId
}

/** The `w:val` attribute, where Word keeps most values. */
function attribute(element: XmlElement | undefined): string | undefined {
  return element?.attributes['w:val']
}
