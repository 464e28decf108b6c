import { parentPort } from 'node:worker_threads'
import { extractDocument } from './extract-document.js'
import { ExtractionError, type ExtractionSink, type OcrEngine } from './extracted-document.js'
import type { ExtractionReply, ExtractionRequest } from './extraction-messages.js'
import { prepareOcrImage } from './ocr-image.js'
import { renderPdfPage } from './page-render.js'

/**
 * An extraction thread: parses one document at a time (extract-document.ts) with pdfjs, the
 * OOXML and HTML readers, renders PDF pages with @napi-rs/canvas, and sends what it finds to
 * the server's thread: progress, page images (waiting until each is stored before drawing the
 * next), and images to recognise, which the server's one OCR engine does so that the number
 * of recognitions at once is the process's, whatever the number of extraction threads. A
 * document that needs more memory than the thread's limit kills this thread, not the server.
 *
 * In the standalone executable this file is bundled on its own (scripts/build/bundle.ts,
 * bundleDocumentWorker) and started from that text; from source, tsx runs it.
 */

const port = parentPort
if (!port) throw new Error('extraction-worker.ts runs as a worker thread')

function send(reply: ExtractionReply, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(reply, transfer)
}

/** Answers the server's thread sends back (OCR results, page-image receipts), by what they answer. */
const waiting = new Map<string, { resolve(value: unknown): void; reject(error: Error): void }>()

function ask<T>(key: string, reply: ExtractionReply, transfer: ArrayBuffer[]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    waiting.set(key, { resolve: resolve as (value: unknown) => void, reject })
    send(reply, transfer)
  })
}

function settle(key: string, outcome: { value: unknown } | { error: Error }): void {
  const entry = waiting.get(key)
  waiting.delete(key)
  if (!entry) return
  if ('error' in outcome) entry.reject(outcome.error)
  else entry.resolve(outcome.value)
}

/**
 * A copy in a buffer of its own, to move to the server's thread. Not the bytes themselves: a PNG
 * from @napi-rs/canvas lives in memory the addon owns, which cannot be transferred, and an image
 * handed to OCR may be a view into the document. A copy is cheap next to rendering or OCR.
 */
function ownBuffer(bytes: Uint8Array): { bytes: Uint8Array; transfer: ArrayBuffer[] } {
  const own = new Uint8Array(bytes)
  return { bytes: own, transfer: [own.buffer] }
}

let nextOcrId = 1

async function extract(request: Extract<ExtractionRequest, { kind: 'extract' }>): Promise<void> {
  const { id } = request
  const ocr: OcrEngine = {
    async recognize(image, languages) {
      // Checked and (a BMP) converted here, so the server's thread only relays.
      const prepared = ownBuffer(await prepareOcrImage(image, request.options.limits.maxImagePixels))
      const ocrId = nextOcrId++
      return ask(`ocr-${ocrId}`, { kind: 'ocr', id, ocrId, image: prepared.bytes, languages }, prepared.transfer)
    },
  }
  const sink: ExtractionSink = {
    progress: (update) => send({ kind: 'progress', id, update }),
    pageImage: (pageNumber, png) => {
      const own = ownBuffer(png)
      return ask(`page-${pageNumber}`, { kind: 'page-image', id, pageNumber, png: own.bytes }, own.transfer)
    },
  }
  try {
    const document = await extractDocument(request.bytes, request.documentKind, request.options, sink, {
      ocr,
      renderPdfPage,
    })
    send({ kind: 'extracted', id, document })
  } catch (error) {
    const message = (error as Error)?.message ?? String(error)
    send({ kind: 'failed', id, message, permanent: error instanceof ExtractionError })
  } finally {
    for (const key of waiting.keys()) settle(key, { error: new Error('the document is finished') })
  }
}

port.on('message', (request: ExtractionRequest) => {
  switch (request.kind) {
    case 'extract':
      void extract(request)
      return
    case 'ocr-done':
      settle(`ocr-${request.ocrId}`, { value: { text: request.text, confidence: request.confidence } })
      return
    case 'ocr-failed': {
      const error = request.permanent ? new ExtractionError(request.message) : new Error(request.message)
      settle(`ocr-${request.ocrId}`, { error })
      return
    }
    case 'page-image-stored':
      settle(`page-${request.pageNumber}`, { value: undefined })
      return
    case 'page-image-failed':
      settle(`page-${request.pageNumber}`, { error: new Error(request.message) })
      return
  }
})
