// The extraction threads (src/documents/extraction-pool.ts) with the real orchestrator, real
// pdfjs rendering and real OCR: a scanned PDF comes back as text, page images wait for the
// store, a document that exhausts its thread's memory fails permanently and the next one
// succeeds, and OCR never runs more recognitions at once than the process's limit.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  DEFAULT_EXTRACTION_LIMITS,
  ExtractionError,
  type ExtractionOptions,
  type ExtractionSink,
} from '../../src/documents/extracted-document.js'
import { ExtractionPool } from '../../src/documents/extraction-pool.js'
import { TesseractOcrEngine } from '../../src/documents/ocr.js'
import { makeHtml, makeImagePdf, renderTextImage } from '../support/document-fixtures.js'
import { OCR_SENTENCE, OCR_WORDS } from '../support/ocr-images.js'

const TEST_TIMEOUT_MS = 240_000
/** Enough heap for the thread's own code and an ordinary document, far too little for a 40 MB HTML page. */
const SMALL_MEMORY_LIMIT_MB = 128
const HOUR_MS = 3_600_000
const SCAN = { format: 'jpeg', width: 1275, height: 1650, fontSize: 40 } as const

const OPTIONS: ExtractionOptions = {
  ocr: 'AUTO',
  extractPageImages: false,
  pageImageDpi: 72,
  ocrLanguages: ['eng'],
  limits: DEFAULT_EXTRACTION_LIMITS,
}

let ocr: TesseractOcrEngine
const pools: ExtractionPool[] = []

function pool(threads: number, memoryLimitMb = 1024, documentTimeoutMs = HOUR_MS): ExtractionPool {
  const made = new ExtractionPool({ threads, memoryLimitMb, documentTimeoutMs, ocr })
  pools.push(made)
  return made
}

const quietSink: ExtractionSink = { progress: () => {}, pageImage: () => {} }

function scannedPdf(lines: string[]): Uint8Array {
  return makeImagePdf(lines.map((line) => renderTextImage(line, SCAN)))
}

beforeAll(() => {
  ocr = new TesseractOcrEngine({ concurrency: 1 })
})

afterEach(async () => {
  await Promise.all(pools.splice(0).map((made) => made.close()))
})

afterAll(async () => {
  await ocr?.close()
})

describe('extraction threads', { timeout: TEST_TIMEOUT_MS }, () => {
  it('reads a scanned PDF (JPEG pages, no text layer) through OCR, and takes the bytes rather than copying them', async () => {
    const bytes = scannedPdf([OCR_SENTENCE, 'Saffron walnut cobalt falcon'])
    const document = await pool(1).extract(bytes, 'pdf', OPTIONS, quietSink)
    expect(bytes.byteLength).toBe(0)
    for (const word of [...OCR_WORDS, 'Saffron', 'walnut', 'cobalt', 'falcon']) expect(document.text).toContain(word)
    expect(document.pages).toEqual([
      expect.objectContaining({ pageNumber: 1, method: 'OCR', ocrConfidence: expect.any(Number) }),
      expect.objectContaining({ pageNumber: 2, method: 'OCR', ocrConfidence: expect.any(Number) }),
    ])
    for (const page of document.pages) expect(page.ocrConfidence).toBeGreaterThan(60)
  })

  it('sends each page image and draws the next only once the store has taken it', async () => {
    const events: string[] = []
    const sink: ExtractionSink = {
      progress: () => {},
      pageImage: async (pageNumber, png) => {
        events.push(`store ${pageNumber} start (${Buffer.from(png.subarray(1, 4)).toString('latin1')})`)
        await new Promise((resolve) => setTimeout(resolve, 200))
        events.push(`store ${pageNumber} end`)
      },
    }
    const options = { ...OPTIONS, extractPageImages: true }
    const document = await pool(1).extract(scannedPdf(['Amber', 'Cobalt', 'Falcon']), 'pdf', options, sink)
    expect(events).toEqual([
      'store 1 start (PNG)',
      'store 1 end',
      'store 2 start (PNG)',
      'store 2 end',
      'store 3 start (PNG)',
      'store 3 end',
    ])
    expect(document.pages.map((page) => page.imageStored)).toEqual([true, true, true])
  })

  it('fails a document that runs its thread out of memory as permanent, and extracts the next', async () => {
    const threads = pool(1, SMALL_MEMORY_LIMIT_MB)
    const paragraphs = Array.from({ length: 400_000 }, (_, index) => `<p>paragraph <b>${index}</b> of many</p>`)
    const huge = makeHtml(paragraphs.join(''))
    const failed = threads.extract(huge, 'html', OPTIONS, quietSink)
    await expect(failed).rejects.toBeInstanceOf(ExtractionError)
    await expect(failed).rejects.toThrow(`extraction ran out of its memory limit (${SMALL_MEMORY_LIMIT_MB} MB)`)
    const next = await threads.extract(makeHtml('<p>Small and fine.</p>'), 'html', OPTIONS, quietSink)
    expect(next.text).toContain('Small and fine.')
  })

  it('keeps OCR to the process limit (1) while two threads extract scans at once', async () => {
    const threads = pool(2)
    let mostRunning = 0
    let mostQueued = 0
    const sampler = setInterval(() => {
      mostRunning = Math.max(mostRunning, ocr.load.running)
      mostQueued = Math.max(mostQueued, ocr.load.queued)
    }, 5)
    try {
      const documents = await Promise.all([
        threads.extract(scannedPdf([OCR_SENTENCE]), 'pdf', OPTIONS, quietSink),
        threads.extract(scannedPdf(['Saffron walnut cobalt falcon']), 'pdf', OPTIONS, quietSink),
      ])
      expect(documents[0]!.text).toContain('lighthouses')
      expect(documents[1]!.text).toContain('falcon')
    } finally {
      clearInterval(sampler)
    }
    expect(mostRunning).toBe(1)
    expect(mostQueued).toBe(1)
  })

  it('ends a document that takes longer than its time limit, and one whose signal aborts', async () => {
    const slow = pool(1, 1024, 50)
    await expect(slow.extract(scannedPdf([OCR_SENTENCE]), 'pdf', OPTIONS, quietSink)).rejects.toThrow(
      'extraction took longer than its limit of 50 ms',
    )
    const threads = pool(1)
    const controller = new AbortController()
    const withdrawn = threads.extract(scannedPdf([OCR_SENTENCE]), 'pdf', OPTIONS, quietSink, controller.signal)
    setTimeout(() => controller.abort(new Error('the server is draining')), 100)
    await expect(withdrawn).rejects.toThrow('the server is draining')
    const after = await threads.extract(makeHtml('<p>Still here.</p>'), 'html', OPTIONS, quietSink)
    expect(after.text).toContain('Still here.')
  })
})
