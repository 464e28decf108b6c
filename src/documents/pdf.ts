/**
 * PDFs through pdfjs, one page at a time: each page's text layer, with line breaks where the
 * text moves to a new line, as a section of its page. What happens to a page without text
 * (OCR, a note) is the caller's decision (extract-document.ts), passed in as a page handler.
 *
 * (pdfjs 6 has no isEvalSupported option: it no longer compiles fonts with eval at all.)
 *
 * pdfjs runs in this thread: in Node it never starts a worker of its own, and its parser is
 * found through globalThis.pdfjsWorker instead of being imported by URL, which a bundle lacks.
 */

import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs'
import * as pdfjsWorker from 'pdfjs-dist/legacy/build/pdf.worker.mjs'
import { pdfjsResourceUrls } from '../runtime/document-assets.js'
import { DocumentTextBuilder } from './document-text-builder.js'
import {
  type DocumentPage,
  type ExtractedDocument,
  ExtractionError,
  type ExtractionOptions,
  type ExtractionSink,
} from './extracted-document.js'

const PDFJS_ERRORS_ONLY = 0
/** Text items this close vertically (as a share of their height) are on the same line. */
const SAME_LINE_TOLERANCE = 0.5
const MIN_LINE_TOLERANCE_PT = 1
const NO_TEXT_LAYER_NOTE = 'no text layer'

/** What a page handler makes of a page: its text and its entry in ExtractedDocument.pages. */
export interface PdfPageResult {
  text: string
  page: DocumentPage
}

/** A page whose text is still being worked out (OCR) once everything that needs the page itself is done. */
export interface DeferredPageResult {
  later: Promise<PdfPageResult>
}

/** Decides a page's text from the page and its text layer ('' when it has none). */
export type PdfPageHandler = (
  page: PDFPageProxy,
  textLayer: string,
  pagesTotal: number,
) => Promise<PdfPageResult | DeferredPageResult>

/** The text layer as it is; a page without one gives no text (method NONE). */
export const textLayerOnly: PdfPageHandler = async (page, textLayer) =>
  textLayer.trim() === ''
    ? { text: '', page: { pageNumber: page.pageNumber, method: 'NONE', characters: 0, note: NO_TEXT_LAYER_NOTE } }
    : { text: textLayer, page: { pageNumber: page.pageNumber, method: 'TEXT', characters: textLayer.length } }

let pdfjs: Promise<typeof import('pdfjs-dist/legacy/build/pdf.mjs')> | undefined

function loadPdfjs(): Promise<typeof import('pdfjs-dist/legacy/build/pdf.mjs')> {
  const global = globalThis as { pdfjsWorker?: unknown }
  global.pdfjsWorker ??= pdfjsWorker
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs')
  return pdfjs
}

/**
 * The PDF's text, page by page, each page through `handlePage`. Refuses, as ExtractionError,
 * an encrypted or damaged PDF and one with more than limits.maxPages pages (before reading any).
 */
export async function extractPdf(
  bytes: Uint8Array,
  options: ExtractionOptions,
  sink: ExtractionSink,
  handlePage: PdfPageHandler = textLayerOnly,
): Promise<ExtractedDocument> {
  const { getDocument } = await loadPdfjs()
  const loadingTask = getDocument({
    // pdfjs takes the buffer over (detaches it); the caller keeps its bytes.
    data: new Uint8Array(bytes),
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: PDFJS_ERRORS_ONLY,
    // Standard fonts (metric-matched rendering), CJK character maps (text), wasm image decoders
    // (JPEG 2000, JBIG2 scans): from node_modules, or extracted from the executable on first use.
    ...pdfjsResourceUrls(),
  })
  try {
    let document: Awaited<typeof loadingTask.promise>
    try {
      document = await loadingTask.promise
    } catch (error) {
      throw openingError(error)
    }
    const pagesTotal = document.numPages
    if (pagesTotal > options.limits.maxPages) {
      throw new ExtractionError(`the PDF has ${pagesTotal} pages; the limit is ${options.limits.maxPages}`)
    }
    const builder = new DocumentTextBuilder(options.limits.maxTextCharacters)
    const pages: DocumentPage[] = []
    const record = (result: PdfPageResult) => {
      builder.addBlock(result.text, { page: result.page.pageNumber })
      pages.push(result.page)
      sink.progress({ stage: 'EXTRACTING', pagesDone: result.page.pageNumber, pagesTotal })
    }
    // One page's OCR runs while the next page is read and rendered; pages are recorded in order.
    let deferred: Promise<PdfPageResult> | undefined
    try {
      for (let pageNumber = 1; pageNumber <= pagesTotal; pageNumber++) {
        const result = await readPage(document, pageNumber, pagesTotal, handlePage)
        if (deferred) record(await deferred)
        deferred = undefined
        if ('later' in result) deferred = result.later
        else record(result)
      }
      if (deferred) record(await deferred)
    } finally {
      // A page that failed leaves the one before it unread: its rejection is not left unhandled.
      deferred?.catch(() => {})
    }
    const { text, sections } = builder.build()
    return { kind: 'pdf', text, sections, pages }
  } finally {
    await loadingTask.destroy()
  }
}

type PdfDocument = Awaited<ReturnType<Awaited<ReturnType<typeof loadPdfjs>>['getDocument']>['promise']>

async function readPage(
  document: PdfDocument,
  pageNumber: number,
  pagesTotal: number,
  handlePage: PdfPageHandler,
): Promise<PdfPageResult | DeferredPageResult> {
  let page: PDFPageProxy
  let textLayer: string
  try {
    page = await document.getPage(pageNumber)
    textLayer = await pageText(page)
  } catch (error) {
    if (error instanceof ExtractionError) throw error
    // One damaged page does not lose the others.
    const note = `the page is damaged: ${(error as Error).message}`
    return { text: '', page: { pageNumber, method: 'NONE', characters: 0, note } }
  }
  try {
    return await handlePage(page, textLayer, pagesTotal)
  } finally {
    // Fonts, images and operator lists of the page are released before the next one is read.
    page.cleanup()
  }
}

/** The page's text layer, with a line break where pdfjs marks one or the text moves to another line. */
export async function pageText(page: PDFPageProxy): Promise<string> {
  const content = await page.getTextContent()
  let text = ''
  let lastY: number | undefined
  for (const item of content.items) {
    if (!('str' in item)) continue
    const y = item.transform[5] ?? 0
    const tolerance = Math.max(MIN_LINE_TOLERANCE_PT, Math.abs(item.height) * SAME_LINE_TOLERANCE)
    if (lastY !== undefined && Math.abs(y - lastY) > tolerance && text !== '' && !text.endsWith('\n')) text += '\n'
    text += item.str
    if (item.hasEOL) text += '\n'
    if (item.str !== '') lastY = y
  }
  return text.replace(/[ \t]+\n/g, '\n').trim()
}

function openingError(error: unknown): ExtractionError {
  const name = (error as { name?: string })?.name
  const message = (error as Error)?.message ?? String(error)
  if (name === 'PasswordException') {
    return new ExtractionError('the PDF is encrypted (password-protected); memsvc cannot read it')
  }
  return new ExtractionError(`the PDF is damaged or not a PDF: ${message}`)
}
