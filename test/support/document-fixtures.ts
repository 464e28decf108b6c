/**
 * Documents written by code for the extraction tests, the integration tests and the bench:
 * no binary files in the repository and no network. Each writer produces the least of its
 * format that real readers accept, with the structure extraction looks for (styles, lists,
 * tables, placeholders, notes, shared strings, text layers).
 */
import crypto from 'node:crypto'
import zlib from 'node:zlib'
import { createCanvas } from '@napi-rs/canvas'
import {
  DEFAULT_EXTRACTION_LIMITS,
  DEFAULT_PAGE_IMAGE_DPI,
  type ExtractionLimits,
  type ExtractionOptions,
  type ExtractionSink,
} from '../../src/documents/extracted-document.js'
import { imageDimensions } from '../../src/documents/image-dimensions.js'

const encoder = new TextEncoder()
const bytesOf = (data: Uint8Array | string): Uint8Array => (typeof data === 'string' ? encoder.encode(data) : data)

// ------------------------------------------------------------------------------- Options and sinks

/** Extraction options as a memory's defaults give them, with `overrides` (limits merged). */
export function extractionOptions(
  overrides: Partial<Omit<ExtractionOptions, 'limits'>> & { limits?: Partial<ExtractionLimits> } = {},
): ExtractionOptions {
  return {
    ocr: 'AUTO',
    extractPageImages: false,
    pageImageDpi: DEFAULT_PAGE_IMAGE_DPI,
    ocrLanguages: ['eng'],
    ...overrides,
    limits: { ...DEFAULT_EXTRACTION_LIMITS, ...overrides.limits },
  }
}

/** A sink that keeps what it is told: progress updates in order, and page images by page number. */
export function recordingSink(): ExtractionSink & {
  updates: Array<Parameters<ExtractionSink['progress']>[0]>
  images: Map<number, Uint8Array>
} {
  const updates: Array<Parameters<ExtractionSink['progress']>[0]> = []
  const images = new Map<number, Uint8Array>()
  return {
    updates,
    images,
    progress: (update) => updates.push(update),
    pageImage: (pageNumber, png) => {
      images.set(pageNumber, png)
    },
  }
}

// ---------------------------------------------------------------------------------------------- ZIP

export interface ZipFixtureEntry {
  name: string
  data: Uint8Array | string
  /** Deflated unless 'stored'. */
  method?: 'stored' | 'deflated'
  /** Already-deflated bytes to store as the entry's data (a zip bomb's); `data` is then ignored. */
  rawDeflated?: Uint8Array
  /** Sizes written instead of the true ones, for archives that lie. */
  declaredUncompressedSize?: number
  declaredCompressedSize?: number
  /** General purpose flags (bit 0: encrypted). */
  flags?: number
  /** A compression method number written instead of the real one (12 is bzip2). */
  declaredMethod?: number
  /** The CRC-32 to record for rawDeflated data (0 otherwise: such an entry fails its checksum when read whole). */
  declaredCrc32?: number
}

/**
 * A ZIP archive: local headers, data, central directory, End Of Central Directory. With `zip64`,
 * the directory's sizes and offsets are in ZIP64 extra fields and a ZIP64 end record, as archives
 * over 4 GiB (or written by streaming tools) have them.
 */
export function writeZip(entries: ZipFixtureEntry[], { zip64 = false } = {}): Uint8Array {
  const parts: Uint8Array[] = []
  const directory: Uint8Array[] = []
  let offset = 0
  for (const entry of entries) {
    const name = encoder.encode(entry.name)
    const content = bytesOf(entry.data)
    const stored = entry.method === 'stored' && entry.rawDeflated === undefined
    const data = entry.rawDeflated ?? (stored ? content : zlib.deflateRawSync(content))
    const crc = entry.declaredCrc32 ?? (entry.rawDeflated === undefined ? zlib.crc32(content) : 0)
    const uncompressedSize = entry.declaredUncompressedSize ?? content.length
    const compressedSize = entry.declaredCompressedSize ?? data.length
    const method = entry.declaredMethod ?? (stored ? 0 : 8)
    const flags = entry.flags ?? 0
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(flags, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(compressedSize, 18)
    local.writeUInt32LE(uncompressedSize, 22)
    local.writeUInt16LE(name.length, 26)
    parts.push(local, name, data)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(zip64 ? 45 : 20, 4)
    central.writeUInt16LE(zip64 ? 45 : 20, 6)
    central.writeUInt16LE(flags, 8)
    central.writeUInt16LE(method, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(zip64 ? ZIP64_MARKER : compressedSize, 20)
    central.writeUInt32LE(zip64 ? ZIP64_MARKER : uncompressedSize, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(zip64 ? ZIP64_MARKER : offset, 42)
    const extra = Buffer.alloc(zip64 ? 28 : 0)
    if (zip64) {
      central.writeUInt16LE(extra.length, 30)
      extra.writeUInt16LE(0x0001, 0)
      extra.writeUInt16LE(24, 2)
      extra.writeBigUInt64LE(BigInt(uncompressedSize), 4)
      extra.writeBigUInt64LE(BigInt(compressedSize), 12)
      extra.writeBigUInt64LE(BigInt(offset), 20)
    }
    directory.push(central, name, extra)
    offset += local.length + name.length + data.length
  }
  const directorySize = directory.reduce((sum, part) => sum + part.length, 0)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(zip64 ? 0xffff : entries.length, 8)
  end.writeUInt16LE(zip64 ? 0xffff : entries.length, 10)
  end.writeUInt32LE(zip64 ? ZIP64_MARKER : directorySize, 12)
  end.writeUInt32LE(zip64 ? ZIP64_MARKER : offset, 16)
  if (!zip64) return Buffer.concat([...parts, ...directory, end])
  const record = Buffer.alloc(56)
  record.writeUInt32LE(0x06064b50, 0)
  record.writeBigUInt64LE(44n, 4)
  record.writeUInt16LE(45, 12)
  record.writeUInt16LE(45, 14)
  record.writeBigUInt64LE(BigInt(entries.length), 24)
  record.writeBigUInt64LE(BigInt(entries.length), 32)
  record.writeBigUInt64LE(BigInt(directorySize), 40)
  record.writeBigUInt64LE(BigInt(offset), 48)
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0)
  locator.writeBigUInt64LE(BigInt(offset + directorySize), 8)
  locator.writeUInt32LE(1, 16)
  return Buffer.concat([...parts, ...directory, record, locator, end])
}

const ZIP64_MARKER = 0xffffffff

const MIB = 1024 * 1024

/**
 * Raw deflate data that inflates to `mebibytes` MiB of zeros, built from one deflated MiB
 * repeated: a full flush ends each piece on a byte boundary with no history, so the pieces
 * concatenate, and a final empty block ends the stream. 1 GiB takes about 1 MB and no time.
 */
export function deflatedZeros(mebibytes: number): Uint8Array {
  const piece = zlib.deflateRawSync(Buffer.alloc(MIB), { finishFlush: zlib.constants.Z_FULL_FLUSH, level: 9 })
  const finalEmptyFixedBlock = Uint8Array.of(0x03, 0x00)
  return Buffer.concat([...Array.from({ length: mebibytes }, () => piece), finalEmptyFixedBlock])
}

// --------------------------------------------------------------------------------------------- XML

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)
}

const CONTENT_TYPES_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>'
const RELATIONSHIPS_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
const OFFICE_DOCUMENT_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument'

function contentTypesXml(overrides: Array<[partName: string, contentType: string]>): string {
  const parts = overrides.map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`).join('')
  return `${CONTENT_TYPES_HEAD}${parts}</Types>`
}

function relationshipsXml(relationships: Array<{ id: string; type: string; target: string }>): string {
  const body = relationships
    .map((rel) => `<Relationship Id="${rel.id}" Type="${rel.type}" Target="${rel.target}"/>`)
    .join('')
  return `${RELATIONSHIPS_HEAD}${body}</Relationships>`
}

// -------------------------------------------------------------------------------------------- DOCX

export type DocxBlock =
  | { paragraph: string; style?: string }
  | { list: string[]; ordered?: boolean; level?: number }
  | { table: string[][] }

export interface DocxFixture {
  blocks: DocxBlock[]
  /** Style id → style name, for styles whose ids are not the English names (e.g. {'berschrift1': 'heading 1'}). */
  styles?: Record<string, string>
  /** Replaces word/document.xml entirely (for malicious XML). */
  documentXml?: string
  /** Extra entries, or replacements by name. */
  extraEntries?: ZipFixtureEntry[]
}

const WORD_NAMESPACE = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'
const BULLET_NUMBERING_ID = 1
const DECIMAL_NUMBERING_ID = 2

/** Runs of a paragraph's text: tabs and line breaks become w:tab and w:br, as Word writes them. */
function docxRuns(text: string): string {
  return text
    .split(/(\t|\n)/)
    .map((piece) => {
      if (piece === '\t') return '<w:r><w:tab/></w:r>'
      if (piece === '\n') return '<w:r><w:br/></w:r>'
      if (piece === '') return ''
      return `<w:r><w:t xml:space="preserve">${escapeXml(piece)}</w:t></w:r>`
    })
    .join('')
}

function docxParagraph(text: string, properties = ''): string {
  return `<w:p>${properties ? `<w:pPr>${properties}</w:pPr>` : ''}${docxRuns(text)}</w:p>`
}

function docxBlock(block: DocxBlock): string {
  if ('paragraph' in block) {
    return docxParagraph(block.paragraph, block.style ? `<w:pStyle w:val="${block.style}"/>` : '')
  }
  if ('list' in block) {
    const numId = block.ordered ? DECIMAL_NUMBERING_ID : BULLET_NUMBERING_ID
    const numbering = `<w:numPr><w:ilvl w:val="${block.level ?? 0}"/><w:numId w:val="${numId}"/></w:numPr>`
    return block.list.map((item) => docxParagraph(item, `<w:pStyle w:val="ListParagraph"/>${numbering}`)).join('')
  }
  const rows = block.table
    .map((row) => `<w:tr>${row.map((cell) => `<w:tc><w:tcPr/>${docxParagraph(cell)}</w:tc>`).join('')}</w:tr>`)
    .join('')
  return `<w:tbl><w:tblPr/>${rows}</w:tbl>`
}

function docxStylesXml(styles: Record<string, string>): string {
  const all: Record<string, string> = { Normal: 'Normal', ListParagraph: 'List Paragraph', ...styles }
  const body = Object.entries(all)
    .map(([id, name]) => `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${escapeXml(name)}"/></w:style>`)
    .join('')
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles xmlns:w="${WORD_NAMESPACE}">${body}</w:styles>`
}

function docxNumberingXml(): string {
  const levels = (format: string) =>
    Array.from(
      { length: 9 },
      (_, level) => `<w:lvl w:ilvl="${level}"><w:start w:val="1"/><w:numFmt w:val="${format}"/></w:lvl>`,
    ).join('')
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering xmlns:w="${WORD_NAMESPACE}">` +
    `<w:abstractNum w:abstractNumId="10">${levels('bullet')}</w:abstractNum>` +
    `<w:abstractNum w:abstractNumId="20">${levels('decimal')}</w:abstractNum>` +
    `<w:num w:numId="${BULLET_NUMBERING_ID}"><w:abstractNumId w:val="10"/></w:num>` +
    `<w:num w:numId="${DECIMAL_NUMBERING_ID}"><w:abstractNumId w:val="20"/></w:num>` +
    '</w:numbering>'
  )
}

export function docxDocumentXml(blocks: DocxBlock[]): string {
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="${WORD_NAMESPACE}">` +
    `<w:body>${blocks.map(docxBlock).join('')}<w:sectPr/></w:body></w:document>`
  )
}

export function makeDocx(fixture: DocxFixture): Uint8Array {
  const main = 'application/vnd.openxmlformats-officedocument.wordprocessingml'
  const entries: ZipFixtureEntry[] = [
    {
      name: '[Content_Types].xml',
      data: contentTypesXml([
        ['/word/document.xml', `${main}.document.main+xml`],
        ['/word/styles.xml', `${main}.styles+xml`],
        ['/word/numbering.xml', `${main}.numbering+xml`],
      ]),
    },
    {
      name: '_rels/.rels',
      data: relationshipsXml([{ id: 'rId1', type: OFFICE_DOCUMENT_REL, target: 'word/document.xml' }]),
    },
    { name: 'word/document.xml', data: fixture.documentXml ?? docxDocumentXml(fixture.blocks) },
    { name: 'word/styles.xml', data: docxStylesXml(fixture.styles ?? {}) },
    { name: 'word/numbering.xml', data: docxNumberingXml() },
  ]
  return writeZip(withExtraEntries(entries, fixture.extraEntries))
}

function withExtraEntries(entries: ZipFixtureEntry[], extra: ZipFixtureEntry[] = []): ZipFixtureEntry[] {
  const replaced = new Set(extra.map((entry) => entry.name))
  return [...entries.filter((entry) => !replaced.has(entry.name)), ...extra]
}

// -------------------------------------------------------------------------------------------- PPTX

export interface PptxSlideFixture {
  title?: string
  body?: string[]
  notes?: string
}

export interface PptxFixture {
  slides: PptxSlideFixture[]
  /**
   * The slide files' numbers in presentation order (default 1..n): [2, 1] shows slide2.xml first,
   * as a deck whose slides were reordered does.
   */
  order?: number[]
  extraEntries?: ZipFixtureEntry[]
}

const PRESENTATION_NAMESPACES =
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
  'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
const SLIDE_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide'
const NOTES_SLIDE_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide'
const SLIDE_LAYOUT_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/slideLayout'

function pptxShape(id: number, placeholder: string, paragraphs: string[]): string {
  const text = paragraphs.map((line) => `<a:p><a:r><a:rPr lang="en-US"/><a:t>${escapeXml(line)}</a:t></a:r></a:p>`)
  return (
    `<p:sp><p:nvSpPr><p:cNvPr id="${id}" name="Shape ${id}"/><p:cNvSpPr/><p:nvPr>${placeholder}</p:nvPr></p:nvSpPr>` +
    `<p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>${text.join('')}</p:txBody></p:sp>`
  )
}

function pptxSlideXml(slide: PptxSlideFixture): string {
  // The body comes first in the file, so a reader that puts the title first shows it does so on purpose.
  const shapes = [
    slide.body ? pptxShape(3, '<p:ph idx="1"/>', slide.body) : '',
    slide.title !== undefined ? pptxShape(2, '<p:ph type="title"/>', [slide.title]) : '',
  ]
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:sld ${PRESENTATION_NAMESPACES}><p:cSld><p:spTree>` +
    `<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>${shapes.join('')}` +
    '</p:spTree></p:cSld></p:sld>'
  )
}

function pptxNotesXml(notes: string, slideNumber: number): string {
  // Real notes pages hold the slide's image and its number too; only the body is the speaker's notes.
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:notes ${PRESENTATION_NAMESPACES}><p:cSld><p:spTree>` +
    `<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
    pptxShape(2, '<p:ph type="sldImg"/>', []) +
    pptxShape(3, '<p:ph type="body" idx="1"/>', notes.split('\n')) +
    pptxShape(4, '<p:ph type="sldNum" sz="quarter" idx="5"/>', [String(slideNumber)]) +
    '</p:spTree></p:cSld></p:notes>'
  )
}

export function makePptx(fixture: PptxFixture): Uint8Array {
  const main = 'application/vnd.openxmlformats-officedocument.presentationml'
  const order = fixture.order ?? fixture.slides.map((_, index) => index + 1)
  const entries: ZipFixtureEntry[] = []
  const overrides: Array<[string, string]> = [['/ppt/presentation.xml', `${main}.presentation.main+xml`]]
  fixture.slides.forEach((slide, index) => {
    const number = index + 1
    overrides.push([`/ppt/slides/slide${number}.xml`, `${main}.slide+xml`])
    entries.push({ name: `ppt/slides/slide${number}.xml`, data: pptxSlideXml(slide) })
    const rels = [{ id: 'rId1', type: SLIDE_LAYOUT_REL, target: '../slideLayouts/slideLayout1.xml' }]
    if (slide.notes !== undefined) {
      overrides.push([`/ppt/notesSlides/notesSlide${number}.xml`, `${main}.notesSlide+xml`])
      entries.push({ name: `ppt/notesSlides/notesSlide${number}.xml`, data: pptxNotesXml(slide.notes, number) })
      rels.push({ id: 'rId2', type: NOTES_SLIDE_REL, target: `../notesSlides/notesSlide${number}.xml` })
    }
    entries.push({ name: `ppt/slides/_rels/slide${number}.xml.rels`, data: relationshipsXml(rels) })
  })
  const slideIds = order.map((number, index) => `<p:sldId id="${256 + index}" r:id="rId${100 + number}"/>`).join('')
  const presentation =
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:presentation ${PRESENTATION_NAMESPACES}>` +
    `<p:sldIdLst>${slideIds}</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/></p:presentation>`
  const presentationRels = fixture.slides.map((_, index) => ({
    id: `rId${101 + index}`,
    type: SLIDE_REL,
    target: `slides/slide${index + 1}.xml`,
  }))
  return writeZip(
    withExtraEntries(
      [
        { name: '[Content_Types].xml', data: contentTypesXml(overrides) },
        {
          name: '_rels/.rels',
          data: relationshipsXml([{ id: 'rId1', type: OFFICE_DOCUMENT_REL, target: 'ppt/presentation.xml' }]),
        },
        { name: 'ppt/presentation.xml', data: presentation },
        { name: 'ppt/_rels/presentation.xml.rels', data: relationshipsXml(presentationRels) },
        ...entries,
      ],
      fixture.extraEntries,
    ),
  )
}

// -------------------------------------------------------------------------------------------- XLSX

export type XlsxCell = string | number | boolean | null | { inline: string } | { formula: string; cached: string }

export interface XlsxSheetFixture {
  name: string
  rows: XlsxCell[][]
}

export interface XlsxFixture {
  sheets: XlsxSheetFixture[]
  /** Replaces a sheet's XML by its 1-based number (for malicious XML). */
  sheetXml?: Record<number, string>
  extraEntries?: ZipFixtureEntry[]
}

const SPREADSHEET_NAMESPACE = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const WORKSHEET_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet'
const SHARED_STRINGS_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings'

export function columnLetters(index: number): string {
  let letters = ''
  for (let rest = index + 1; rest > 0; rest = Math.floor((rest - 1) / 26)) {
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters
  }
  return letters
}

export function makeXlsx(fixture: XlsxFixture): Uint8Array {
  const main = 'application/vnd.openxmlformats-officedocument.spreadsheetml'
  const sharedStrings: string[] = []
  const sharedIndex = new Map<string, number>()
  const share = (text: string) => {
    let index = sharedIndex.get(text)
    if (index === undefined) {
      index = sharedStrings.length
      sharedStrings.push(text)
      sharedIndex.set(text, index)
    }
    return index
  }
  const cellXml = (cell: XlsxCell, reference: string): string => {
    if (cell === null) return ''
    if (typeof cell === 'number') return `<c r="${reference}"><v>${cell}</v></c>`
    if (typeof cell === 'boolean') return `<c r="${reference}" t="b"><v>${cell ? 1 : 0}</v></c>`
    if (typeof cell === 'string') return `<c r="${reference}" t="s"><v>${share(cell)}</v></c>`
    if ('inline' in cell) return `<c r="${reference}" t="inlineStr"><is><t>${escapeXml(cell.inline)}</t></is></c>`
    return `<c r="${reference}" t="str"><f>${escapeXml(cell.formula)}</f><v>${escapeXml(cell.cached)}</v></c>`
  }
  const sheets = fixture.sheets.map((sheet, sheetIndex) => {
    const rows = sheet.rows
      .map((row, rowIndex) => {
        const cells = row.map((cell, column) => cellXml(cell, `${columnLetters(column)}${rowIndex + 1}`)).join('')
        return `<row r="${rowIndex + 1}">${cells}</row>`
      })
      .join('')
    return (
      fixture.sheetXml?.[sheetIndex + 1] ??
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${SPREADSHEET_NAMESPACE}">` +
        `<sheetData>${rows}</sheetData></worksheet>`
    )
  })
  // Rich text in the first shared string when there is one: Excel writes runs for mixed formatting.
  const sharedStringsXml =
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="${SPREADSHEET_NAMESPACE}" ` +
    `count="${sharedStrings.length}" uniqueCount="${sharedStrings.length}">` +
    sharedStrings
      .map((text, index) => {
        if (index > 0 || text.length < 2) return `<si><t xml:space="preserve">${escapeXml(text)}</t></si>`
        const half = Math.floor(text.length / 2)
        return (
          `<si><r><rPr><b/></rPr><t xml:space="preserve">${escapeXml(text.slice(0, half))}</t></r>` +
          `<r><t xml:space="preserve">${escapeXml(text.slice(half))}</t></r></si>`
        )
      })
      .join('') +
    '</sst>'
  const sheetEntries = fixture.sheets
    .map((sheet, index) => `<sheet name="${escapeXml(sheet.name)}" sheetId="${index + 1}" r:id="rId${index + 1}"/>`)
    .join('')
  const workbook =
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="${SPREADSHEET_NAMESPACE}" ` +
    `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheetEntries}</sheets></workbook>`
  const workbookRels = [
    ...fixture.sheets.map((_, index) => ({
      id: `rId${index + 1}`,
      type: WORKSHEET_REL,
      target: `worksheets/sheet${index + 1}.xml`,
    })),
    { id: 'rIdStrings', type: SHARED_STRINGS_REL, target: 'sharedStrings.xml' },
  ]
  return writeZip(
    withExtraEntries(
      [
        {
          name: '[Content_Types].xml',
          data: contentTypesXml([
            ['/xl/workbook.xml', `${main}.sheet.main+xml`],
            ['/xl/sharedStrings.xml', `${main}.sharedStrings+xml`],
            ...fixture.sheets.map((_, index): [string, string] => [
              `/xl/worksheets/sheet${index + 1}.xml`,
              `${main}.worksheet+xml`,
            ]),
          ]),
        },
        {
          name: '_rels/.rels',
          data: relationshipsXml([{ id: 'rId1', type: OFFICE_DOCUMENT_REL, target: 'xl/workbook.xml' }]),
        },
        { name: 'xl/workbook.xml', data: workbook },
        { name: 'xl/_rels/workbook.xml.rels', data: relationshipsXml(workbookRels) },
        { name: 'xl/sharedStrings.xml', data: sharedStringsXml },
        ...sheets.map((xml, index) => ({ name: `xl/worksheets/sheet${index + 1}.xml`, data: xml })),
      ],
      fixture.extraEntries,
    ),
  )
}

// -------------------------------------------------------------------------------------------- HTML

/** An HTML page around `bodyHtml`, with the head, script and style that extraction must leave out. */
export function makeHtml(bodyHtml: string, title = 'Fixture page'): Uint8Array {
  return encoder.encode(
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
      `<title>${escapeXml(title)}</title><style>body { color: red }</style>` +
      '<script>var hidden = "script text"</script></head>\n' +
      `<body>${bodyHtml}<script>document.write("more script")</script></body></html>\n`,
  )
}

// --------------------------------------------------------------------------------------------- PDF

/** A PDF from its objects (1-based, in order): header, bodies, a cross-reference table with true offsets, trailer. */
export function writePdf(objects: Array<string | Uint8Array>, trailerExtra = ''): Uint8Array {
  const parts: Uint8Array[] = [encoder.encode('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n')]
  let length = parts[0]?.length ?? 0
  const offsets: number[] = []
  objects.forEach((body, index) => {
    offsets.push(length)
    const part = Buffer.concat([encoder.encode(`${index + 1} 0 obj\n`), bytesOf(body), encoder.encode('\nendobj\n')])
    parts.push(part)
    length += part.length
  })
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra}>>\nstartxref\n${length}\n%%EOF\n`
  parts.push(encoder.encode(xref))
  return Buffer.concat(parts)
}

function pdfStream(content: Uint8Array | string, dictionary = ''): Uint8Array {
  const data = bytesOf(content)
  return Buffer.concat([
    encoder.encode(`<< /Length ${data.length} ${dictionary}>>\nstream\n`),
    data,
    encoder.encode('\nendstream'),
  ])
}

function escapePdfString(text: string): string {
  return text.replace(/[\\()]/g, (character) => `\\${character}`)
}

const LETTER_WIDTH_PT = 612
const LETTER_HEIGHT_PT = 792
const TEXT_LEFT_PT = 72
const TEXT_TOP_PT = 720
const TEXT_LINE_PT = 16
const TEXT_FONT_PT = 12

/** A PDF whose page i shows pages[i]'s lines in Helvetica, top to bottom (a text layer on every page). */
export function makeTextPdf(pages: string[][]): Uint8Array {
  // Objects: 1 catalog, 2 pages, 3 font, then a page and its content stream per page.
  const firstPage = 4
  const kids = pages.map((_, index) => `${firstPage + index * 2} 0 R`).join(' ')
  const objects: Array<string | Uint8Array> = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ]
  pages.forEach((lines, index) => {
    const content =
      lines.length === 0
        ? ''
        : `BT /F1 ${TEXT_FONT_PT} Tf ${TEXT_LINE_PT} TL ${TEXT_LEFT_PT} ${TEXT_TOP_PT} Td ` +
          `${lines.map((line) => `(${escapePdfString(line)}) Tj T*`).join(' ')} ET`
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${LETTER_WIDTH_PT} ${LETTER_HEIGHT_PT}] ` +
        `/Resources << /Font << /F1 3 0 R >> >> /Contents ${firstPage + index * 2 + 1} 0 R >>`,
      pdfStream(content),
    )
  })
  return writePdf(objects)
}

/** A PDF of `pageCount` pages that all share one content stream: 20,000 pages in about a megabyte. */
export function makeManyPagePdf(pageCount: number): Uint8Array {
  const firstPage = 5
  const kids = Array.from({ length: pageCount }, (_, index) => `${firstPage + index} 0 R`).join(' ')
  const objects: Array<string | Uint8Array> = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pageCount} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    pdfStream(`BT /F1 ${TEXT_FONT_PT} Tf ${TEXT_LEFT_PT} ${TEXT_TOP_PT} Td (Same page text) Tj ET`),
  ]
  for (let index = 0; index < pageCount; index++) {
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${LETTER_WIDTH_PT} ${LETTER_HEIGHT_PT}] ` +
        '/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>',
    )
  }
  return writePdf(objects)
}

/** A "scanned" PDF: each page is only a JPEG image (DCTDecode) filling it, without a text layer. */
export function makeImagePdf(
  jpegPages: Uint8Array[],
  widthPt = LETTER_WIDTH_PT,
  heightPt = LETTER_HEIGHT_PT,
): Uint8Array {
  // Objects: 1 catalog, 2 pages, then per page: page, content stream, image.
  const firstPage = 3
  const kids = jpegPages.map((_, index) => `${firstPage + index * 3} 0 R`).join(' ')
  const objects: Array<string | Uint8Array> = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${jpegPages.length} >>`,
  ]
  jpegPages.forEach((jpeg, index) => {
    const dimensions = imageDimensions(jpeg)
    if (dimensions === undefined) throw new Error(`page ${index + 1} is not a JPEG`)
    const page = firstPage + index * 3
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${widthPt} ${heightPt}] ` +
        `/Resources << /XObject << /Im0 ${page + 2} 0 R >> >> /Contents ${page + 1} 0 R >>`,
      pdfStream(`q ${widthPt} 0 0 ${heightPt} 0 0 cm /Im0 Do Q`),
      pdfStream(
        jpeg,
        `/Type /XObject /Subtype /Image /Width ${dimensions.width} /Height ${dimensions.height} ` +
          '/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode ',
      ),
    )
  })
  return writePdf(objects)
}

const PASSWORD_PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex')
/** Print and copy allowed; the high bits the standard handler requires set. */
const PDF_PERMISSIONS = -44
const RC4_40_KEY_BYTES = 5

function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const state = Array.from({ length: 256 }, (_, index) => index)
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + (state[i] ?? 0) + (key[i % key.length] ?? 0)) & 255
    ;[state[i], state[j]] = [state[j] ?? 0, state[i] ?? 0]
  }
  const output = new Uint8Array(data.length)
  for (let index = 0, i = 0, j = 0; index < data.length; index++) {
    i = (i + 1) & 255
    j = (j + (state[i] ?? 0)) & 255
    ;[state[i], state[j]] = [state[j] ?? 0, state[i] ?? 0]
    output[index] = (data[index] ?? 0) ^ (state[((state[i] ?? 0) + (state[j] ?? 0)) & 255] ?? 0)
  }
  return output
}

const md5 = (...parts: Uint8Array[]) => crypto.createHash('md5').update(Buffer.concat(parts)).digest()
const padPassword = (password: string) =>
  Buffer.concat([Buffer.from(password, 'latin1'), PASSWORD_PADDING]).subarray(0, 32)

/**
 * A one-page PDF protected by the standard security handler (revision 2, RC4 40-bit) with a user
 * password, so no reader opens it without the password: pdfjs raises PasswordException.
 */
export function makeEncryptedPdf(userPassword = 'secret', ownerPassword = 'owner'): Uint8Array {
  const fileId = crypto.createHash('md5').update('memsvc encrypted fixture').digest()
  const owner = rc4(md5(padPassword(ownerPassword)).subarray(0, RC4_40_KEY_BYTES), padPassword(userPassword))
  const permissions = Buffer.alloc(4)
  permissions.writeInt32LE(PDF_PERMISSIONS)
  const key = md5(padPassword(userPassword), owner, permissions, fileId).subarray(0, RC4_40_KEY_BYTES)
  const user = rc4(key, PASSWORD_PADDING)
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
  // The content is encrypted with the object's key, as a real encrypted file's is.
  const contentObject = 5
  const objectKey = md5(key, Uint8Array.of(contentObject, 0, 0, 0, 0)).subarray(0, RC4_40_KEY_BYTES + 5)
  const content = rc4(objectKey, encoder.encode('BT /F1 12 Tf 72 720 Td (Secret text) Tj ET'))
  return writePdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
      `<< /Filter /Standard /V 1 /R 2 /O <${hex(owner)}> /U <${hex(user)}> /P ${PDF_PERMISSIONS} >>`,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${LETTER_WIDTH_PT} ${LETTER_HEIGHT_PT}] /Contents 5 0 R >>`,
      pdfStream(content),
    ],
    `/Encrypt 3 0 R /ID [<${hex(fileId)}> <${hex(fileId)}>] `,
  )
}

// ------------------------------------------------------------------------------------------ Images

export interface TextImageOptions {
  format: 'png' | 'jpeg' | 'webp'
  width: number
  height: number
  /** Pixels; about 40 is what OCR reads reliably. */
  fontSize?: number
}

const DEFAULT_IMAGE_FONT_PX = 40
const IMAGE_MARGIN_PX = 20
const LINE_SPACING = 1.5
const JPEG_QUALITY = 92

/** Black text (lines split at \n) on white, with the system's sans-serif font (DejaVu Sans here). */
export function renderTextImage(text: string, options: TextImageOptions): Uint8Array {
  const fontSize = options.fontSize ?? DEFAULT_IMAGE_FONT_PX
  const canvas = createCanvas(options.width, options.height)
  const context = canvas.getContext('2d')
  context.fillStyle = '#ffffff'
  context.fillRect(0, 0, options.width, options.height)
  context.fillStyle = '#000000'
  context.font = `${fontSize}px sans-serif`
  context.textBaseline = 'top'
  text.split('\n').forEach((line, index) => {
    context.fillText(line, IMAGE_MARGIN_PX, IMAGE_MARGIN_PX + index * fontSize * LINE_SPACING)
  })
  if (options.format === 'png') return canvas.encodeSync('png')
  return canvas.encodeSync(options.format, JPEG_QUALITY)
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const header = Buffer.alloc(8)
  header.writeUInt32BE(data.length, 0)
  header.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([header.subarray(4), data])))
  return Buffer.concat([header, data, crc])
}

/** Just a PNG's signature and IHDR chunk claiming `width` × `height`: what a decompression bomb starts with. */
export function pngHeader(width: number, height: number): Uint8Array {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.writeUInt8(8, 8)
  header.writeUInt8(2, 9)
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), pngChunk('IHDR', header)])
}

/** A complete 24-bit BMP of white pixels (BITMAPINFOHEADER; rows padded to 4 bytes). */
export function makeBmp(width: number, height: number): Uint8Array {
  const rowBytes = Math.ceil((width * 3) / 4) * 4
  const pixelBytes = rowBytes * height
  const file = Buffer.alloc(54 + pixelBytes, 0xff)
  file.write('BM', 0, 'latin1')
  file.writeUInt32LE(file.length, 2)
  file.writeUInt32LE(0, 6)
  file.writeUInt32LE(54, 10)
  file.writeUInt32LE(40, 14)
  file.writeInt32LE(width, 18)
  file.writeInt32LE(height, 22)
  file.writeUInt16LE(1, 26)
  file.writeUInt16LE(24, 28)
  file.writeUInt32LE(0, 30)
  file.writeUInt32LE(pixelBytes, 34)
  file.fill(0, 38, 54)
  return file
}

/** A complete uncompressed 8-bit grayscale TIFF of white pixels, in either byte order. */
export function makeTiff(width: number, height: number, byteOrder: 'little' | 'big' = 'little'): Uint8Array {
  const little = byteOrder === 'little'
  const entries: Array<[tag: number, type: number, value: number]> = [
    [256, 4, width], // ImageWidth, LONG
    [257, 3, height], // ImageLength, SHORT
    [258, 3, 8], // BitsPerSample
    [259, 3, 1], // Compression: none
    [262, 3, 1], // PhotometricInterpretation: black is zero
    [273, 4, 0], // StripOffsets, filled in below
    [277, 3, 1], // SamplesPerPixel
    [278, 4, height], // RowsPerStrip
    [279, 4, width * height], // StripByteCounts
  ]
  const directoryOffset = 8
  const directorySize = 2 + entries.length * 12 + 4
  const pixelsOffset = directoryOffset + directorySize
  const file = Buffer.alloc(pixelsOffset + width * height, 0xff)
  const u16 = (value: number, at: number) => (little ? file.writeUInt16LE(value, at) : file.writeUInt16BE(value, at))
  const u32 = (value: number, at: number) => (little ? file.writeUInt32LE(value, at) : file.writeUInt32BE(value, at))
  file.write(little ? 'II' : 'MM', 0, 'latin1')
  u16(42, 2)
  u32(directoryOffset, 4)
  u16(entries.length, directoryOffset)
  entries.forEach(([tag, type, value], index) => {
    const at = directoryOffset + 2 + index * 12
    u16(tag, at)
    u16(type, at + 2)
    u32(1, at + 4)
    if (type === 3) {
      file.fill(0, at + 8, at + 12)
      u16(value, at + 8)
    } else u32(tag === 273 ? pixelsOffset : value, at + 8)
  })
  u32(0, directoryOffset + directorySize - 4)
  return file
}
