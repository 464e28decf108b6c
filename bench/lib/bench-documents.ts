// The documents the documents benchmark (`--documents`) uploads and hands to its floors,
// written to disk in the run's scratch directory: a text PDF, pages of large printed text
// as JPEG scans (and a PDF of them), and a PDF of about 200 MB. All are deterministic
// except the large PDF's image noise, which only has to be incompressible.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { renderTextImage } from '../../test/support/document-fixtures.js'
import { memoryCorpus } from './memory-corpus.js'
import { PdfFileWriter } from './pdf-file-writer.js'

/** US Letter in points (1/72 inch). */
const LETTER_WIDTH_PT = 612
const LETTER_HEIGHT_PT = 792
const TEXT_LEFT_PT = 72
const TEXT_TOP_PT = 740
const TEXT_FONT_PT = 11
const TEXT_LEADING_PT = 15
/** A dense page of prose: some 40 lines of up to 90 characters (about 3.5 kB of text). */
const TEXT_LINES_PER_PAGE = 40
const TEXT_LINE_CHARACTERS = 90
/** A scan at the DPI memsvc renders pages for OCR (OCR_RENDER_DPI): the page rendered is the scan, pixel for pixel. */
const SCAN_DPI = 300
const POINTS_PER_INCH = 72
/** "A lighter page": a few lines of large print, so that tesseract takes about a second a page here, not five. */
const SCAN_LINES_PER_PAGE = 6
const SCAN_LINE_CHARACTERS = 36
const SCAN_FONT_PX = 64
/** The large PDF: a short text layer per page (so that OCR AUTO leaves it alone) and one raw 1 MiB image. */
const LARGE_PAGE_TEXT_LINES = 8
const LARGE_IMAGE_SIDE_PX = 1024
const LARGE_IMAGE_BYTES = LARGE_IMAGE_SIDE_PX * LARGE_IMAGE_SIDE_PX

let corpus: ReturnType<typeof memoryCorpus> | undefined

/** Lines of the corpus's prose, each up to `width` characters, from chunk `firstChunk` on. */
function proseLines(count: number, width: number, firstChunk: number): string[] {
  corpus ??= memoryCorpus()
  const lines: string[] = []
  let line = ''
  for (let chunk = firstChunk; lines.length < count; chunk++) {
    for (const word of corpus.chunk(chunk).split(' ')) {
      if (line !== '' && line.length + 1 + word.length > width) {
        lines.push(line)
        line = ''
        if (lines.length === count) break
      }
      line = line === '' ? word : `${line} ${word}`
    }
  }
  return lines
}

const escapePdfString = (text: string) => text.replace(/[\\()]/g, (character) => `\\${character}`)

/** A content stream showing `lines` in Helvetica from the top left. */
function textContent(lines: string[]): string {
  const shown = lines.map((line) => `(${escapePdfString(line)}) Tj T*`).join(' ')
  return `BT /F1 ${TEXT_FONT_PT} Tf ${TEXT_LEADING_PT} TL ${TEXT_LEFT_PT} ${TEXT_TOP_PT} Td ${shown} ET`
}

/** The catalog and page tree around pages written by `writePage`; returns the file's size. */
function writePagedPdf(
  file: string,
  pageCount: number,
  writePage: (writer: PdfFileWriter, pageIndex: number, pageObject: number, treeObject: number) => void,
): number {
  const writer = new PdfFileWriter(file)
  const catalog = writer.reserve()
  const tree = writer.reserve()
  const pages = Array.from({ length: pageCount }, () => writer.reserve())
  for (const [index, pageObject] of pages.entries()) writePage(writer, index, pageObject, tree)
  writer.writeObject(
    `<< /Type /Pages /Kids [${pages.map((page) => `${page} 0 R`).join(' ')}] /Count ${pageCount} >>`,
    tree,
  )
  writer.writeObject(`<< /Type /Catalog /Pages ${tree} 0 R >>`, catalog)
  return writer.close(catalog)
}

export interface WrittenFile {
  file: string
  bytes: number
  pages: number
}

/** `pageCount` Letter pages of prose in Helvetica, each with a text layer. */
export function writeTextPdf(file: string, pageCount: number): WrittenFile {
  let font = 0
  const bytes = writePagedPdf(file, pageCount, (writer, index, pageObject, tree) => {
    font ||= writer.writeObject('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>')
    const lines = proseLines(TEXT_LINES_PER_PAGE, TEXT_LINE_CHARACTERS, index * TEXT_LINES_PER_PAGE)
    const content = writer.writeStream(textContent(lines))
    writer.writeObject(
      `<< /Type /Page /Parent ${tree} 0 R /MediaBox [0 0 ${LETTER_WIDTH_PT} ${LETTER_HEIGHT_PT}] ` +
        `/Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      pageObject,
    )
  })
  return { file, bytes, pages: pageCount }
}

export interface ScannedPages {
  /** One JPEG per page, page-001.jpg…, as a scanner would give them: what the OCR floor reads. */
  imageFiles: string[]
  imageBytes: number
  /** The same JPEGs as the pages of one PDF, each drawn over its whole Letter page. */
  pdf: WrittenFile
  width: number
  height: number
}

/** `pageCount` scans of a few lines of large print, at SCAN_DPI over a Letter page, and a PDF of them. */
export function writeScannedPages(dir: string, pageCount: number): ScannedPages {
  fs.mkdirSync(dir, { recursive: true })
  const width = Math.round((LETTER_WIDTH_PT * SCAN_DPI) / POINTS_PER_INCH)
  const height = Math.round((LETTER_HEIGHT_PT * SCAN_DPI) / POINTS_PER_INCH)
  const imageFiles: string[] = []
  let imageBytes = 0
  const bytes = writePagedPdf(path.join(dir, 'scanned.pdf'), pageCount, (writer, index, pageObject, tree) => {
    const text = proseLines(SCAN_LINES_PER_PAGE, SCAN_LINE_CHARACTERS, index * SCAN_LINES_PER_PAGE).join('\n')
    const jpeg = renderTextImage(text, { format: 'jpeg', width, height, fontSize: SCAN_FONT_PX })
    const imageFile = path.join(dir, `page-${String(index + 1).padStart(3, '0')}.jpg`)
    fs.writeFileSync(imageFile, jpeg)
    imageFiles.push(imageFile)
    imageBytes += jpeg.length
    const image = writer.writeStream(
      jpeg,
      `/Type /XObject /Subtype /Image /Width ${width} /Height ${height} ` +
        '/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode ',
    )
    const content = writer.writeStream(`q ${LETTER_WIDTH_PT} 0 0 ${LETTER_HEIGHT_PT} 0 0 cm /Im0 Do Q`)
    writer.writeObject(
      `<< /Type /Page /Parent ${tree} 0 R /MediaBox [0 0 ${LETTER_WIDTH_PT} ${LETTER_HEIGHT_PT}] ` +
        `/Resources << /XObject << /Im0 ${image} 0 R >> >> /Contents ${content} 0 R >>`,
      pageObject,
    )
  })
  return {
    imageFiles,
    imageBytes,
    pdf: { file: path.join(dir, 'scanned.pdf'), bytes, pages: pageCount },
    width,
    height,
  }
}

/**
 * A PDF of at least `minimumBytes`: pages with a few lines of text each (a text layer, so OCR
 * AUTO reads none of them) and a 1024 × 1024 grey image of random noise (1 MiB, uncompressed
 * and incompressible, as scanned pages' JPEG data is), drawn under the text. Written page by
 * page: only one page's image is in this process's memory at a time.
 */
export function writeLargePdf(file: string, minimumBytes: number): WrittenFile {
  const pageCount = Math.max(1, Math.ceil(minimumBytes / LARGE_IMAGE_BYTES))
  const noise = Buffer.alloc(LARGE_IMAGE_BYTES)
  let font = 0
  const bytes = writePagedPdf(file, pageCount, (writer, index, pageObject, tree) => {
    font ||= writer.writeObject('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>')
    crypto.randomFillSync(noise)
    const image = writer.writeStream(
      noise,
      `/Type /XObject /Subtype /Image /Width ${LARGE_IMAGE_SIDE_PX} /Height ${LARGE_IMAGE_SIDE_PX} ` +
        '/ColorSpace /DeviceGray /BitsPerComponent 8 ',
    )
    const lines = proseLines(LARGE_PAGE_TEXT_LINES, TEXT_LINE_CHARACTERS, index * LARGE_PAGE_TEXT_LINES)
    const content = writer.writeStream(
      `q ${LETTER_WIDTH_PT} 0 0 ${LETTER_HEIGHT_PT} 0 0 cm /Im0 Do Q ${textContent(lines)}`,
    )
    writer.writeObject(
      `<< /Type /Page /Parent ${tree} 0 R /MediaBox [0 0 ${LETTER_WIDTH_PT} ${LETTER_HEIGHT_PT}] ` +
        `/Resources << /Font << /F1 ${font} 0 R >> /XObject << /Im0 ${image} 0 R >> >> /Contents ${content} 0 R >>`,
      pageObject,
    )
  })
  return { file, bytes, pages: pageCount }
}
