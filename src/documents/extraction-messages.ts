import type { DocumentKind, ExtractedDocument, ExtractionOptions, ExtractionSink } from './extracted-document.js'

/**
 * What the server's thread (extraction-pool.ts) and an extraction thread (extraction-worker.ts)
 * say to each other. Plain data only: structured clone carries it; the document's bytes and
 * the page images travel as transferred buffers, not copies. A thread extracts one document
 * at a time, so every message concerns the thread's current document, named by `id` all the
 * same so that a late answer for an abandoned document is recognised and dropped.
 */

export type ProgressUpdate = Parameters<ExtractionSink['progress']>[0]

/** Server's thread → extraction thread. */
export type ExtractionRequest =
  | { kind: 'extract'; id: number; bytes: Uint8Array; documentKind: DocumentKind; options: ExtractionOptions }
  /** The answer to an `ocr` reply: the server's OCR engine recognised the image. */
  | { kind: 'ocr-done'; id: number; ocrId: number; text: string; confidence: number }
  /** The OCR engine failed; `permanent` when the same image would fail again (an ExtractionError). */
  | { kind: 'ocr-failed'; id: number; ocrId: number; message: string; permanent: boolean }
  /** The page image was stored (sink.pageImage settled): the thread may render the next page. */
  | { kind: 'page-image-stored'; id: number; pageNumber: number }
  | { kind: 'page-image-failed'; id: number; pageNumber: number; message: string }

/** Extraction thread → server's thread. */
export type ExtractionReply =
  | { kind: 'progress'; id: number; update: ProgressUpdate }
  /** A rendered page (PNG); the thread waits for page-image-stored before it renders another. */
  | { kind: 'page-image'; id: number; pageNumber: number; png: Uint8Array }
  /** Recognise this image with the process's OCR engine (its concurrency limit is the process's). */
  | { kind: 'ocr'; id: number; ocrId: number; image: Uint8Array; languages: string[] }
  | { kind: 'extracted'; id: number; document: ExtractedDocument }
  /** `permanent`: an ExtractionError, the user-facing reason the document cannot be extracted. */
  | { kind: 'failed'; id: number; message: string; permanent: boolean }
