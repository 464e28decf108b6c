// Document extraction in the built executable: dist/memsvc, copied into a directory with no
// node_modules, run inside a network namespace with no network (unshare -n), reads an image
// by OCR, a text PDF with its pages rendered, and a scanned PDF by rendering and OCR
// (`memsvc document extract`). Tesseract's core and English model, pdfjs and the canvas
// addon all come out of the executable; nothing is fetched.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeImagePdf, makeTextPdf, renderTextImage } from '../support/document-fixtures.js'
import { createSandbox, killAllProcesses, type Sandbox } from '../support/executable.js'
import { hasCommand } from '../support/installed.js'
import { OCR_SENTENCE, OCR_WORDS } from '../support/ocr-images.js'

const run = promisify(execFile)
const TEST_TIMEOUT_MS = 240_000
const PNG_SIGNATURE = Buffer.from('89504e470d0a1a0a', 'hex')
const SCANNED_WORDS = 'Cobalt falcon juniper mosaic'

interface ExtractedJson {
  kind: string
  text: string
  pages: Array<{ pageNumber: number; method: string; ocrConfidence?: number; imageStored?: boolean }>
  pageImages: string[]
}

let sandbox: Sandbox

beforeAll(() => {
  sandbox = createSandbox()
  fs.writeFileSync(
    path.join(sandbox.dir, 'sentence.png'),
    renderTextImage(OCR_SENTENCE, { format: 'png', width: 1100, height: 90 }),
  )
  fs.writeFileSync(path.join(sandbox.dir, 'text.pdf'), makeTextPdf([[OCR_SENTENCE], ['Second page saffron walnut']]))
  const scan = renderTextImage(SCANNED_WORDS, { format: 'jpeg', width: 1275, height: 1650 })
  fs.writeFileSync(path.join(sandbox.dir, 'scan.pdf'), makeImagePdf([scan]))
})

afterAll(() => {
  killAllProcesses()
  sandbox?.remove()
})

/** `memsvc document extract ARGS -o json` with no network at all; its JSON, and the links the namespace had. */
async function extractOffline(args: string[]): Promise<ExtractedJson> {
  if (!hasCommand('unshare')) throw new Error('unshare (util-linux) is needed')
  const quoted = args.map((arg) => `'${arg}'`).join(' ')
  const { stdout } = await run(
    'unshare',
    ['-n', 'sh', '-c', `./memsvc document extract ${quoted} --data-dir ./data -o json`],
    { cwd: sandbox.dir, env: sandbox.env, timeout: TEST_TIMEOUT_MS - 10_000 },
  )
  return JSON.parse(stdout) as ExtractedJson
}

describe('document extraction in the executable, offline', { timeout: TEST_TIMEOUT_MS }, () => {
  it('reads an image by OCR with the bundled English model', async () => {
    const extracted = await extractOffline(['sentence.png'])
    expect(extracted.kind).toBe('image')
    for (const word of OCR_WORDS) expect(extracted.text).toContain(word)
    expect(extracted.pages).toEqual([expect.objectContaining({ pageNumber: 1, method: 'OCR' })])
    expect(extracted.pages[0]!.ocrConfidence).toBeGreaterThan(60)
    expect(fs.existsSync(path.join(sandbox.dir, 'node_modules'))).toBe(false)
  })

  it('reads a text PDF and renders its pages to PNG files', async () => {
    const extracted = await extractOffline(['text.pdf', '--ocr', 'off', '--page-images', 'text-pages', '--dpi', '72'])
    expect(extracted.text).toBe(`${OCR_SENTENCE}\n\nSecond page saffron walnut`)
    expect(extracted.pages.map((page) => [page.method, page.imageStored])).toEqual([
      ['TEXT', true],
      ['TEXT', true],
    ])
    const files = fs.readdirSync(path.join(sandbox.dir, 'text-pages')).sort()
    expect(files).toEqual(['page-0001.png', 'page-0002.png'])
    const first = fs.readFileSync(path.join(sandbox.dir, 'text-pages', 'page-0001.png'))
    expect(first.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)).toBe(true)
    // US Letter at 72 DPI: 612 × 792 pixels.
    expect([first.readUInt32BE(16), first.readUInt32BE(20)]).toEqual([612, 792])
  })

  it('reads a scanned PDF by rendering its page and OCR, and extracts the canvas addon once into the cache', async () => {
    const extracted = await extractOffline(['scan.pdf'])
    expect(extracted.text).toContain(SCANNED_WORDS)
    expect(extracted.pages).toEqual([expect.objectContaining({ pageNumber: 1, method: 'OCR' })])
    const cache = path.join(sandbox.env.XDG_CACHE_HOME!, 'memsvc')
    const extractedDirs = fs.readdirSync(cache).filter((name) => name.startsWith('napi-canvas-'))
    expect(extractedDirs).toHaveLength(1)
    expect(fs.readdirSync(path.join(cache, extractedDirs[0]!))).toEqual(['skia.linux-x64-gnu.node'])
  })

  it('refuses an OCR language it does not have, in one line naming those it has', async () => {
    const result = await run('sh', ['-c', './memsvc document extract sentence.png --languages fra --data-dir ./data'], {
      cwd: sandbox.dir,
      env: sandbox.env,
    }).catch((error: { code: number; stdout: string; stderr: string }) => error)
    expect('code' in result ? result.code : 0).toBe(1)
    const languagesDir = path.join(sandbox.dir, 'data', 'ocr-languages')
    expect(result.stderr.trim()).toBe(
      `error: sentence.png: OCR language fra is not available: available are eng; add <lang>.traineddata to ${languagesDir}`,
    )
  })

  it('adds an OCR language with memsvc model add-ocr-language, checked by loading it, and reads with it', async () => {
    // Another tesseract model is not reachable from here: the larger English one stands in, under another code.
    const model = path.resolve('node_modules/@tesseract.js-data/eng/4.0.0/eng.traineddata.gz')
    fs.copyFileSync(model, path.join(sandbox.dir, 'eng.traineddata.gz'))
    const added = await run(
      'unshare',
      ['-n', 'sh', '-c', './memsvc model add-ocr-language eng.traineddata.gz --language enx --data-dir ./data -o json'],
      { cwd: sandbox.dir, env: sandbox.env },
    )
    expect(JSON.parse(added.stdout)).toMatchObject({ language: 'enx' })
    const extracted = await extractOffline(['sentence.png', '--languages', 'enx'])
    for (const word of OCR_WORDS) expect(extracted.text).toContain(word)
    fs.writeFileSync(path.join(sandbox.dir, 'bogus.traineddata'), 'not a model')
    const refused = await run('sh', ['-c', './memsvc model add-ocr-language bogus.traineddata --data-dir ./data'], {
      cwd: sandbox.dir,
      env: sandbox.env,
    }).catch((error: { code: number; stderr: string }) => error)
    expect('code' in refused ? refused.code : 0).not.toBe(0)
    expect(refused.stderr).toContain('is not a tesseract model OCR can load')
    expect(fs.existsSync(path.join(sandbox.dir, 'data', 'ocr-languages', 'bogus.traineddata'))).toBe(false)
  })
})
