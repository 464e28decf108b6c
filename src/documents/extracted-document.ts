/**
 * What extraction makes of a document: its text, with where each part of the text came
 * from, and what happened to each page. Plain data: it crosses from the extraction
 * threads to the ingest job with postMessage, and is stored as JSON on the memory.
 */

/** The document kinds extraction reads. Text kinds (text/plain, text/markdown, application/json) are not extracted. */
export type DocumentKind = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'html' | 'image'

/**
 * Where a span of the extracted text came from. Offsets are UTF-16 code units into
 * ExtractedDocument.text, end exclusive; sections are in order and do not overlap.
 */
export interface DocumentSection {
  startOffset: number
  endOffset: number
  /** PDF page or image frame, from 1. */
  page?: number
  /** PPTX slide, from 1. */
  slide?: number
  /** XLSX sheet name. */
  sheet?: string
  /** DOCX/HTML (and PDF/PPTX when known): the headings above this text, outermost first. */
  headingPath?: string[]
}

/** How a page's (or an image's, or a slide's) text was obtained. */
export type PageMethod = 'TEXT' | 'OCR' | 'NONE'

export interface DocumentPage {
  /** From 1. */
  pageNumber: number
  method: PageMethod
  /** Tesseract's mean word confidence, 0..100, when the page went through OCR. */
  ocrConfidence?: number
  /** Characters of text this page gave. */
  characters: number
  /** True when a page image was rendered and stored (extractPageImages). */
  imageStored?: boolean
  /** Why a page gave no text (NONE), for the per-page status. */
  note?: string
}

export interface ExtractedDocument {
  kind: DocumentKind
  text: string
  sections: DocumentSection[]
  /** Pages (PDF), frames (image), slides (PPTX); empty for DOCX, XLSX and HTML. */
  pages: DocumentPage[]
}

/** OCR: ON reads every page and image through OCR; AUTO only those without a text layer; OFF never. */
export type OcrMode = 'ON' | 'OFF' | 'AUTO'

export interface ExtractionLimits {
  /** A PDF with more pages is refused (FAILED, naming both numbers). */
  maxPages: number
  /** An image (or a rendered page) with more pixels is refused before it is decoded. */
  maxImagePixels: number
  /** The sum of an archive's (OOXML) decompressed entries. */
  maxDecompressedBytes: number
  /** Decompressed size ÷ compressed size, per archive entry. */
  maxCompressionRatio: number
  /** The extracted text's length, in characters. */
  maxTextCharacters: number
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  maxPages: 5_000,
  maxImagePixels: 100_000_000,
  maxDecompressedBytes: 512 * 1024 * 1024,
  maxCompressionRatio: 200,
  maxTextCharacters: 64 * 1024 * 1024,
}

export { DEFAULT_PAGE_IMAGE_DPI, MAX_PAGE_IMAGE_DPI, MIN_PAGE_IMAGE_DPI } from '../validation/limits.js'
/** Pages without a text layer are rendered at this resolution for OCR (tesseract reads 300 DPI best). */
export const OCR_RENDER_DPI = 300

export interface ExtractionOptions {
  ocr: OcrMode
  extractPageImages: boolean
  pageImageDpi: number
  /** Tesseract language codes, for example ['eng']. */
  ocrLanguages: string[]
  limits: ExtractionLimits
}

/** The user-facing reason a document cannot be extracted: permanent, the memory ends FAILED with this message. */
export class ExtractionError extends Error {
  override name = 'ExtractionError'
}

/** What extraction reports while it runs, for processing status and page images. */
export interface ExtractionSink {
  progress(update: { stage: 'EXTRACTING' | 'OCR' | 'RENDERING'; pagesDone: number; pagesTotal: number }): void
  /** A rendered page (PNG), when extractPageImages is on. */
  pageImage(pageNumber: number, png: Uint8Array): void | Promise<void>
}

/** Renders PDF pages to images (pdfjs + @napi-rs/canvas). */
export interface PageRenderer {
  /** The page as PNG at `dpi`, refused (ExtractionError) when it would exceed limits.maxImagePixels. */
  renderPage(pageNumber: number, dpi: number): Promise<Uint8Array>
}

/** Recognises text in an image (tesseract.js). */
export interface OcrEngine {
  /** `image` is PNG, JPEG, TIFF, BMP or WebP bytes. */
  recognize(image: Uint8Array, languages: string[]): Promise<{ text: string; confidence: number }>
}
