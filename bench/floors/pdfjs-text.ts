// Floor for PDF extraction: pdfjs-dist alone reading the text layer of every page of a PDF
// (getDocument, then getPage and getTextContent page by page), in a process of its own so
// that nothing else runs in its thread. The file is read before the clock starts; the time
// is from getDocument to the last page's text. Prints one BENCH_RESULT line.
//   --file PATH
/// <reference path="../../src/documents/pdfjs-worker.d.ts" />
import fs from 'node:fs'
import path from 'node:path'
import * as pdfjsWorker from 'pdfjs-dist/legacy/build/pdf.worker.mjs'
import { floorArgs } from './floor-common.js'

const PDFJS_ERRORS_ONLY = 0
const MS_PER_SECOND = 1000
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..')
const PDFJS_ROOT = path.join(REPO_ROOT, 'node_modules', 'pdfjs-dist')

const options = floorArgs(['file'])
const bytes = new Uint8Array(fs.readFileSync(options.file!))
// pdfjs's documented way to run in the calling thread (its "fake worker"), as memsvc runs it in its extraction thread.
;(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = pdfjsWorker
const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs')

const started = performance.now()
const loadingTask = getDocument({
  data: bytes,
  disableFontFace: true,
  useSystemFonts: false,
  verbosity: PDFJS_ERRORS_ONLY,
  standardFontDataUrl: `${PDFJS_ROOT}/standard_fonts/`,
  cMapUrl: `${PDFJS_ROOT}/cmaps/`,
  wasmUrl: `${PDFJS_ROOT}/wasm/`,
})
const document = await loadingTask.promise
let characters = 0
for (let pageNumber = 1; pageNumber <= document.numPages; pageNumber++) {
  const page = await document.getPage(pageNumber)
  const content = await page.getTextContent()
  for (const item of content.items) if ('str' in item) characters += item.str.length
}
const pages = document.numPages
await loadingTask.destroy()
const seconds = (performance.now() - started) / MS_PER_SECOND
process.stdout.write(`BENCH_RESULT ${JSON.stringify({ pages, seconds, characters })}\n`)
