/**
 * Extraction of one document: the reader its kind needs, the decisions about OCR and page
 * images, and the checks every result passes (text within the limit, some text at all).
 * Runs in an extraction thread (extraction-worker.ts); OCR and page rendering come in as
 * tools so that the thread can hand OCR to the server's engine and tests can count calls.
 */
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { DocumentTextBuilder } from './document-text-builder.js'
import { extractDocx } from './docx.js'
import {
  type DocumentKind,
  type DocumentPage,
  type ExtractedDocument,
  ExtractionError,
  type ExtractionOptions,
  type ExtractionSink,
  OCR_RENDER_DPI,
  type OcrEngine,
} from './extracted-document.js'
import { extractHtml } from './html.js'
import { imageDimensions } from './image-dimensions.js'
import type { RenderedImageFormat } from './page-render.js'
import { type DeferredPageResult, extractPdf, type PdfPageResult } from './pdf.js'
import { extractPptx } from './pptx.js'
import { extractXlsx } from './xlsx.js'

export interface ExtractionTools {
  ocr: OcrEngine
  /** The page as PNG at `dpi`; ExtractionError when it would have more than `maxPixels` pixels (page-render.ts). */
  renderPdfPage(page: PDFPageProxy, dpi: number, maxPixels: number, format?: RenderedImageFormat): Promise<Uint8Array>
}

const KIND_NAMES: Record<DocumentKind, string> = {
  pdf: 'PDF',
  docx: 'Word document',
  pptx: 'presentation',
  xlsx: 'workbook',
  html: 'HTML page',
  image: 'image',
}

type SyncExtractor = (bytes: Uint8Array, options: ExtractionOptions) => ExtractedDocument

const OFFICE_AND_HTML_EXTRACTORS: Record<Exclude<DocumentKind, 'pdf' | 'image'>, SyncExtractor> = {
  docx: extractDocx,
  pptx: extractPptx,
  xlsx: extractXlsx,
  html: extractHtml,
}

/**
 * The document's text, sections and pages. ExtractionError is the user-facing reason it cannot
 * be extracted (permanent); any other error (an OCR engine that stopped) may succeed on a retry.
 */
export async function extractDocument(
  bytes: Uint8Array,
  kind: DocumentKind,
  options: ExtractionOptions,
  sink: ExtractionSink,
  tools: ExtractionTools,
): Promise<ExtractedDocument> {
  const document =
    kind === 'pdf'
      ? await extractPdf(bytes, options, sink, pdfPageHandler(options, sink, tools))
      : kind === 'image'
        ? await extractImage(bytes, options, sink, tools)
        : readOfficeOrHtml(bytes, kind, options, sink)
  if (document.text.length > options.limits.maxTextCharacters) {
    throw new ExtractionError(
      `the extracted text is longer than ${options.limits.maxTextCharacters} characters, the limit for one document`,
    )
  }
  if (document.text.trim() === '') {
    throw new ExtractionError(`no text could be extracted (${whyNoText(document, options)})`)
  }
  return document
}

/** These readers take the whole document in one step: its progress is every page at once. */
function readOfficeOrHtml(
  bytes: Uint8Array,
  kind: keyof typeof OFFICE_AND_HTML_EXTRACTORS,
  options: ExtractionOptions,
  sink: ExtractionSink,
): ExtractedDocument {
  let document: ExtractedDocument
  try {
    document = OFFICE_AND_HTML_EXTRACTORS[kind](bytes, options)
  } catch (error) {
    if (error instanceof ExtractionError) throw error
    // These readers are pure functions of the bytes: what fails once fails every time, so it is permanent.
    throw new ExtractionError(
      `the ${KIND_NAMES[kind]} is damaged or not what its type says: ${(error as Error).message}`,
    )
  }
  const pagesTotal = Math.max(1, document.pages.length)
  sink.progress({ stage: 'EXTRACTING', pagesDone: pagesTotal, pagesTotal })
  return document
}

/**
 * What happens to each PDF page: its text layer, or OCR of the page rendered at OCR_RENDER_DPI
 * (every page with OCR ON, pages without a text layer with AUTO), and its image when page images
 * are kept. sink.pageImage is awaited: storing the image is what paces rendering.
 */
function pdfPageHandler(options: ExtractionOptions, sink: ExtractionSink, tools: ExtractionTools) {
  return async (
    page: PDFPageProxy,
    textLayer: string,
    pagesTotal: number,
  ): Promise<PdfPageResult | DeferredPageResult> => {
    const pageNumber = page.pageNumber
    const hasTextLayer = textLayer.trim() !== ''
    const useOcr = options.ocr === 'ON' || (options.ocr === 'AUTO' && !hasTextLayer)
    let result: PdfPageResult | DeferredPageResult
    if (useOcr) {
      sink.progress({ stage: 'OCR', pagesDone: pageNumber - 1, pagesTotal })
      result = await ocrPage(page, textLayer, options, tools)
    } else if (hasTextLayer) {
      result = { text: textLayer, page: { pageNumber, method: 'TEXT', characters: textLayer.length } }
    } else {
      result = { text: '', page: { pageNumber, method: 'NONE', characters: 0, note: 'no text layer; OCR is off' } }
    }
    if (!options.extractPageImages) return result
    sink.progress({ stage: 'RENDERING', pagesDone: pageNumber - 1, pagesTotal })
    const image = await storePageImage(page, options, sink, tools)
    return 'later' in result ? { later: result.later.then((done) => withImage(done, image)) } : withImage(result, image)
  }
}

/** The page's entry says whether its image was stored, and why not. */
function withImage(result: PdfPageResult, image: StoredImage): PdfPageResult {
  result.page.imageStored = image.stored
  if (image.note) result.page.note = result.page.note === undefined ? image.note : `${result.page.note}; ${image.note}`
  return result
}

interface StoredImage {
  stored: boolean
  note?: string
}

/** Renders and stores the page's image; a page too large to render keeps its text and says why it has no image. */
async function storePageImage(
  page: PDFPageProxy,
  options: ExtractionOptions,
  sink: ExtractionSink,
  tools: ExtractionTools,
): Promise<StoredImage> {
  let png: Uint8Array
  try {
    png = await tools.renderPdfPage(page, options.pageImageDpi, options.limits.maxImagePixels)
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error
    return { stored: false, note: `no page image: ${error.message}` }
  }
  await sink.pageImage(page.pageNumber, png)
  return { stored: true }
}

/**
 * The page rendered for OCR, and its recognition still running: the caller goes on to the next
 * page, whose rendering (in this thread) then overlaps this page's OCR (in an OCR thread).
 */
async function ocrPage(
  page: PDFPageProxy,
  textLayer: string,
  options: ExtractionOptions,
  tools: ExtractionTools,
): Promise<PdfPageResult | DeferredPageResult> {
  const pageNumber = page.pageNumber
  let image: Uint8Array
  try {
    image = await tools.renderPdfPage(page, OCR_RENDER_DPI, options.limits.maxImagePixels, 'jpeg')
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error
    // A page too large to render for OCR keeps its text layer, if any, and says why OCR did not read it.
    const note = `not read by OCR: ${error.message}`
    return textLayer.trim() === ''
      ? { text: '', page: { pageNumber, method: 'NONE', characters: 0, note } }
      : { text: textLayer, page: { pageNumber, method: 'TEXT', characters: textLayer.length, note } }
  }
  return { later: recognizedPage(pageNumber, textLayer, tools.ocr.recognize(image, options.ocrLanguages)) }
}

async function recognizedPage(
  pageNumber: number,
  textLayer: string,
  recognition: Promise<{ text: string; confidence: number }>,
): Promise<PdfPageResult> {
  const recognized = await recognition
  const text = recognized.text.trim()
  if (text === '' && textLayer.trim() !== '') {
    // OCR ON over a page whose text OCR cannot see (white text, tiny print): its text layer is still the page's text.
    const note = 'OCR found no text; the text layer is used'
    return { text: textLayer, page: { pageNumber, method: 'TEXT', characters: textLayer.length, note } }
  }
  const entry: DocumentPage = {
    pageNumber,
    method: 'OCR',
    ocrConfidence: recognized.confidence,
    characters: text.length,
  }
  if (text === '') entry.note = 'OCR found no text on the page'
  return { text, page: entry }
}

async function extractImage(
  bytes: Uint8Array,
  options: ExtractionOptions,
  sink: ExtractionSink,
  tools: ExtractionTools,
): Promise<ExtractedDocument> {
  const dimensions = imageDimensions(bytes)
  if (dimensions === undefined || dimensions.width === 0 || dimensions.height === 0) {
    throw new ExtractionError('the image is damaged or truncated: its size cannot be read from its header')
  }
  const pixels = dimensions.width * dimensions.height
  if (pixels > options.limits.maxImagePixels) {
    throw new ExtractionError(
      `the image is ${dimensions.width} × ${dimensions.height} pixels (${pixels}); ` +
        `the limit is ${options.limits.maxImagePixels} pixels`,
    )
  }
  if (options.ocr === 'OFF') {
    throw new ExtractionError('an image has no text without OCR, and OCR is off for this memory')
  }
  sink.progress({ stage: 'OCR', pagesDone: 0, pagesTotal: 1 })
  const recognized = await tools.ocr.recognize(bytes, options.ocrLanguages)
  const builder = new DocumentTextBuilder(options.limits.maxTextCharacters)
  builder.addBlock(recognized.text.trim(), { page: 1 })
  const { text, sections } = builder.build()
  sink.progress({ stage: 'OCR', pagesDone: 1, pagesTotal: 1 })
  const page: DocumentPage = {
    pageNumber: 1,
    method: 'OCR',
    ocrConfidence: recognized.confidence,
    characters: text.length,
  }
  if (text === '') page.note = 'OCR found no text in the image'
  return { kind: 'image', text, sections, pages: [page] }
}

function whyNoText(document: ExtractedDocument, options: ExtractionOptions): string {
  if (document.kind === 'image') return 'OCR found no text in the image'
  if (document.kind !== 'pdf') return `the ${KIND_NAMES[document.kind]} holds no text`
  const pageCount = document.pages.length
  if (pageCount === 0) return 'the PDF has no pages'
  const pages = pageCount === 1 ? "the PDF's page" : `the PDF's ${pageCount} pages`
  if (options.ocr === 'OFF')
    return `${pages} ${pageCount === 1 ? 'has' : 'have'} no text layer, and OCR is off for this memory`
  return `neither a text layer nor OCR gave text on ${pages}`
}
