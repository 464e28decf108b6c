import fs from 'node:fs'
import path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import zlib from 'node:zlib'
import * as tesseractWorkerScript from 'tesseract.js/src/worker-script/index.js'
import createTesseractCore from 'tesseract.js-core/tesseract-core-relaxedsimd-lstm.js'
import { readAsset } from '../runtime/assets.js'
import { BUNDLED_OCR_LANGUAGE, languageModelFile } from './ocr-language-files.js'
import type { OcrThreadData } from './ocr-protocol.js'

/**
 * An OCR thread: tesseract.js 7's own worker script, running tesseract's WebAssembly core, with
 * an adapter of memsvc's instead of tesseract.js's Node one. The adapter is what makes OCR
 * offline and the same from source and in the standalone executable: the core's WebAssembly
 * comes from the tesseract-core.wasm asset (not from a file found beside the loader), language
 * models from the bundled English asset or the languages directory, and nothing is ever
 * fetched or cached. The server's thread drives it packet by packet (ocr.ts).
 *
 * In the standalone executable this file is bundled on its own (scripts/build/bundle.ts,
 * bundleDocumentWorker) and started from that text; from source, tsx runs it.
 */

const port = parentPort
if (!port) throw new Error('ocr-thread.ts runs as a worker thread')
const { languagesDir } = (workerData ?? {}) as OcrThreadData

/** The worker script asks for `<langPath>/<lang>.traineddata.gz`; langPath is a name only (ocr-protocol.ts). */
const REQUESTED_MODEL = /([^/]+)\.traineddata(\.gz)?$/

async function readLanguageModel(requested: string): Promise<Uint8Array> {
  const language = REQUESTED_MODEL.exec(requested)?.[1]
  if (!language) throw new Error(`OCR asked for an unexpected file: ${requested}`)
  const file = languageModelFile(languagesDir, language)
  if (file) return fs.promises.readFile(file)
  if (language === BUNDLED_OCR_LANGUAGE) return readAsset('eng.traineddata.gz')
  throw new Error(`no OCR model for language ${language} in ${languagesDir ?? '(no languages directory)'}`)
}

let coreWasm: Uint8Array | undefined

function tesseractCoreWasm(): Uint8Array {
  coreWasm ??= readAsset('tesseract-core.wasm')
  return coreWasm
}

tesseractWorkerScript.setAdapter({
  // The loader is bundled; its WebAssembly (2.9 MB) is handed over rather than looked for beside it.
  getCore: async () => (moduleArgs: Record<string, unknown>) =>
    createTesseractCore({ ...moduleArgs, wasmBinary: tesseractCoreWasm() }),
  gunzip: (data) => zlib.gunzipSync(data),
  fetch: async (url) => {
    throw new Error(`OCR does not download (asked for ${url})`)
  },
  readCache: readLanguageModel,
  // cacheMethod 'none': the worker script never writes, deletes or checks a cache; these only refuse.
  writeCache: async (file) => {
    throw new Error(`OCR does not write files (asked for ${path.basename(file)})`)
  },
  deleteCache: async () => {},
  checkCache: async () => false,
})

port.on('message', (packet: unknown) => {
  tesseractWorkerScript.dispatchHandlers(packet, (reply) => port.postMessage(reply))
})
