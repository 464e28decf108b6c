import { describe, expect, it } from 'vitest'
import { type ExtractionTools, extractDocument } from '../../../src/documents/extract-document.js'
import { ExtractionError, OCR_RENDER_DPI, type OcrMode } from '../../../src/documents/extracted-document.js'
import { imageDimensions } from '../../../src/documents/image-dimensions.js'
import { renderPdfPage } from '../../../src/documents/page-render.js'
import {
  extractionOptions,
  makeImagePdf,
  makeTextPdf,
  recordingSink,
  renderTextImage,
} from '../../support/document-fixtures.js'

/**
 * Which pages the orchestrator sends to OCR and rendering under each OCR mode, and what it
 * records about them. The OCR engine and the renderer are fakes here on purpose: the subject
 * is the orchestrator's decisions (which page, at which DPI, in which order), and a fake makes
 * each call visible and its answer known. Real recognition is tested with tesseract in the OCR
 * helper's suite; one test below renders with the real renderer.
 */

interface Call {
  what: 'render' | 'ocr' | 'page-image' | 'page-image-stored'
  page: number
  dpi?: number
}

function fakeTools(options: { ocrText?: (page: number) => string; refuseRenderAbove?: number } = {}) {
  const calls: Call[] = []
  let lastRenderedPage = 0
  const tools: ExtractionTools = {
    renderPdfPage: async (page, dpi) => {
      calls.push({ what: 'render', page: page.pageNumber, dpi })
      lastRenderedPage = page.pageNumber
      if (options.refuseRenderAbove !== undefined && dpi > options.refuseRenderAbove) {
        throw new ExtractionError(`page ${page.pageNumber} at ${dpi} DPI would be too many pixels`)
      }
      return Uint8Array.of(page.pageNumber, dpi)
    },
    ocr: {
      recognize: async (image) => {
        // The fake renderer's two-byte "image" names its page; a real rendering is of the last page rendered.
        const page = image.length === 2 ? (image[0] ?? 0) : lastRenderedPage
        calls.push({ what: 'ocr', page })
        return { text: options.ocrText?.(page) ?? `OCR text of page ${page}`, confidence: 87 }
      },
    },
  }
  return { tools, calls }
}

/** Page 1 has a text layer, page 2 none (a scan), page 3 a text layer. */
const mixedPdf = makeTextPdf([['Layer text one'], [], ['Layer text three']])

async function extractMixed(ocr: OcrMode, tools: ExtractionTools) {
  return extractDocument(mixedPdf, 'pdf', extractionOptions({ ocr }), recordingSink(), tools)
}

describe('OCR of PDF pages', () => {
  it('AUTO sends only the page without a text layer to OCR, rendered at OCR_RENDER_DPI', async () => {
    const { tools, calls } = fakeTools()
    const document = await extractMixed('AUTO', tools)
    expect(calls).toEqual([
      { what: 'render', page: 2, dpi: OCR_RENDER_DPI },
      { what: 'ocr', page: 2 },
    ])
    expect(document.text).toBe('Layer text one\n\nOCR text of page 2\n\nLayer text three')
    expect(document.pages).toEqual([
      { pageNumber: 1, method: 'TEXT', characters: 14 },
      { pageNumber: 2, method: 'OCR', ocrConfidence: 87, characters: 18 },
      { pageNumber: 3, method: 'TEXT', characters: 16 },
    ])
    expect(document.sections.map((section) => section.page)).toEqual([1, 2, 3])
  })

  it('ON sends every page to OCR and uses what OCR reads', async () => {
    const { tools, calls } = fakeTools()
    const document = await extractMixed('ON', tools)
    expect(calls.filter((call) => call.what === 'ocr').map((call) => call.page)).toEqual([1, 2, 3])
    expect(document.pages.map((page) => page.method)).toEqual(['OCR', 'OCR', 'OCR'])
    expect(document.text).toBe('OCR text of page 1\n\nOCR text of page 2\n\nOCR text of page 3')
  })

  it('ON keeps a page’s text layer when OCR reads nothing there', async () => {
    const { tools } = fakeTools({ ocrText: (page) => (page === 1 ? '' : `OCR ${page}`) })
    const document = await extractMixed('ON', tools)
    expect(document.pages[0]).toEqual({
      pageNumber: 1,
      method: 'TEXT',
      characters: 14,
      note: 'OCR found no text; the text layer is used',
    })
    expect(document.text.startsWith('Layer text one')).toBe(true)
  })

  it('OFF never calls OCR and notes the page without text', async () => {
    const { tools, calls } = fakeTools()
    const document = await extractMixed('OFF', tools)
    expect(calls).toEqual([])
    expect(document.pages[1]).toEqual({
      pageNumber: 2,
      method: 'NONE',
      characters: 0,
      note: 'no text layer; OCR is off',
    })
    expect(document.text).toBe('Layer text one\n\nLayer text three')
  })

  it('notes a page too large to render for OCR instead of failing the document', async () => {
    const { tools } = fakeTools({ refuseRenderAbove: 200 })
    const document = await extractMixed('AUTO', tools)
    expect(document.pages[1]).toEqual({
      pageNumber: 2,
      method: 'NONE',
      characters: 0,
      note: 'not read by OCR: page 2 at 300 DPI would be too many pixels',
    })
  })

  it('lets an OCR engine failure through as it is, so that the job can retry it', async () => {
    const failing: ExtractionTools = {
      ...fakeTools().tools,
      ocr: {
        recognize: async () => {
          throw new Error('the OCR thread stopped')
        },
      },
    }
    const outcome = await extractMixed('AUTO', failing).catch((error: unknown) => error)
    expect(outcome).toBeInstanceOf(Error)
    expect(outcome).not.toBeInstanceOf(ExtractionError)
  })

  it('reports progress by stage', async () => {
    const { tools } = fakeTools()
    const sink = recordingSink()
    await extractDocument(mixedPdf, 'pdf', extractionOptions({ ocr: 'AUTO' }), sink, tools)
    expect(sink.updates).toEqual([
      { stage: 'EXTRACTING', pagesDone: 1, pagesTotal: 3 },
      { stage: 'OCR', pagesDone: 1, pagesTotal: 3 },
      { stage: 'EXTRACTING', pagesDone: 2, pagesTotal: 3 },
      { stage: 'EXTRACTING', pagesDone: 3, pagesTotal: 3 },
    ])
  })
})

describe('page images', () => {
  it('renders every page at pageImageDpi and waits for each image to be stored before the next page', async () => {
    const { tools, calls } = fakeTools()
    const options = extractionOptions({ ocr: 'OFF', extractPageImages: true, pageImageDpi: 72 })
    const sink = {
      ...recordingSink(),
      pageImage: async (pageNumber: number) => {
        calls.push({ what: 'page-image', page: pageNumber })
        await new Promise((resolve) => setTimeout(resolve, 20))
        calls.push({ what: 'page-image-stored', page: pageNumber })
      },
    }
    const document = await extractDocument(mixedPdf, 'pdf', options, sink, tools)
    expect(calls).toEqual(
      [1, 2, 3].flatMap((page) => [
        { what: 'render', page, dpi: 72 },
        { what: 'page-image', page },
        { what: 'page-image-stored', page },
      ]),
    )
    expect(document.pages.map((page) => page.imageStored)).toEqual([true, true, true])
  })

  it('keeps a page too large to render as an image, saying why it has no image', async () => {
    const { tools } = fakeTools({ refuseRenderAbove: 100 })
    const options = extractionOptions({ ocr: 'OFF', extractPageImages: true, pageImageDpi: 150 })
    const document = await extractDocument(mixedPdf, 'pdf', options, recordingSink(), tools)
    expect(document.pages[0]).toEqual({
      pageNumber: 1,
      method: 'TEXT',
      characters: 14,
      imageStored: false,
      note: 'no page image: page 1 at 150 DPI would be too many pixels',
    })
    expect(document.pages[1]?.note).toBe(
      'no text layer; OCR is off; no page image: page 2 at 150 DPI would be too many pixels',
    )
  })

  it('renders a scanned page with the real renderer at the requested size', async () => {
    // Real rendering here: the page image must really be the page, at 72 DPI a 200 × 100 pt page is 200 × 100 px.
    const scan = makeImagePdf([renderTextImage('Scanned words', { format: 'jpeg', width: 400, height: 200 })], 200, 100)
    const sink = recordingSink()
    const { tools } = fakeTools()
    const options = extractionOptions({ ocr: 'AUTO', extractPageImages: true, pageImageDpi: 72 })
    const document = await extractDocument(scan, 'pdf', options, sink, {
      ocr: tools.ocr,
      renderPdfPage: async (page, dpi, maxPixels) => {
        await tools.renderPdfPage(page, dpi, maxPixels)
        return renderPdfPage(page, dpi, maxPixels)
      },
    })
    const png = sink.images.get(1)
    expect(png).toBeDefined()
    expect(imageDimensions(png ?? new Uint8Array())).toEqual({ width: 200, height: 100 })
    expect(document.pages[0]).toMatchObject({ pageNumber: 1, method: 'OCR', imageStored: true })
  })
})

describe('images', () => {
  it('reads an image through OCR as one page', async () => {
    const { tools, calls } = fakeTools({ ocrText: () => '  Words in the picture  ' })
    const png = renderTextImage('Words in the picture', { format: 'png', width: 600, height: 100 })
    const document = await extractDocument(png, 'image', extractionOptions(), recordingSink(), tools)
    expect(calls.map((call) => call.what)).toEqual(['ocr'])
    expect(document).toEqual({
      kind: 'image',
      text: 'Words in the picture',
      sections: [{ startOffset: 0, endOffset: 20, page: 1 }],
      pages: [{ pageNumber: 1, method: 'OCR', ocrConfidence: 87, characters: 20 }],
    })
  })

  it('refuses an image over maxImagePixels before OCR sees it', async () => {
    const { tools, calls } = fakeTools()
    const png = renderTextImage('x', { format: 'png', width: 200, height: 100 })
    const options = extractionOptions({ limits: { maxImagePixels: 10_000 } })
    await expect(extractDocument(png, 'image', options, recordingSink(), tools)).rejects.toThrow(
      'the image is 200 × 100 pixels (20000); the limit is 10000 pixels',
    )
    expect(calls).toEqual([])
  })
})
