// `npm run bench -- --documents`: document ingestion (issue 34), each rate as memsvc against
// the library it is built on, alone, on the same files in the same run.
//
//   1. PDF extraction: a text PDF of TEXT_PDF_PAGES dense pages uploaded to dist/memsvc,
//      pages per second over its EXTRACTING stage (read back from the database, handed to
//      the extraction thread, pdfjs, the text and sections stored), against pdfjs-dist
//      alone (floors/pdfjs-text.ts: getDocument and getTextContent of every page) in a
//      process of its own. Upload to COMPLETED (with the keyword index) is reported beside it.
//   2. OCR: --ocr-pages scans of a Letter page at 300 DPI, uploaded as one scanned PDF and
//      as that many JPEG images, memsvc with --ocr-concurrency N, against tesseract.js alone
//      (floors/tesseract-ocr.ts: createWorker, createScheduler) with N workers on the JPEGs.
//   3. Peak RSS while a --large-pdf-mb (200 MiB) PDF is uploaded, extracted and indexed,
//      against a bound derived from the design (largePdfRow).
//
// The space is keyword-only (no embedder): chunks get BM25 keywords and no provider is
// called, so that no embedder is what is measured.
import fs from 'node:fs'
import path from 'node:path'
import postgres from 'postgres'
import {
  type ScannedPages,
  type WrittenFile,
  writeLargePdf,
  writeScannedPages,
  writeTextPdf,
} from '../lib/bench-documents.js'
import {
  awaitCompleted,
  type DocumentUpload,
  extractionPages,
  type IngestedDocument,
  uploadDocument,
} from '../lib/document-memories.js'
import { runClientFloor } from '../lib/floors.js'
import { peakRssMiB, resetPeakRss, rssMiB } from '../lib/machine.js'
import { type RunningServer, startMemsvc } from '../lib/memsvc.js'
import { sleep } from '../lib/processes.js'
import { RssSampler } from '../lib/rss-sampler.js'
import { call } from './memory.js'
import { serverArgs } from './startup.js'
import type { BenchMode, ModeContext, ModeReport } from './types.js'

/** The issue's targets. */
const PDF_EXTRACTION_TARGET = 0.8
const OCR_TARGET = 0.8
/** A text PDF the floor takes some seconds over (about 250 pages/s here); --quick: a few pages. */
const TEXT_PDF_PAGES = 1_000
const QUICK_TEXT_PDF_PAGES = 20
/** Uploads of up to this many MiB are accepted (memsvc's default, 100, is below the large PDF). */
const MIN_MAX_UPLOAD_MIB = 256
const MAX_UPLOAD_HEADROOM_MIB = 16
/**
 * The RSS bound's allowance for extraction's own working memory beyond the file's copies
 * (the extraction thread itself is already in the idle RSS: the text PDF started it): pdfjs's
 * cross-reference and the objects of one page at a time, the text, its sections and chunks
 * (kilobytes a page), and the V8 heaps' growth while they are built. Far under the thread's
 * heap limit (--document-memory-mb, 1024), which reading text layers never nears.
 */
const EXTRACTION_WORKING_ALLOWANCE_MIB = 64
/** Copies of the file the bound allows for (see largePdfRow). */
const FILE_COPIES_IN_BOUND = 3
const BYTES_PER_MIB = 1024 * 1024
const MS_PER_SECOND = 1000
/** Each floor process may take this long beyond its expected work before it is stopped. */
const FLOOR_TIMEOUT_MS = 10 * 60 * MS_PER_SECOND
const INGEST_TIMEOUT_MS = 15 * 60 * MS_PER_SECOND
/** Before an idle RSS sample: start-up garbage collected (--quick: only a moment). */
const IDLE_SETTLE_MS = 3_000
const QUICK_IDLE_SETTLE_MS = 300

interface BenchFiles {
  text: WrittenFile
  scans: ScannedPages
  large: WrittenFile
}

function writeBenchFiles(context: ModeContext): BenchFiles {
  const { options, workDir } = context
  const dir = path.join(workDir, 'documents')
  fs.mkdirSync(dir, { recursive: true })
  const started = performance.now()
  const files = {
    text: writeTextPdf(path.join(dir, 'text.pdf'), options.quick ? QUICK_TEXT_PDF_PAGES : TEXT_PDF_PAGES),
    scans: writeScannedPages(path.join(dir, 'scans'), options.ocrPages),
    large: writeLargePdf(path.join(dir, 'large.pdf'), options.largePdfMiB * BYTES_PER_MIB),
  }
  context.log(
    `files written in ${((performance.now() - started) / MS_PER_SECOND).toFixed(1)} s: ` +
      `text PDF ${files.text.pages} pages ${mib(files.text.bytes)}, scanned PDF ${files.scans.pdf.pages} pages ` +
      `${mib(files.scans.pdf.bytes)}, large PDF ${files.large.pages} pages ${mib(files.large.bytes)}`,
  )
  return files
}

const mib = (bytes: number) => `${(bytes / BYTES_PER_MIB).toFixed(1)} MiB`
const seconds = (value: number) => `${value.toFixed(2)} s`

/** The running server's part of the benchmark. */
interface ServerRun {
  context: ModeContext
  server: RunningServer
  sql: postgres.Sql
  key: string
  spaceId: string
  report: ModeReport
}

/** One document through memsvc: uploaded, followed to COMPLETED, its per-page outcome read back. */
async function ingest(run: ServerRun, upload: Omit<DocumentUpload, 'spaceId'>) {
  const uploaded = await uploadDocument(run.server.restUrl, run.key, { ...upload, spaceId: run.spaceId })
  const [done] = await awaitCompleted(run.sql, [uploaded.memoryId], INGEST_TIMEOUT_MS)
  const pages = await extractionPages(run.server.restUrl, run.key, uploaded.memoryId)
  return {
    pages,
    extractionSeconds: done!.extractedAt - done!.extractionStartedAt,
    extractionStartSeen: done!.extractionStartSeen,
    uploadSeconds: (uploaded.answeredMs - uploaded.startedMs) / MS_PER_SECOND,
    endToEndSeconds: (done!.completedMs - uploaded.startedMs) / MS_PER_SECOND,
    chunkCount: done!.chunkCount,
  }
}

function requireMethod(pages: Array<{ method: string }>, method: string, what: string): void {
  const other = pages.filter((page) => page.method !== method)
  if (other.length > 0)
    throw new Error(`${what}: ${other.length} of ${pages.length} pages were read as ${other[0]!.method}, not ${method}`)
}

/**
 * Peak RSS while the large PDF goes through memsvc, from the upload's first byte to COMPLETED.
 * The bound, from the design: the upload is streamed into the database in 2 MiB parts
 * (src/domain/documents.ts), so it holds little; extraction then reads the whole file into
 * one buffer (memory-extract.ts readContent), moves it to the extraction thread (transferred,
 * not copied), and pdfjs copies it once (pdf.ts) and keeps both until the last page: two
 * copies at once. A third allows for what the garbage collector has not yet freed of the
 * upload's parts and of the database rows the buffer was filled from. Then extraction's
 * working memory (EXTRACTION_WORKING_ALLOWANCE_MIB). So: idle RSS + 3 × the file + 64 MiB.
 */
async function largePdfRow(run: ServerRun, large: WrittenFile): Promise<void> {
  const { context, server, report } = run
  await sleep(context.options.quick ? QUICK_IDLE_SETTLE_MS : IDLE_SETTLE_MS)
  const idle = rssMiB(server.pid) ?? Number.NaN
  const peakResettable = resetPeakRss(server.pid)
  const sampler = new RssSampler(server.pid)
  const result = await sampler.during(
    ingest(run, { file: large.file, contentType: 'application/pdf', fileName: 'large.pdf', ocr: 'AUTO' }),
  )
  requireMethod(result.pages, 'TEXT', 'large PDF')
  const highWater = peakResettable ? peakRssMiB(server.pid) : undefined
  const peak = Math.max(sampler.peakMiB, highWater ?? 0)
  const fileMiB = large.bytes / BYTES_PER_MIB
  const bound = idle + FILE_COPIES_IN_BOUND * fileMiB + EXTRACTION_WORKING_ALLOWANCE_MIB
  context.log(
    `  large PDF: peak RSS ${peak.toFixed(0)} MiB (idle ${idle.toFixed(0)}), bound ${bound.toFixed(0)} MiB; ` +
      `upload ${seconds(result.uploadSeconds)}, extraction ${seconds(result.extractionSeconds)}, ` +
      `to COMPLETED ${seconds(result.endToEndSeconds)}`,
  )
  report.rows.push({
    id: 'documents-large-pdf-rss',
    measure: `peak RSS while a ${mib(large.bytes)} PDF is uploaded, extracted and indexed ÷ its bound`,
    value: peak,
    unit: 'MiB',
    floor: `bound: idle RSS + ${FILE_COPIES_IN_BOUND} × the file + ${EXTRACTION_WORKING_ALLOWANCE_MIB} MiB`,
    floorValue: bound,
    ratio: peak / bound,
    target: 1,
    targetIsMaximum: true,
    pass: peak <= bound,
    notes: [
      `${large.pages} pages, each a few lines of text over a 1 MiB uncompressed noise image; ${result.chunkCount} chunks`,
      `idle RSS before: ${idle.toFixed(1)} MiB; peak ${peak.toFixed(1)} MiB = idle + ${(peak - idle).toFixed(1)} MiB ` +
        `(${((peak - idle) / fileMiB).toFixed(2)} × the file); ` +
        (highWater === undefined
          ? `sampled every 500 ms (VmHWM could not be reset)`
          : `VmHWM ${highWater.toFixed(1)} MiB, sampled every 500 ms ${sampler.peakMiB.toFixed(1)} MiB`),
      `upload (first byte → answer) ${seconds(result.uploadSeconds)}, EXTRACTING ${seconds(result.extractionSeconds)}, ` +
        `first byte → COMPLETED ${seconds(result.endToEndSeconds)}`,
    ],
  })
}

interface PdfjsFloorResult {
  pages: number
  seconds: number
  characters: number
}

/** Rows 1 and 1b: the text PDF, floor and memsvc alternating for --rounds rounds; each side's best counts. */
async function textPdfRows(run: ServerRun, text: WrittenFile): Promise<void> {
  const { context, report } = run
  const floors: PdfjsFloorResult[] = []
  const products: Array<Awaited<ReturnType<typeof ingest>>> = []
  for (let round = 0; round < context.options.rounds; round++) {
    floors.push(await runClientFloor<PdfjsFloorResult>('pdfjs-text', { file: text.file }, FLOOR_TIMEOUT_MS))
    const product = await ingest(run, {
      file: text.file,
      contentType: 'application/pdf',
      fileName: `text-${round + 1}.pdf`,
      ocr: 'AUTO',
    })
    requireMethod(product.pages, 'TEXT', 'text PDF')
    products.push(product)
    context.log(
      `  text PDF round ${round + 1}: pdfjs alone ${seconds(floors.at(-1)!.seconds)}, memsvc EXTRACTING ` +
        `${seconds(product.extractionSeconds)}, upload → COMPLETED ${seconds(product.endToEndSeconds)}`,
    )
  }
  const floorSeconds = Math.min(...floors.map((floor) => floor.seconds))
  const extractionSeconds = Math.min(...products.map((product) => product.extractionSeconds))
  const endToEndSeconds = Math.min(...products.map((product) => product.endToEndSeconds))
  const floorRate = text.pages / floorSeconds
  const extractionRate = text.pages / extractionSeconds
  const endToEndRate = text.pages / endToEndSeconds
  const memsvcCharacters = products[0]!.pages.reduce((total, page) => total + page.characters, 0)
  const floorName = 'pdfjs-dist alone, same file (getDocument + getTextContent per page, own process)'
  report.rows.push({
    id: 'documents-pdf-text',
    measure: `PDF extraction, pages/s (${text.pages}-page text PDF, ${mib(text.bytes)}; memsvc's EXTRACTING stage)`,
    value: extractionRate,
    unit: 'pages/s',
    floor: floorName,
    floorValue: floorRate,
    ratio: extractionRate / floorRate,
    target: PDF_EXTRACTION_TARGET,
    pass:
      extractionRate / floorRate >= PDF_EXTRACTION_TARGET && products.every((product) => product.extractionStartSeen),
    notes: [
      `rounds (memsvc EXTRACTING / pdfjs alone, s): ${products
        .map((product, index) => `${product.extractionSeconds.toFixed(2)}/${floors[index]!.seconds.toFixed(2)}`)
        .join(', ')}`,
      `characters: memsvc ${memsvcCharacters}, pdfjs alone ${floors[0]!.characters} (memsvc adds line breaks and trims)`,
    ],
  })
  report.rows.push({
    id: 'documents-pdf-text-end-to-end',
    measure: `PDF ingestion, pages/s, upload's first byte → COMPLETED (the same PDF, ${products[0]!.chunkCount} keyword-only chunks)`,
    value: endToEndRate,
    unit: 'pages/s',
    floor: floorName,
    floorValue: floorRate,
    ratio: endToEndRate / floorRate,
    notes: [
      `rounds (upload / to COMPLETED, s): ${products
        .map((product) => `${product.uploadSeconds.toFixed(2)}/${product.endToEndSeconds.toFixed(2)}`)
        .join(', ')}`,
    ],
  })
}

interface TesseractFloorResult {
  pages: number
  seconds: number
  initSeconds: number
  characters: number
  meanConfidence: number
}

/** One OCR round: the floor, then memsvc on the JPEGs as images and as the scanned PDF. */
interface OcrRound {
  floor: TesseractFloorResult
  imagesSeconds: number
  imageCharacters: number
  pdfSeconds: number
  pdfCharacters: number
  pdfStartSeen: boolean
}

const jpegUpload = (file: string, fileName: string) => ({
  file,
  contentType: 'image/jpeg',
  fileName,
  ocr: 'AUTO' as const,
})
const recognised = (pages: Array<{ characters: number }>) => pages.reduce((total, page) => total + page.characters, 0)

async function ocrRound(run: ServerRun, scans: ScannedPages, round: number): Promise<OcrRound> {
  const { context, server, sql, key, spaceId } = run
  const workers = context.options.ocrConcurrency
  const floor = await runClientFloor<TesseractFloorResult>(
    'tesseract-ocr',
    { images: scans.imageFiles.join(','), workers: String(workers) },
    FLOOR_TIMEOUT_MS,
  )
  const uploads: string[] = []
  for (const [index, file] of scans.imageFiles.entries()) {
    const upload = { ...jpegUpload(file, `scan-${round}-${index + 1}.jpg`), spaceId }
    uploads.push((await uploadDocument(server.restUrl, key, upload)).memoryId)
  }
  const imagesSeconds = spanSeconds(await awaitCompleted(sql, uploads, INGEST_TIMEOUT_MS))
  const imagePages = (await Promise.all(uploads.map((id) => extractionPages(server.restUrl, key, id)))).flat()
  requireMethod(imagePages, 'OCR', 'scanned images')
  const pdf = await ingest(run, {
    file: scans.pdf.file,
    contentType: 'application/pdf',
    fileName: `scanned-${round}.pdf`,
    ocr: 'AUTO',
  })
  requireMethod(pdf.pages, 'OCR', 'scanned PDF')
  context.log(
    `  OCR round ${round}: tesseract.js alone ${seconds(floor.seconds)}, memsvc ${scans.imageFiles.length} JPEG uploads ` +
      `${seconds(imagesSeconds)}, the scanned PDF's EXTRACTING ${seconds(pdf.extractionSeconds)}`,
  )
  return {
    floor,
    imagesSeconds,
    imageCharacters: recognised(imagePages),
    pdfSeconds: pdf.extractionSeconds,
    pdfCharacters: recognised(pdf.pages),
    pdfStartSeen: pdf.extractionStartSeen,
  }
}

/**
 * Rows 2 and 2b: the scans through tesseract.js alone, then through memsvc as JPEG images and
 * as one scanned PDF, --rounds times; each side's best counts.
 */
async function ocrRows(run: ServerRun, scans: ScannedPages): Promise<void> {
  const { context, server, sql, key, spaceId, report } = run
  const workers = context.options.ocrConcurrency
  const pages = scans.imageFiles.length
  // Warm-up, as the floor's: one page per OCR thread starts the threads and loads the model
  // (not measured). The threads then stay while the floor runs: they end after a minute idle.
  const warmUps = await Promise.all(
    Array.from({ length: workers }, (_, index) =>
      uploadDocument(server.restUrl, key, { ...jpegUpload(scans.imageFiles[0]!, `warm-up-${index + 1}.jpg`), spaceId }),
    ),
  )
  await awaitCompleted(
    sql,
    warmUps.map((upload) => upload.memoryId),
    INGEST_TIMEOUT_MS,
  )
  const rounds: OcrRound[] = []
  for (let round = 1; round <= context.options.rounds; round++) rounds.push(await ocrRound(run, scans, round))

  const floorSeconds = Math.min(...rounds.map((round) => round.floor.seconds))
  const imagesSeconds = Math.min(...rounds.map((round) => round.imagesSeconds))
  const pdfSeconds = Math.min(...rounds.map((round) => round.pdfSeconds))
  const floorRate = pages / floorSeconds
  const imagesRate = pages / imagesSeconds
  const pdfRate = pages / pdfSeconds
  const floor = rounds[0]!.floor
  const perRound = (memsvc: (round: OcrRound) => number) =>
    rounds.map((round) => `${memsvc(round).toFixed(2)}/${round.floor.seconds.toFixed(2)}`).join(', ')
  const floorName = `tesseract.js alone, ${workers} worker(s) (createWorker + createScheduler), the same JPEGs`
  const floorNote =
    `tesseract.js alone: ${floor.characters} characters at mean confidence ${floor.meanConfidence.toFixed(0)}; ` +
    `its workers started in ${seconds(floor.initSeconds)} (not measured, nor memsvc's: both warmed on one page)`
  const scanSize = `${scans.width} × ${scans.height} px, a few lines of large print`
  report.rows.push({
    id: 'documents-ocr-scanned-pdf',
    measure: `OCR of a scanned PDF, pages/s (${pages} Letter pages, ${scanSize}; --ocr-concurrency ${workers})`,
    value: pdfRate,
    unit: 'pages/s',
    floor: floorName,
    floorValue: floorRate,
    ratio: pdfRate / floorRate,
    target: OCR_TARGET,
    pass: pdfRate / floorRate >= OCR_TARGET && rounds.every((round) => round.pdfStartSeen),
    notes: [
      `memsvc's EXTRACTING stage: each page rendered by pdfjs at 300 DPI to JPEG, then OCR (the next page renders meanwhile); ` +
        `${rounds[0]!.pdfCharacters} characters`,
      `rounds (memsvc / tesseract.js alone, s): ${perRound((round) => round.pdfSeconds)}`,
      floorNote,
    ],
  })
  report.rows.push({
    id: 'documents-ocr-images',
    measure: `OCR of scanned images, pages/s (the same ${pages} pages as JPEG uploads, one memory each)`,
    value: imagesRate,
    unit: 'pages/s',
    floor: floorName,
    floorValue: floorRate,
    ratio: imagesRate / floorRate,
    target: OCR_TARGET,
    pass: imagesRate / floorRate >= OCR_TARGET,
    notes: [
      `the first image's EXTRACTING start → the last one's text stored: the JPEG read by OCR as uploaded; ` +
        `${rounds[0]!.imageCharacters} characters`,
      `rounds (memsvc / tesseract.js alone, s): ${perRound((round) => round.imagesSeconds)}`,
    ],
  })
}

/** From the first memory's extraction start to the last one's end (database clock). */
function spanSeconds(documents: IngestedDocument[]): number {
  const first = Math.min(...documents.map((document) => document.extractionStartedAt))
  const last = Math.max(...documents.map((document) => document.extractedAt))
  return last - first
}

async function benchUserKey(restUrl: string): Promise<string> {
  const { rootApiKey } = await call<{ rootApiKey: string }>(restUrl, 'POST', '/v1/system/init', '')
  const { userId } = await call<{ userId: string }>(restUrl, 'POST', '/v1/users', rootApiKey, {
    username: 'bench-documents',
    role: 'USER',
  })
  const { rawApiKey } = await call<{ rawApiKey: string }>(restUrl, 'POST', '/v1/apikeys', rootApiKey, {
    ownerId: userId,
  })
  return rawApiKey
}

const RSS_BOUND_NOTE =
  'The RSS bound comes from the design, not from a run: an upload is streamed into the database in 2 MiB parts; ' +
  'extraction reads the whole file back into one buffer, moves it to the extraction thread, and pdfjs copies it once, ' +
  'both kept until the last page (two copies); a third copy allows for the upload parts and database rows the ' +
  `garbage collector has not yet freed; ${EXTRACTION_WORKING_ALLOWANCE_MIB} MiB for extraction's working memory ` +
  '(pdfjs parsing one page at a time, the text and its chunks). The idle RSS it starts from is taken just before ' +
  'the upload, after the text PDF: the extraction thread, started on first use and kept, is in it.'

export const documentsMode: BenchMode = {
  prefix: 'documents-',
  describe: (options) =>
    `${options.quick ? 'quick (smoke test; numbers are not measurements), ' : ''}documents: text PDF extraction and ` +
    `OCR of ${options.ocrPages} scanned pages with ${options.ocrConcurrency} worker(s), ${options.rounds} rounds each; ` +
    `peak RSS over a ${options.largePdfMiB} MiB PDF; keyword-only space`,
  usesWrk: false,
  pinning:
    'memsvc and each floor process on the same core (taskset) when possible; PostgreSQL and this process unpinned',
  async run(context, report) {
    const files = writeBenchFiles(context)
    const { options, database } = context
    const maxUploadMiB = Math.max(
      MIN_MAX_UPLOAD_MIB,
      Math.ceil(files.large.bytes / BYTES_PER_MIB) + MAX_UPLOAD_HEADROOM_MIB,
    )
    const sql = postgres(database.url, { max: 2, onnotice: () => {} })
    const server = await startMemsvc({
      executable: context.executable,
      sandbox: context.sandbox,
      args: serverArgs([
        ...['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', String(options.poolMax)],
        ...['--max-upload-mb', String(maxUploadMiB), '--document-threads', '1'],
        ...['--ocr-concurrency', String(options.ocrConcurrency)],
      ]),
    })
    context.log(`memsvc pid ${server.pid} READY in ${server.readyMs.toFixed(0)} ms`)
    try {
      const key = await benchUserKey(server.restUrl)
      // No embedders: keyword-only, so that chunks are indexed for BM25 and no provider is called.
      const { spaceId } = await call<{ spaceId: string }>(server.restUrl, 'POST', '/v1/spaces', key, {
        name: 'bench documents',
      })
      const run: ServerRun = { context, server, sql, key, spaceId, report }
      context.log('text PDF…')
      await textPdfRows(run, files.text)
      // After the text PDF, whose extraction started the extraction thread (it stays): the idle
      // RSS the bound starts from is a server that has extracted a document. Before OCR,
      // whose threads (some 200 MB each) stay a minute after their last page.
      context.log('large PDF…')
      await largePdfRow(run, files.large)
      context.log('OCR…')
      await ocrRows(run, files.scans)
    } finally {
      await server.stop()
      await sql.end({ timeout: 5 })
    }
    report.extra.push(
      RSS_BOUND_NOTE,
      "Rates are pages over time: memsvc's over its EXTRACTING stage, from the job taking the memory to its text stored " +
        '(database timestamps), which is what the floors do to the same file; upload → COMPLETED adds the upload and ' +
        'the chunking and keyword indexing, which no floor does, and is reported beside without a target.',
    )
  },
}
