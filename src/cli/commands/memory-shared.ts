// What the memory commands share: how a memory is shown, the options of a create (text and
// document alike), and waiting until ingest has finished.
import { DEFAULT_MAX_UPLOAD_MB } from '../../config/server-config.js'
import { DEFAULT_PAGE_IMAGE_DPI, MAX_PAGE_IMAGE_DPI, MIN_PAGE_IMAGE_DPI } from '../../documents/extracted-document.js'
import {
  type CreateMemoryRequest,
  type DocumentOptions,
  type Memory,
  ProcessingStatus,
} from '../../generated/memsvc/v1/memories.js'
import { formatSize } from '../batch-files.js'
import type { Args } from '../command.js'
import { repeatable } from '../common-options.js'
import type { Connection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { asList, lastValue, parseInteger } from '../option-parsing.js'
import { formatTime } from '../output.js'
import { chunkingFrom, chunkingJson, describeChunking } from './space.js'

export const STATUSES = [
  ProcessingStatus.PENDING,
  ProcessingStatus.EXTRACTING,
  ProcessingStatus.PROCESSING,
  ProcessingStatus.COMPLETED,
  ProcessingStatus.FAILED,
] as const
export const FINISHED: ReadonlySet<ProcessingStatus> = new Set([ProcessingStatus.COMPLETED, ProcessingStatus.FAILED])
/** How often --wait asks for the memories still being processed. */
export const WAIT_POLL_MS = 500
const OCR_MODES = ['auto', 'on', 'off'] as const

/** "12 pages, 2 by OCR" for a document's extraction; undefined for a text memory and a document without pages. */
export function describePages(memory: Memory): string | undefined {
  const extraction = memory.extraction
  if (!extraction) return undefined
  const ocr = extraction.pages.filter((page) => page.method === 'OCR').length
  const total = extraction.pagesTotal || extraction.pages.length
  if (total === 0) return undefined
  return `${total} page${total === 1 ? '' : 's'}${ocr > 0 ? `, ${ocr} by OCR` : ''}`
}

export function memoryFields(memory: Memory): Array<[string, string | undefined]> {
  return [
    ['id', memory.memoryId],
    ['space', memory.spaceId],
    ['status', memory.processingStatus],
    ['error', memory.processingError],
    ['chunks', String(memory.chunkCount)],
    ['content type', memory.contentType],
    ['file', memory.fileName],
    ['size', memory.contentBytes === undefined ? undefined : formatSize(memory.contentBytes)],
    ['pages', describePages(memory)],
    [
      'ocr',
      memory.documentOptions
        ? `${memory.documentOptions.ocr} (${memory.documentOptions.ocrLanguages.join(', ') || 'eng'})`
        : undefined,
    ],
    [
      'page images',
      memory.documentOptions?.extractPageImages ? `${memory.documentOptions.pageImageDpi} dpi` : undefined,
    ],
    ['sha256', memory.originalContentSha256],
    ['chunking', describeChunking(memory.chunkingConfig)],
    [
      'metadata',
      memory.metadata && Object.keys(memory.metadata).length > 0 ? JSON.stringify(memory.metadata) : undefined,
    ],
    ['created', `${formatTime(memory.createdAt)} by ${memory.createdById}`],
  ]
}

export const memoryJson = (memory: Memory) => ({ ...memory, chunkingConfig: chunkingJson(memory.chunkingConfig) })

/** A JSON-object option (--metadata, --merge-metadata); a bad value is a bad-input error that shows `example`. */
export function jsonObjectOption(text: unknown, flag: string, example: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined
  try {
    const parsed = JSON.parse(String(text)) as unknown
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>
  } catch {
    // Reported below, like any other value that is not an object.
  }
  throw badInput(`--${flag}: must be a JSON object, e.g. --${flag} '${example}'`)
}

/** How documents are extracted, from --ocr, --page-images, --page-image-dpi and --ocr-language. */
export function documentFields(argv: Args): DocumentOptions {
  const ocr = lastValue(argv.ocr)
  if (ocr !== undefined && !(OCR_MODES as readonly string[]).includes(ocr.toLowerCase()))
    throw badInput(`--ocr "${ocr}": must be one of ${OCR_MODES.join(', ')}`)
  const dpi = lastValue(argv.pageImageDpi)
  if (dpi !== undefined && !argv.pageImages) throw badInput('--page-image-dpi needs --page-images')
  return {
    ocr: ocr?.toUpperCase(),
    extractPageImages: argv.pageImages === true ? true : undefined,
    pageImageDpi:
      dpi === undefined
        ? undefined
        : parseInteger(dpi, 'page-image-dpi', { min: MIN_PAGE_IMAGE_DPI, max: MAX_PAGE_IMAGE_DPI }),
    ocrLanguages: asList(argv.ocrLanguage),
  }
}

/** The fields every memory create shares, from the options. */
export function createFields(argv: Args): Omit<CreateMemoryRequest, 'originalContent'> {
  return {
    spaceId: String(argv.space),
    contentType: argv.contentType as string | undefined,
    metadata: jsonObjectOption(argv.metadata, 'metadata', '{"source":"wiki"}'),
    chunkingConfig: chunkingFrom(argv),
    dedupe: argv.dedupe as boolean | undefined,
    documentOptions: documentFields(argv),
  }
}

/** Polls each memory until it is COMPLETED or FAILED; `onFinished` hears of each once. */
export async function waitUntilFinished(
  connection: Connection,
  memoryIds: string[],
  onFinished: (memory: Memory) => void,
): Promise<Memory[]> {
  const finished = new Map<string, Memory>()
  while (finished.size < memoryIds.length) {
    for (const memoryId of memoryIds) {
      if (finished.has(memoryId)) continue
      const memory = await connection.run((api) => api.memories.get({ memoryId }))
      if (!FINISHED.has(memory.processingStatus)) continue
      finished.set(memoryId, memory)
      onFinished(memory)
    }
    if (finished.size < memoryIds.length) await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS))
  }
  return memoryIds.map((memoryId) => finished.get(memoryId)!)
}

export function failIfAnyFailed(memories: Memory[]): void {
  const failed = memories.filter((memory) => memory.processingStatus === ProcessingStatus.FAILED)
  if (failed.length > 0)
    throw new CliError(
      `${failed.length} of ${memories.length} memories FAILED: ${failed[0]!.processingError ?? 'no reason given'}`,
      EXIT_FAILED,
    )
}

export const SPACE_OPTION = {
  space: { type: 'string', describe: 'The space id (required)', requiresArg: true, demandOption: true },
} as const

/** A memory's chunk sizes, after --chunking, on create and on update. */
export const CHUNK_SIZE_OPTIONS = {
  'chunk-size': { type: 'string', describe: 'Chunk size in characters', requiresArg: true },
  'chunk-overlap': {
    type: 'string',
    describe: 'Characters shared by neighbouring chunks (recursive)',
    requiresArg: true,
  },
} as const

export const CREATE_OPTIONS = {
  ...SPACE_OPTION,
  'content-type': {
    type: 'string',
    describe:
      'text/plain, text/markdown, application/json, or a document type (default: by file extension, else text/plain)',
    requiresArg: true,
  },
  metadata: { type: 'string', describe: 'A JSON object stored with the memory', requiresArg: true },
  dedupe: { type: 'boolean', describe: 'If the space already holds the same content, answer with that memory' },
  wait: { type: 'boolean', describe: 'Block until ingest has finished (COMPLETED or FAILED; exit 1 if FAILED)' },
  chunking: { type: 'string', describe: "Override the space's chunking: none, recursive, sentence", requiresArg: true },
  ...CHUNK_SIZE_OPTIONS,
} as const

/** How a document (PDF, Office, HTML, image) is extracted; text files ignore these. */
export const DOCUMENT_OPTIONS = {
  ocr: {
    type: 'string',
    describe: `OCR of documents: auto (pages without a text layer), on (every page and image) or off (default: the space's)`,
    requiresArg: true,
  },
  'page-images': {
    type: 'boolean',
    describe: 'Keep a PNG of each PDF page ("memory page-image" fetches it; retrieval can show it)',
  },
  'page-image-dpi': {
    type: 'string',
    describe: `Resolution of --page-images, ${MIN_PAGE_IMAGE_DPI} to ${MAX_PAGE_IMAGE_DPI} (default ${DEFAULT_PAGE_IMAGE_DPI})`,
    requiresArg: true,
  },
  'ocr-language': repeatable({
    describe: 'A tesseract language code for OCR (repeatable: --ocr-language eng --ocr-language deu; default eng)',
  }),
  'max-upload-mb': {
    type: 'string',
    describe: `Skip files larger than this, in MiB (set it to the server's --max-upload-mb; default ${DEFAULT_MAX_UPLOAD_MB})`,
    requiresArg: true,
  },
} as const
