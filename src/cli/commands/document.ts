// memsvc document extract FILE: a local command (no server, no API key) that runs a document
// through the extraction the server runs on uploads (the same threads, OCR and page rendering)
// and prints what came out: the text, its sections and what happened to each page. For an
// operator checking what a file will give before uploading it, or why one failed; offline.
import fs from 'node:fs'
import path from 'node:path'
import type { Argv } from 'yargs'
import { DATA_DIR_OCR_LANGUAGES, DEFAULT_DOCUMENT_MEMORY_MB } from '../../config/server-config.js'
import { documentKindOf } from '../../documents/document-types.js'
import {
  DEFAULT_EXTRACTION_LIMITS,
  DEFAULT_PAGE_IMAGE_DPI,
  type DocumentKind,
  type ExtractedDocument,
  ExtractionError,
  type ExtractionOptions,
  MAX_PAGE_IMAGE_DPI,
  MIN_PAGE_IMAGE_DPI,
  type OcrMode,
} from '../../documents/extracted-document.js'
import { DEFAULT_EXTRACTION_TIMEOUT_MS, ExtractionPool } from '../../documents/extraction-pool.js'
import { TesseractOcrEngine } from '../../documents/ocr.js'
import { SNIFF_HEAD_BYTES, SNIFF_TAIL_BYTES, sniffContentType } from '../../documents/sniff.js'
import { defaultDataDir } from '../../runtime/paths.js'
import type { OutputFormat } from '../client-settings.js'
import { type Args, plainHandler, withClientOptions, withOptions } from '../command.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { note, print, yesNo } from '../output.js'
import { renderTable } from '../table.js'

const OCR_MODES = ['on', 'off', 'auto'] as const

const EXTRACT_OPTIONS = {
  ocr: {
    type: 'string',
    choices: OCR_MODES,
    default: 'auto',
    describe: 'on: OCR every page and image; auto: only pages without a text layer; off: never',
  },
  languages: {
    type: 'string',
    default: 'eng',
    describe: 'OCR languages, comma-separated tesseract codes (eng is bundled)',
    requiresArg: true,
  },
  'page-images': {
    type: 'string',
    describe: 'Render every PDF page into DIR as page-0001.png, … (made if missing)',
    requiresArg: true,
  },
  dpi: {
    type: 'number',
    default: DEFAULT_PAGE_IMAGE_DPI,
    describe: `Resolution of --page-images (${MIN_PAGE_IMAGE_DPI}..${MAX_PAGE_IMAGE_DPI})`,
    requiresArg: true,
  },
  'data-dir': {
    type: 'string',
    describe: `Its ${DATA_DIR_OCR_LANGUAGES}/ holds OCR languages beyond eng [env SERVICE_DATA_DIR] (default: "memsvc serve"'s)`,
    requiresArg: true,
  },
  'memory-mb': {
    type: 'number',
    default: DEFAULT_DOCUMENT_MEMORY_MB,
    describe: "The extraction thread's heap limit, as the server's --document-memory-mb",
    requiresArg: true,
  },
} as const

const PAGE_IMAGE_NUMBER_DIGITS = 4
const outputOf = (argv: Args): OutputFormat => (argv.output === 'json' ? 'json' : 'table')

function dataDirOf(argv: Args): string {
  const given = argv['data-dir'] ?? process.env.SERVICE_DATA_DIR
  return path.resolve(given === undefined || given === '' ? defaultDataDir() : String(given))
}

/** The kind from the bytes, as an upload's is checked: the file name is not trusted. */
function kindOf(bytes: Uint8Array, file: string): DocumentKind {
  const contentType = sniffContentType(bytes.subarray(0, SNIFF_HEAD_BYTES), bytes.subarray(-SNIFF_TAIL_BYTES))
  const kind = contentType ? documentKindOf(contentType) : undefined
  if (!kind)
    throw badInput(
      `${file} is ${contentType ?? 'empty'}, not a document extraction reads (PDF, DOCX, PPTX, XLSX, HTML or an image)`,
    )
  return kind
}

function optionsOf(argv: Args): ExtractionOptions {
  const dpi = Number(argv.dpi)
  if (!Number.isInteger(dpi) || dpi < MIN_PAGE_IMAGE_DPI || dpi > MAX_PAGE_IMAGE_DPI)
    throw badInput(`--dpi ${argv.dpi}: give a whole number from ${MIN_PAGE_IMAGE_DPI} to ${MAX_PAGE_IMAGE_DPI}`)
  const ocrLanguages = String(argv.languages)
    .split(',')
    .map((language) => language.trim())
    .filter(Boolean)
  if (ocrLanguages.length === 0) throw badInput('--languages: give at least one, e.g. eng')
  return {
    ocr: String(argv.ocr).toUpperCase() as OcrMode,
    extractPageImages: argv['page-images'] !== undefined,
    pageImageDpi: dpi,
    ocrLanguages,
    limits: DEFAULT_EXTRACTION_LIMITS,
  }
}

const extract = plainHandler(async (argv: Args) => {
  const file = path.resolve(String(argv.file))
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(fs.readFileSync(file))
  } catch (error) {
    throw badInput(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  const kind = kindOf(bytes, file)
  const options = optionsOf(argv)
  const imagesDir = argv['page-images'] === undefined ? undefined : path.resolve(String(argv['page-images']))
  if (imagesDir) fs.mkdirSync(imagesDir, { recursive: true })
  const ocr = new TesseractOcrEngine({
    concurrency: 1,
    languagesDir: path.join(dataDirOf(argv), DATA_DIR_OCR_LANGUAGES),
    maxImagePixels: options.limits.maxImagePixels,
  })
  const pool = new ExtractionPool({
    threads: 1,
    memoryLimitMb: Number(argv['memory-mb']),
    documentTimeoutMs: DEFAULT_EXTRACTION_TIMEOUT_MS,
    ocr,
  })
  const pageImages: string[] = []
  let document: ExtractedDocument
  try {
    document = await pool.extract(bytes, kind, options, {
      progress: () => {},
      pageImage: async (pageNumber, png) => {
        const target = path.join(imagesDir!, `page-${String(pageNumber).padStart(PAGE_IMAGE_NUMBER_DIGITS, '0')}.png`)
        await fs.promises.writeFile(target, png)
        pageImages.push(target)
      },
    })
  } catch (error) {
    if (error instanceof ExtractionError) throw new CliError(`${path.basename(file)}: ${error.message}`, EXIT_FAILED)
    throw error
  } finally {
    await pool.close()
    await ocr.close()
  }
  print(outputOf(argv), {
    json: { file, ...document, pageImages },
    text: () =>
      `${document.text}\n\n` +
      (document.pages.length === 0
        ? ''
        : renderTable(document.pages, [
            { header: 'PAGE', value: (page) => String(page.pageNumber), minWidth: 4 },
            { header: 'METHOD', value: (page) => page.method, minWidth: 6 },
            { header: 'CHARACTERS', value: (page) => String(page.characters), minWidth: 5 },
            { header: 'OCR CONFIDENCE', value: (page) => page.ocrConfidence?.toFixed(0) ?? '', minWidth: 3 },
            { header: 'IMAGE', value: (page) => yesNo(page.imageStored), minWidth: 3, dropOrder: 1 },
            { header: 'NOTE', value: (page) => page.note ?? '', minWidth: 10 },
          ])),
  })
  if (imagesDir) note(`${pageImages.length} page image(s) in ${imagesDir}`)
})

export function documentCommand(yargs: Argv): Argv {
  return yargs.command(
    'document <command>',
    "Document extraction as the server does it for uploads (local: this host's files, no server)",
    (group: Argv) =>
      withClientOptions(group, {
        connects: false,
        epilog: [
          'Runs offline: OCR (tesseract, English bundled) and page rendering come with the executable.',
          `Other OCR languages are <lang>.traineddata(.gz) files in <data-dir>/${DATA_DIR_OCR_LANGUAGES}, e.g. from`,
          'github.com/tesseract-ocr/tessdata_best, as the server reads them.',
        ].join('\n'),
      })
        .command(
          'extract <file>',
          'Extract a PDF, DOCX, PPTX, XLSX, HTML or image file and print its text, sections and pages',
          (command: Argv) =>
            withOptions(command, EXTRACT_OPTIONS)
              .positional('file', { type: 'string', describe: 'The document; its kind is read from its bytes' })
              .example('$0 document extract report.pdf', 'text, then a table of the pages')
              .example('$0 document extract scan.pdf --ocr on --page-images pages', 'OCR all, page PNGs')
              .example('$0 document extract photo.jpg --languages eng,deu', 'two OCR languages'),
          extract as (argv: unknown) => Promise<void>,
        )
        .demandCommand(1, 'Name a document command: extract.'),
  )
}
