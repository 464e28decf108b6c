// PDF pages drawn by pdfjs onto @napi-rs/canvas (src/documents/page-render.ts): the PNG's
// pixel size follows the DPI, a page over the pixel limit is refused before a surface is
// allocated, and the drawn text is the text (OCR reads it back).
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExtractionError } from '../../src/documents/extracted-document.js'
import { TesseractOcrEngine } from '../../src/documents/ocr.js'
import { renderPdfPage } from '../../src/documents/page-render.js'
import { pdfjsResourceUrls } from '../../src/runtime/document-assets.js'
import { makeTextPdf } from '../support/document-fixtures.js'
import { OCR_SENTENCE, OCR_WORDS } from '../support/ocr-images.js'

const TEST_TIMEOUT_MS = 120_000
/** makeTextPdf's pages are US Letter: 612 × 792 points. */
const LETTER = { width: 612, height: 792 }
const PNG_WIDTH_OFFSET = 16
const PNG_HEIGHT_OFFSET = 20
const NO_LIMIT = 1_000_000_000

let document: PDFDocumentProxy

beforeAll(async () => {
  const pdf = makeTextPdf([[OCR_SENTENCE, 'Second line of the saffron walnut page']])
  document = await getDocument({ data: new Uint8Array(pdf), ...pdfjsResourceUrls(), verbosity: 0 }).promise
})

afterAll(async () => {
  await document?.loadingTask.destroy()
})

function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = Buffer.from(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.readUInt32BE(PNG_WIDTH_OFFSET), height: view.readUInt32BE(PNG_HEIGHT_OFFSET) }
}

describe('PDF page rendering', { timeout: TEST_TIMEOUT_MS }, () => {
  it.each([72, 150, 300])('draws a Letter page at %i DPI as a PNG of the page size in pixels', async (dpi) => {
    const page = await document.getPage(1)
    const png = await renderPdfPage(page, dpi, NO_LIMIT)
    expect(Buffer.from(png.subarray(1, 4)).toString('latin1')).toBe('PNG')
    expect(pngSize(png)).toEqual({
      width: Math.ceil((LETTER.width * dpi) / 72),
      height: Math.ceil((LETTER.height * dpi) / 72),
    })
  })

  it('refuses a page whose image would be over the pixel limit, naming the sizes', async () => {
    const page = await document.getPage(1)
    // 300 DPI: 2550 × 3300 = 8,415,000 pixels.
    const refused = renderPdfPage(page, 300, 8_000_000)
    await expect(refused).rejects.toBeInstanceOf(ExtractionError)
    await expect(refused).rejects.toThrow(
      'page 1 at 300 DPI would be 2550 × 3300 pixels (8415000), more than the limit of 8000000',
    )
  })

  it('draws the text with the standard fonts so that OCR reads it back', async () => {
    const ocr = new TesseractOcrEngine({ concurrency: 1 })
    try {
      const png = await renderPdfPage(await document.getPage(1), 300, NO_LIMIT)
      const { text, confidence } = await ocr.recognize(png, ['eng'])
      for (const word of [...OCR_WORDS, 'saffron', 'walnut']) expect(text).toContain(word)
      expect(confidence).toBeGreaterThan(80)
    } finally {
      await ocr.close()
    }
  })
})
