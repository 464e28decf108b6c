import { describe, expect, it } from 'vitest'
import { type ExtractionTools, extractDocument } from '../../../src/documents/extract-document.js'
import type { DocumentKind } from '../../../src/documents/extracted-document.js'
import { ExtractionError } from '../../../src/documents/extracted-document.js'
import {
  docxDocumentXml,
  extractionOptions,
  makeDocx,
  makeEncryptedPdf,
  makeHtml,
  makePptx,
  makeTextPdf,
  makeXlsx,
  recordingSink,
  renderTextImage,
  writeZip,
} from '../../support/document-fixtures.js'

/**
 * Documents that cannot be read end with an ExtractionError whose message tells the user why:
 * it becomes the memory's FAILED reason. Nothing here may crash the thread or hang.
 */

const options = extractionOptions()

/**
 * OCR that answers "nothing found": the image cases here are about what the orchestrator does
 * with a damaged or empty image, not about recognition (real OCR is tested in the OCR helper's suite).
 */
const blindTools: ExtractionTools = {
  ocr: { recognize: async () => ({ text: '', confidence: 0 }) },
  renderPdfPage: async () => renderTextImage('', { format: 'png', width: 10, height: 10 }),
}

async function failure(bytes: Uint8Array, kind: DocumentKind, extraction = options): Promise<string> {
  const outcome = await extractDocument(bytes, kind, extraction, recordingSink(), blindTools).then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(outcome).toBeInstanceOf(ExtractionError)
  return (outcome as ExtractionError).message
}

describe('PDFs that cannot be read', () => {
  it('says a password-protected PDF is encrypted', async () => {
    expect(await failure(makeEncryptedPdf(), 'pdf')).toBe(
      'the PDF is encrypted (password-protected); memsvc cannot read it',
    )
  })

  it('says a corrupt PDF is damaged, with pdfjs’s reason', async () => {
    const corrupt = new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage garbage\n%%EOF')
    expect(await failure(corrupt, 'pdf')).toBe('the PDF is damaged or not a PDF: Invalid PDF structure.')
  })

  it('says which pages have no text when none has any and OCR is off', async () => {
    const blank = makeTextPdf([[], []])
    expect(await failure(blank, 'pdf', extractionOptions({ ocr: 'OFF' }))).toBe(
      "no text could be extracted (the PDF's 2 pages have no text layer, and OCR is off for this memory)",
    )
    expect(await failure(blank, 'pdf')).toBe(
      "no text could be extracted (neither a text layer nor OCR gave text on the PDF's 2 pages)",
    )
  })
})

describe('Office files that cannot be read', () => {
  it('says a zip without the main part is damaged, naming the part', async () => {
    const notWord = writeZip([{ name: 'word/other.xml', data: '<x/>' }])
    expect(await failure(notWord, 'docx')).toBe('the Word document is damaged: it has no word/document.xml')
    expect(await failure(notWord, 'pptx')).toBe(
      'the PowerPoint presentation is damaged: it has no ppt/presentation.xml',
    )
    expect(await failure(notWord, 'xlsx')).toBe('the Excel workbook is damaged: it has no xl/workbook.xml')
  })

  it('says a non-zip is not the document it claims to be', async () => {
    const png = renderTextImage('x', { format: 'png', width: 20, height: 20 })
    expect(await failure(png, 'docx')).toBe('the Word document is damaged or truncated: its ZIP directory is missing')
  })

  it('says a slide or sheet the package lists is missing', async () => {
    const pptx = makePptx({ slides: [{ title: 'A' }], extraEntries: [{ name: 'ppt/slides/slide1.xml', data: '' }] })
    const withoutSlide = writeZip([
      {
        name: 'ppt/presentation.xml',
        data: '<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId r:id="rId9"/></p:sldIdLst></p:presentation>',
      },
    ])
    expect(await failure(withoutSlide, 'pptx')).toBe('the PowerPoint presentation is damaged: slide 1 is missing')
    expect(await failure(pptx, 'pptx')).toBe('ppt/slides/slide1.xml is empty or not XML')
  })

  it('says an empty document holds no text', async () => {
    expect(await failure(makeDocx({ blocks: [{ paragraph: '   ' }] }), 'docx')).toBe(
      'no text could be extracted (the Word document holds no text)',
    )
    expect(await failure(makeXlsx({ sheets: [{ name: 'Empty', rows: [] }] }), 'xlsx')).toBe(
      'no text could be extracted (the workbook holds no text)',
    )
    expect(await failure(makePptx({ slides: [{}] }), 'pptx')).toBe(
      'no text could be extracted (the presentation holds no text)',
    )
    expect(await failure(makeHtml('<script>only()</script>'), 'html')).toBe(
      'no text could be extracted (the HTML page holds no text)',
    )
  })
})

describe('images that cannot be read', () => {
  it('refuses an image with OCR off, saying why', async () => {
    const png = renderTextImage('Hello', { format: 'png', width: 200, height: 80 })
    expect(await failure(png, 'image', extractionOptions({ ocr: 'OFF' }))).toBe(
      'an image has no text without OCR, and OCR is off for this memory',
    )
  })

  it('says an image without readable dimensions is damaged', async () => {
    expect(await failure(new TextEncoder().encode('not an image'), 'image')).toBe(
      'the image is damaged or truncated: its size cannot be read from its header',
    )
  })

  it('says OCR found nothing when it found nothing', async () => {
    const png = renderTextImage('', { format: 'png', width: 50, height: 50 })
    expect(await failure(png, 'image')).toBe('no text could be extracted (OCR found no text in the image)')
  })
})

describe('truncated files of every kind', () => {
  const documents: Array<[DocumentKind, Uint8Array]> = [
    ['pdf', makeTextPdf([['First page text'], ['Second page text']])],
    ['docx', makeDocx({ blocks: [{ paragraph: 'Word text' }, { table: [['a', 'b']] }] })],
    ['pptx', makePptx({ slides: [{ title: 'Slide', body: ['text'], notes: 'notes' }] })],
    ['xlsx', makeXlsx({ sheets: [{ name: 'S', rows: [['h'], ['v']] }] })],
    ['html', makeHtml('<h1>Title</h1><p>Paragraph text</p>')],
    ['image', renderTextImage('Image', { format: 'jpeg', width: 120, height: 60 })],
  ]
  /** Cut points: the first bytes only, then 10%…99% of the file, then all but the last byte. */
  const fractions = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]

  it.each(documents)(
    'a truncated %s ends in an ExtractionError or in text, never in another error',
    async (kind, bytes) => {
      const cuts = [...fractions.map((fraction) => Math.max(1, Math.floor(bytes.length * fraction))), bytes.length - 1]
      for (const cut of cuts) {
        const outcome = await extractDocument(bytes.subarray(0, cut), kind, options, recordingSink(), blindTools).then(
          (document) => document,
          (error: unknown) => error,
        )
        // HTML and (thanks to pdfjs's repair) some PDFs still have text when cut; Office files never do.
        if (outcome instanceof ExtractionError) expect(outcome.message.length).toBeGreaterThan(10)
        else
          expect(outcome, `${kind} cut at ${cut} of ${bytes.length}`).toMatchObject({ kind, text: expect.any(String) })
        if (['docx', 'pptx', 'xlsx'].includes(kind)) expect(outcome).toBeInstanceOf(ExtractionError)
      }
    },
  )

  it('a word/document.xml cut in the middle of its XML still gives what it holds or a clear error', async () => {
    const xml = docxDocumentXml([{ paragraph: 'kept' }, { paragraph: 'lost' }])
    const cut = makeDocx({ blocks: [], documentXml: xml.slice(0, xml.indexOf('lost')) })
    const outcome = await extractDocument(cut, 'docx', options, recordingSink(), blindTools).then(
      (document) => document.text,
      (error: unknown) => (error as Error).message,
    )
    expect(outcome).toMatch(/kept|not well-formed/)
  })
})
