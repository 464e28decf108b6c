/**
 * Excel workbooks: each sheet in workbook order as a `Sheet: <name>` line, then one line per
 * data row that names every value by its column's header (`Region: North; Sales: 12`), so a
 * chunk cut from the middle of a sheet still says what its numbers are.
 *
 * Dates stay the serial numbers Excel stores (45292 for 2024-01-01): telling a date from a
 * number needs the cell's number format from xl/styles.xml, which this does not read yet.
 */
import { DocumentTextBuilder } from './document-text-builder.js'
import { type ExtractedDocument, ExtractionError, type ExtractionOptions } from './extracted-document.js'
import { readRelationships } from './ooxml-relationships.js'
import { childElements, firstChild, localName, parseXmlRoot } from './safe-xml.js'
import { scanXml } from './xml-scanner.js'
import { ZipArchive } from './zip-archive.js'

const WORKBOOK_PART = 'xl/workbook.xml'
const DEFAULT_SHARED_STRINGS_PART = 'xl/sharedStrings.xml'
const SHARED_STRINGS_KIND = /\/sharedStrings$/
const VALUE_SEPARATOR = '; '
const BOOLEAN_TEXT: Record<string, string> = { '0': 'FALSE', '1': 'TRUE' }
const LETTERS_IN_ALPHABET = 26
const CHAR_CODE_BEFORE_A = 64

export function extractXlsx(bytes: Uint8Array, options: ExtractionOptions): ExtractedDocument {
  const zip = ZipArchive.open(bytes, options.limits, 'the Excel workbook')
  const workbook = parseXmlRoot(zip.readText(WORKBOOK_PART), WORKBOOK_PART)
  const relationships = readRelationships(zip, WORKBOOK_PART)
  const sharedStringsPart =
    [...relationships.values()].find((relationship) => SHARED_STRINGS_KIND.test(relationship.type))?.target ??
    DEFAULT_SHARED_STRINGS_PART
  const sharedStrings = zip.has(sharedStringsPart)
    ? readSharedStrings(zip.readText(sharedStringsPart), sharedStringsPart)
    : []
  const builder = new DocumentTextBuilder(options.limits.maxTextCharacters)
  for (const sheet of childElements(firstChild(workbook, 'sheets'), 'sheet')) {
    const name = sheet.attributes.name ?? ''
    const target = relationships.get(sheet.attributes['r:id'] ?? '')?.target
    if (target === undefined || !zip.has(target)) {
      throw new ExtractionError(`the Excel workbook is damaged: sheet "${name}" is missing`)
    }
    addSheet(builder, name, zip.readText(target), target, sharedStrings)
  }
  const { text, sections } = builder.build()
  return { kind: 'xlsx', text, sections, pages: [] }
}

/**
 * Streams the worksheet's rows into lines as the XML is read: a sheet of a million cells never
 * exists as a tree. Only `v` (the value) and `is` (an inline string) are read in a cell, not `f`.
 */
function addSheet(
  builder: DocumentTextBuilder,
  name: string,
  sheetXml: string,
  describe: string,
  sharedStrings: string[],
) {
  const lines = new SheetLines(builder, name)
  let row: Array<[number, string]> | undefined
  let nextColumn = 0
  let cell: { column: number; type: string | undefined; value: string; inline: string } | undefined
  let inValue = false
  let inInlineText = false
  let phoneticDepth = 0
  scanXml(sheetXml, describe, {
    open(qualifiedName, attributes) {
      const element = localName(qualifiedName)
      if (element === 'row') {
        row = []
        nextColumn = 0
      } else if (element === 'c') {
        // The reference (B7) may be left out, meaning the column after the previous cell.
        const column = columnIndex(attributes.r) ?? nextColumn
        nextColumn = column + 1
        cell = { column, type: attributes.t, value: '', inline: '' }
      } else if (element === 'v') inValue = cell !== undefined
      else if (element === 't') inInlineText = cell !== undefined && !inValue
      else if (element === 'rPh') phoneticDepth++
    },
    close(qualifiedName) {
      const element = localName(qualifiedName)
      if (element === 'v') inValue = false
      else if (element === 't') inInlineText = false
      else if (element === 'rPh') phoneticDepth--
      else if (element === 'c' && cell !== undefined) {
        const value = cellValue(cell.type, cell.value, cell.inline, sharedStrings).replace(/\s+/g, ' ').trim()
        if (value !== '') row?.push([cell.column, value])
        cell = undefined
      } else if (element === 'row' && row !== undefined) {
        lines.addRow(row)
        row = undefined
      }
    },
    text(text) {
      if (cell === undefined || phoneticDepth > 0) return
      if (inValue) cell.value += text
      else if (inInlineText) cell.inline += text
    },
  })
  lines.finish()
}

/** A sheet's rows as lines: the first row with a value names the columns; each later row names its values by them. */
class SheetLines {
  readonly #builder: DocumentTextBuilder
  readonly #source: { sheet: string }
  #headers: Map<number, string> | undefined
  #headingAdded = false

  constructor(builder: DocumentTextBuilder, name: string) {
    this.#builder = builder
    this.#source = { sheet: name }
  }

  addRow(cells: Array<[number, string]>): void {
    if (cells.length === 0) return
    cells.sort((a, b) => a[0] - b[0])
    if (this.#headers === undefined) {
      this.#headers = new Map(cells)
      return
    }
    const parts = cells.map(([column, value]) => `${this.#headers?.get(column) || columnLetters(column)}: ${value}`)
    this.#addLine(parts.join(VALUE_SEPARATOR))
  }

  finish(): void {
    // A sheet of one row: its values are all it has.
    if (!this.#headingAdded && this.#headers !== undefined)
      this.#addLine([...this.#headers.values()].join(VALUE_SEPARATOR))
  }

  #addLine(line: string): void {
    if (!this.#headingAdded) {
      this.#builder.addBlock(`Sheet: ${this.#source.sheet}`, this.#source)
      this.#headingAdded = true
    }
    this.#builder.addLine(line, this.#source)
  }
}

function cellValue(type: string | undefined, value: string, inline: string, sharedStrings: string[]): string {
  switch (type) {
    case 's':
      return sharedStrings[Number(value)] ?? ''
    case 'inlineStr':
      return inline
    case 'b':
      return BOOLEAN_TEXT[value] ?? value
    default:
      // n (number, the default), str (a formula's text), e (an error such as #DIV/0!), d (an ISO date).
      return value
  }
}

/** The shared string table, streamed: a string item is a plain t or runs of t; phonetic guides (rPh) are not its text. */
function readSharedStrings(xml: string, describe: string): string[] {
  const strings: string[] = []
  let item: string | undefined
  let inText = false
  let phoneticDepth = 0
  scanXml(xml, describe, {
    open(qualifiedName) {
      const element = localName(qualifiedName)
      if (element === 'si') item = ''
      else if (element === 't') inText = true
      else if (element === 'rPh') phoneticDepth++
    },
    close(qualifiedName) {
      const element = localName(qualifiedName)
      if (element === 'si') {
        strings.push(item ?? '')
        item = undefined
      } else if (element === 't') inText = false
      else if (element === 'rPh') phoneticDepth--
    },
    text(text) {
      if (item !== undefined && inText && phoneticDepth === 0) item += text
    },
  })
  return strings
}

/** B7 → 1; undefined for a missing or malformed reference. */
function columnIndex(reference: string | undefined): number | undefined {
  const letters = /^([A-Z]+)/i.exec(reference ?? '')?.[1]
  if (letters === undefined) return undefined
  let index = 0
  for (const letter of letters.toUpperCase())
    index = index * LETTERS_IN_ALPHABET + letter.charCodeAt(0) - CHAR_CODE_BEFORE_A
  return index - 1
}

function columnLetters(index: number): string {
  let letters = ''
  for (let rest = index + 1; rest > 0; rest = Math.floor((rest - 1) / LETTERS_IN_ALPHABET)) {
    letters = String.fromCharCode(CHAR_CODE_BEFORE_A + 1 + ((rest - 1) % LETTERS_IN_ALPHABET)) + letters
  }
  return letters
}
