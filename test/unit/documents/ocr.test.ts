// OCR with tesseract.js in this process (src/documents/ocr.ts): real tesseract, the bundled
// English model and no network. Text rendered into each image format OCR takes comes back.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExtractionError } from '../../../src/documents/extracted-document.js'
import { TesseractOcrEngine } from '../../../src/documents/ocr.js'
import { pngHeader, renderTextImage } from '../../support/document-fixtures.js'
import { encodeBmp, encodeTiff, OCR_SENTENCE, OCR_WORDS, textRaster } from '../../support/ocr-images.js'

const TEST_TIMEOUT_MS = 120_000
const MIN_CONFIDENCE = 60
const IMAGE = { width: 1100, height: 90 }
const BUNDLED_MODEL = path.resolve('node_modules/@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz')

let engine: TesseractOcrEngine
let languagesDir: string

beforeAll(() => {
  languagesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-ocr-languages-'))
  engine = new TesseractOcrEngine({ concurrency: 1, languagesDir, idleTimeoutMs: 30_000 })
})

afterAll(async () => {
  await engine?.close()
  fs.rmSync(languagesDir, { recursive: true, force: true })
})

function expectSentence(result: { text: string; confidence: number }): void {
  for (const word of OCR_WORDS) expect(result.text).toContain(word)
  expect(result.confidence).toBeGreaterThan(MIN_CONFIDENCE)
  expect(result.confidence).toBeLessThanOrEqual(100)
}

describe('OCR (tesseract.js, offline)', { timeout: TEST_TIMEOUT_MS }, () => {
  it.each(['png', 'jpeg', 'webp'] as const)('reads the words of a %s image with confidence over 60', async (format) => {
    expectSentence(await engine.recognize(renderTextImage(OCR_SENTENCE, { format, ...IMAGE }), ['eng']))
  })

  it('reads the words of a BMP image (converted to PNG first) and of an uncompressed RGB TIFF', async () => {
    const raster = textRaster(OCR_SENTENCE, IMAGE.width, IMAGE.height)
    expectSentence(await engine.recognize(encodeBmp(raster), ['eng']))
    expectSentence(await engine.recognize(encodeTiff(raster), ['eng']))
  })

  it('leaves the caller its image bytes', async () => {
    const png = renderTextImage(OCR_SENTENCE, { format: 'png', ...IMAGE })
    const before = Buffer.from(png)
    await engine.recognize(png, ['eng'])
    expect(Buffer.from(png).equals(before)).toBe(true)
  })

  it('refuses an unknown language, naming the ones there are and the directory to add one to', async () => {
    const png = renderTextImage(OCR_SENTENCE, { format: 'png', ...IMAGE })
    const refused = engine.recognize(png, ['eng', 'klingon'])
    await expect(refused).rejects.toBeInstanceOf(ExtractionError)
    await expect(refused).rejects.toThrow(
      `OCR language klingon is not available: available are eng; add <lang>.traineddata to ${languagesDir}`,
    )
  })

  it('reads with a model from the languages directory, found while the engine runs', async () => {
    fs.copyFileSync(BUNDLED_MODEL, path.join(languagesDir, 'copyeng.traineddata.gz'))
    expect(engine.availableLanguages()).toEqual(['copyeng', 'eng'])
    const png = renderTextImage(OCR_SENTENCE, { format: 'png', ...IMAGE })
    expectSentence(await engine.recognize(png, ['copyeng']))
    // And back: the thread is initialised again for English.
    expectSentence(await engine.recognize(png, ['eng']))
  })

  it('fails a model file that does not load as permanent, and keeps working', async () => {
    fs.writeFileSync(path.join(languagesDir, 'broken.traineddata'), 'not a tesseract model')
    const png = renderTextImage(OCR_SENTENCE, { format: 'png', ...IMAGE })
    await expect(engine.recognize(png, ['broken'])).rejects.toThrow(/OCR cannot load language broken/)
    expectSentence(await engine.recognize(png, ['eng']))
  })

  it('refuses an image over the pixel limit from its header, and bytes that are no image', async () => {
    await expect(engine.recognize(pngHeader(30_000, 30_000), ['eng'])).rejects.toThrow(
      'the image is 30000 × 30000 pixels (900000000), more than the limit of 100000000',
    )
    await expect(engine.recognize(new TextEncoder().encode('%PDF-1.7 no image'), ['eng'])).rejects.toThrow(
      ExtractionError,
    )
  })

  it('withdraws a waiting recognition when its signal aborts', async () => {
    const png = renderTextImage(OCR_SENTENCE, { format: 'png', ...IMAGE })
    const first = engine.recognize(png, ['eng'])
    const controller = new AbortController()
    const second = engine.recognize(png, ['eng'], controller.signal)
    await new Promise((resolve) => setImmediate(resolve))
    expect(engine.load).toMatchObject({ queued: 1, running: 1 })
    controller.abort()
    await expect(second).rejects.toThrow('OCR was cancelled')
    expectSentence(await first)
  })

  it('ends an idle thread after the idle timeout', async () => {
    const quick = new TesseractOcrEngine({ concurrency: 1, idleTimeoutMs: 50 })
    try {
      await quick.recognize(renderTextImage(OCR_SENTENCE, { format: 'png', ...IMAGE }), ['eng'])
      expect(quick.load.threads).toBe(1)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(quick.load.threads).toBe(0)
    } finally {
      await quick.close()
    }
  })
})
