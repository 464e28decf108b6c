// memsvc memory create-batch PATHS…: every file of the folders (and files) given becomes a
// memory. Text files go in BatchCreateMemories requests as they always did; documents are
// streamed from disk through UploadMemory, a few at a time. Files it cannot send are skipped
// with a reason, the server's refusals (413, 415…) are that file's failure, and the batch
// goes on. Progress per file on stderr; a table (or JSON) of every file at the end.
import fs from 'node:fs/promises'
import type { Argv } from 'yargs'
import { MemsvcError } from '../../../sdk/src/index.js'
import { DEFAULT_MAX_UPLOAD_MB } from '../../config/server-config.js'
import { documentKindOf } from '../../documents/document-types.js'
import {
  type BatchCreateResult,
  type CreateMemoryRequest,
  type Memory,
  ProcessingStatus,
} from '../../generated/memsvc/v1/memories.js'
import { MAX_CONTENT_BYTES } from '../../validation/memory.js'
import { MEMORY_BATCH_REQUEST_BYTES } from '../../validation/request-limits.js'
import { classifyFile, findFiles, formatSize, formatSizeProgress, megabytesToBytes } from '../batch-files.js'
import { BatchProgress, type FileProgress } from '../batch-progress.js'
import { type Args, clientHandler, type Subcommand, withOptions } from '../command.js'
import { type Connection, withConnection } from '../connection.js'
import { formatServiceError } from '../error-report.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { uploadFile } from '../file-upload.js'
import { asList, lastValue, parseInteger } from '../option-parsing.js'
import { note, print } from '../output.js'
import { ID_WIDTH, renderTable } from '../table.js'
import { CREATE_OPTIONS, createFields, DOCUMENT_OPTIONS, FINISHED, memoryJson, WAIT_POLL_MS } from './memory-shared.js'

/** Text files per BatchCreateMemories request (the server takes up to 500). */
const TEXT_BATCH_FILES = 100
/** Text bytes per request: half the server's batch limit leaves room for the encoding and metadata. */
const TEXT_BATCH_BYTES = MEMORY_BATCH_REQUEST_BYTES / 2
const DEFAULT_CONCURRENCY = 2
/** More parallel uploads than this only queue up behind the server's extraction threads. */
const MAX_CONCURRENCY = 16

/** Where a file stands: not sent (SKIPPED), refused by the server (REFUSED), or its memory's status. */
type ItemStatus = 'SKIPPED' | 'REFUSED' | 'QUEUED' | 'UPLOADING' | ProcessingStatus

interface BatchItem {
  file: string
  contentType?: string
  bytes?: number
  status: ItemStatus
  memory?: Memory
  reason?: string
}

const NOT_STORED: ReadonlySet<ItemStatus> = new Set(['SKIPPED', 'REFUSED', ProcessingStatus.FAILED])

/** pdf, docx, png, text, markdown, json: the type in a word, for the table. */
function shortType(contentType: string | undefined): string {
  if (contentType === undefined) return ''
  const kind = documentKindOf(contentType)
  if (kind === 'image') return contentType.split('/')[1] ?? kind
  if (kind) return kind
  return { 'text/plain': 'text', 'text/markdown': 'markdown', 'application/json': 'json' }[contentType] ?? contentType
}

/** "OCR page 2/3" while pages are counted, else the stage alone: the page under way is the one after those done. */
function atPage(stage: string, extraction: Memory['extraction']): string {
  if (!extraction || extraction.pagesTotal === 0) return stage
  return `${stage} page ${Math.min(extraction.pagesDone + 1, extraction.pagesTotal)}/${extraction.pagesTotal}`
}

/** What a memory's status says for its progress line: the extraction stage and page, embedding, done. */
export function memoryProgress(memory: Memory): FileProgress {
  switch (memory.processingStatus) {
    case ProcessingStatus.COMPLETED:
      return {
        stage: 'done',
        text: `done (${memory.chunkCount} chunk${memory.chunkCount === 1 ? '' : 's'})`,
        final: true,
      }
    case ProcessingStatus.FAILED:
      return { stage: 'failed', text: `failed: ${memory.processingError ?? 'no reason given'}`, final: true }
    case ProcessingStatus.PROCESSING:
      return { stage: 'embedding', text: 'embedding' }
    case ProcessingStatus.EXTRACTING: {
      const extraction = memory.extraction
      if (extraction?.stage === 'OCR') return { stage: 'ocr', text: atPage('OCR', extraction) }
      if (extraction?.stage === 'RENDERING') return { stage: 'rendering', text: atPage('rendering', extraction) }
      if (extraction?.stage === 'DONE') return { stage: 'extracted', text: 'extracted' }
      return { stage: 'extracting', text: atPage('extracting', extraction) }
    }
    default:
      return { stage: 'queued', text: 'stored, waiting to be processed' }
  }
}

/** The server's answer in one line (its status name and message), or the error's own message. */
function reasonOf(error: unknown): string {
  if (MemsvcError.is(error)) return formatServiceError(error)
  return error instanceof Error ? error.message : String(error)
}

/** Text files go in batches as before; one too large for a batch is uploaded, and the server says what it makes of it. */
const sentAsText = (item: BatchItem): boolean => !documentKindOf(item.contentType!) && item.bytes! <= MAX_CONTENT_BYTES

/** A failure that stops the whole batch (cannot reach or trust the server): not one file's. */
const stopsTheBatch = (error: unknown) => error instanceof CliError || !MemsvcError.is(error)

interface BatchOptions {
  shared: Omit<CreateMemoryRequest, 'originalContent'>
  wait: boolean
  concurrency: number
  progress: BatchProgress | undefined
}

/** One run of create-batch over one connection: sends the files, then (with --wait) follows their memories. */
class BatchRun {
  readonly #connection: Connection
  readonly #items: BatchItem[]
  readonly #options: BatchOptions
  /** Memories stored and not finished yet, by id: --wait asks for these. */
  readonly #unfinished = new Map<string, BatchItem>()
  #sending = true
  #stopped = false

  constructor(connection: Connection, items: BatchItem[], options: BatchOptions) {
    this.#connection = connection
    this.#items = items
    this.#options = options
  }

  async run(): Promise<void> {
    const queued = this.#items.filter((item) => item.status === 'QUEUED')
    const sending = Promise.all([
      this.#sendTexts(queued.filter(sentAsText)),
      this.#sendDocuments(queued.filter((item) => !sentAsText(item))),
    ]).finally(() => {
      this.#sending = false
    })
    try {
      await Promise.all([sending, this.#options.wait ? this.#follow() : undefined])
    } finally {
      this.#stopped = true
    }
  }

  #report(item: BatchItem, progress: FileProgress): void {
    this.#options.progress?.update(item.file, progress)
  }

  #stored(item: BatchItem, memory: Memory): void {
    item.memory = memory
    item.status = memory.processingStatus
    if (!this.#options.wait) {
      this.#report(item, { stage: 'stored', text: `stored (${memory.processingStatus})`, final: true })
      return
    }
    this.#report(item, memoryProgress(memory))
    if (!FINISHED.has(memory.processingStatus)) this.#unfinished.set(memory.memoryId, item)
  }

  #refused(item: BatchItem, reason: string): void {
    item.status = 'REFUSED'
    item.reason = reason
    this.#report(item, { stage: 'failed', text: `failed: ${reason}`, final: true })
  }

  async #sendTexts(items: BatchItem[]): Promise<void> {
    for (const group of textGroups(items)) {
      const requests: CreateMemoryRequest[] = []
      const sent: BatchItem[] = []
      for (const item of group) {
        try {
          const content = await fs.readFile(item.file, 'utf8')
          requests.push({
            ...this.#options.shared,
            contentType: item.contentType,
            metadata: { ...this.#options.shared.metadata, file: item.file },
            originalContent: content,
          })
          sent.push(item)
          item.status = 'UPLOADING'
          this.#report(item, { stage: 'uploading', text: `uploading ${formatSize(item.bytes!)}` })
        } catch (error) {
          this.#refused(item, `unreadable: ${(error as NodeJS.ErrnoException).code ?? reasonOf(error)}`)
        }
      }
      if (sent.length === 0) continue
      let results: BatchCreateResult[]
      try {
        results = (await this.#connection.run((api) => api.memories.batchCreate({ requests }))).results
      } catch (error) {
        if (stopsTheBatch(error)) throw error
        for (const item of sent) this.#refused(item, reasonOf(error))
        continue
      }
      results.forEach((result, index) => {
        const item = sent[index]!
        if (result.result?.$case === 'memory' && result.result.value.memory)
          this.#stored(item, result.result.value.memory)
        else
          this.#refused(
            item,
            result.result?.$case === 'error'
              ? `${result.result.value.status}: ${result.result.value.message}`
              : 'no answer for this file',
          )
      })
    }
  }

  /** `concurrency` uploads at a time, each streamed from disk. */
  async #sendDocuments(items: BatchItem[]): Promise<void> {
    const queue = [...items]
    const worker = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) await this.#upload(item)
    }
    await Promise.all(Array.from({ length: Math.min(this.#options.concurrency, items.length) }, worker))
  }

  async #upload(item: BatchItem): Promise<void> {
    const uploading = (sent: number) => ({
      stage: 'uploading',
      text: `uploading ${formatSizeProgress(sent, item.bytes!)}`,
    })
    item.status = 'UPLOADING'
    this.#report(item, uploading(0))
    const header = {
      ...this.#options.shared,
      contentType: item.contentType,
      fileName: item.file.split(/[\\/]/).pop(),
      metadata: { ...this.#options.shared.metadata, file: item.file },
    }
    try {
      const response = await uploadFile(this.#connection, header, item.file, (sent) =>
        this.#report(item, uploading(sent)),
      )
      this.#stored(item, response.memory!)
    } catch (error) {
      if (MemsvcError.is(error)) return this.#refused(item, reasonOf(error))
      const code = (error as NodeJS.ErrnoException).code
      // The file went away or became unreadable while it was read: this file's failure.
      if (code && !(error instanceof CliError)) return this.#refused(item, `unreadable: ${code}`)
      throw error
    }
  }

  /** --wait: asks for every unfinished memory until all are COMPLETED or FAILED, while uploads go on. */
  async #follow(): Promise<void> {
    while (!this.#stopped && (this.#sending || this.#unfinished.size > 0)) {
      for (const [memoryId, item] of [...this.#unfinished]) {
        if (this.#stopped) return
        let memory: Memory
        try {
          memory = await this.#connection.run((api) => api.memories.get({ memoryId }))
        } catch (error) {
          if (stopsTheBatch(error)) throw error
          // E.g. deleted meanwhile: this file's failure, the others are still followed.
          this.#unfinished.delete(memoryId)
          item.status = ProcessingStatus.FAILED
          item.reason = reasonOf(error)
          this.#report(item, { stage: 'failed', text: `failed: ${item.reason}`, final: true })
          continue
        }
        item.memory = memory
        item.status = memory.processingStatus
        this.#report(item, memoryProgress(memory))
        if (FINISHED.has(memory.processingStatus)) this.#unfinished.delete(memoryId)
      }
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS))
    }
  }
}

/** Text files in groups of at most TEXT_BATCH_FILES files and TEXT_BATCH_BYTES bytes. */
function textGroups(items: BatchItem[]): BatchItem[][] {
  const groups: BatchItem[][] = []
  let group: BatchItem[] = []
  let bytes = 0
  for (const item of items) {
    if (group.length > 0 && (group.length >= TEXT_BATCH_FILES || bytes + item.bytes! > TEXT_BATCH_BYTES)) {
      groups.push(group)
      group = []
      bytes = 0
    }
    group.push(item)
    bytes += item.bytes!
  }
  if (group.length > 0) groups.push(group)
  return groups
}

const pagesOf = (item: BatchItem) => {
  const extraction = item.memory?.extraction
  const pages = extraction ? extraction.pagesTotal || extraction.pages.length : 0
  // A DOCX or an HTML file has no pages: the column stays empty rather than saying 0.
  return pages > 0 ? String(pages) : ''
}

const reasonFor = (item: BatchItem) => item.reason ?? item.memory?.processingError ?? ''

const itemJson = (item: BatchItem) => ({
  file: item.file,
  contentType: item.contentType,
  bytes: item.bytes,
  status: item.status,
  memoryId: item.memory?.memoryId,
  ...(item.memory ? { memory: memoryJson(item.memory) } : {}),
  ...(reasonFor(item) ? { reason: reasonFor(item) } : {}),
})

function summaryTable(items: BatchItem[]): string {
  return renderTable(items, [
    { header: 'FILE', value: (item) => item.file },
    { header: 'TYPE', value: (item) => shortType(item.contentType), minWidth: 4 },
    { header: 'MEMORY ID', value: (item) => item.memory?.memoryId ?? '', minWidth: ID_WIDTH },
    { header: 'STATUS', value: (item) => item.status, minWidth: 10 },
    { header: 'CHUNKS', value: (item) => (item.memory ? String(item.memory.chunkCount) : ''), minWidth: 6 },
    { header: 'PAGES', value: pagesOf, minWidth: 5, dropOrder: 2 },
    { header: 'REASON', value: reasonFor, dropOrder: 1 },
  ])
}

async function batchItems(argv: Args, files: string[]): Promise<BatchItem[]> {
  const maxUploadMb = parseInteger(lastValue(argv.maxUploadMb) ?? DEFAULT_MAX_UPLOAD_MB, 'max-upload-mb', { min: 1 })
  const contentType = lastValue(argv.contentType)
  const items: BatchItem[] = []
  for (const file of files) {
    const classified = await classifyFile(file, { contentType, maxUploadBytes: megabytesToBytes(maxUploadMb) })
    const { contentType: type, bytes } = classified
    items.push(
      classified.skipped
        ? { file, status: 'SKIPPED', contentType: type, bytes, reason: classified.reason }
        : { file, status: 'QUEUED', contentType: type, bytes },
    )
  }
  return items
}

const createBatch = clientHandler(async (argv, settings) => {
  const { files, skippedFolders } = await findFiles(asList(argv.paths), argv.recursive === true)
  if (files.length === 0)
    throw badInput(
      skippedFolders.length > 0
        ? 'no files to store at the top of those directories; add --recursive to read their subfolders'
        : 'no files to store: name files or directories that hold some',
    )
  const shared = createFields(argv)
  const concurrency = parseInteger(lastValue(argv.concurrency) ?? DEFAULT_CONCURRENCY, 'concurrency', {
    min: 1,
    max: MAX_CONCURRENCY,
  })
  const items = await batchItems(argv, files)
  const progress = settings.output === 'table' ? new BatchProgress(files) : undefined
  if (progress && skippedFolders.length > 0)
    note(`${skippedFolders.length} subfolder(s) not read (add --recursive): ${skippedFolders.join(', ')}`)
  for (const item of items)
    if (item.status === 'SKIPPED')
      progress?.update(item.file, { stage: 'skipped', text: `skipped: ${item.reason}`, final: true })
  try {
    await withConnection(settings, { authenticated: true }, (connection) =>
      new BatchRun(connection, items, { shared, wait: argv.wait === true, concurrency, progress }).run(),
    )
  } finally {
    progress?.finish()
  }
  const counts = {
    files: items.length,
    stored: items.filter((item) => item.memory).length,
    completed: items.filter((item) => item.status === ProcessingStatus.COMPLETED).length,
    skipped: items.filter((item) => item.status === 'SKIPPED').length,
    refused: items.filter((item) => item.status === 'REFUSED').length,
    failed: items.filter((item) => item.status === ProcessingStatus.FAILED).length,
  }
  print(settings.output, { json: { results: items.map(itemJson), counts }, text: () => summaryTable(items) })
  const problems = items.filter((item) => NOT_STORED.has(item.status))
  if (problems.length > 0)
    throw new CliError(
      `${problems.length} of ${items.length} files were skipped or failed ` +
        `(${counts.skipped} skipped, ${counts.refused} refused, ${counts.failed} FAILED); ` +
        `first: ${problems[0]!.file}: ${reasonFor(problems[0]!)}`,
      EXIT_FAILED,
    )
})

export const CREATE_BATCH_EPILOG = [
  'Each file is sent by its extension: .txt .md .json as text memories (in batches), .pdf .docx .pptx .xlsx',
  '.html .png .jpg .tif .bmp .webp as documents, streamed from disk, --concurrency at a time; the server checks',
  'the bytes against the type. Every memory gets metadata {"file": path} beside --metadata.',
  'Skipped before sending, with the reason: unknown extensions (unless --content-type), empty and unreadable',
  'files, files over --max-upload-mb. A file the server refuses (413 too large, 415 not what its name says, …)',
  "is that file's failure; the others go on. Progress goes to stderr (redrawn on a terminal, one line per step",
  'otherwise); the table of every file, or with -o json {"results": […], "counts": {…}}, to stdout.',
  'Exit 1 when any file was skipped, refused or (with --wait) FAILED; every other file is stored all the same.',
].join('\n')

export function createBatchSubcommand(): Subcommand {
  return {
    command: 'create-batch <paths..>',
    describe: 'Store files (or every file in directories) as memories: text and documents, showing progress',
    epilog: CREATE_BATCH_EPILOG,
    builder: (command: Argv) =>
      withOptions(
        command.positional('paths', { type: 'string', array: true, describe: 'Files or directories' }),
        CREATE_OPTIONS,
        DOCUMENT_OPTIONS,
        {
          recursive: { type: 'boolean', alias: 'r', describe: 'Read the subfolders of the directories too' },
          concurrency: {
            type: 'string',
            describe: `Documents uploaded at a time, 1 to ${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})`,
            requiresArg: true,
          },
        },
      )
        .example(
          '$0 memory create-batch --space 7f3a… docs/ --recursive --wait',
          'every file under docs/, until stored',
        )
        .example(
          '$0 memory create-batch --space 7f3a… scans/ --ocr on --ocr-language eng --ocr-language deu --page-images',
          'OCR every page in English and German, keep page images',
        )
        .example(
          '$0 memory create-batch --space 7f3a… a.pdf b.docx notes.md --concurrency 4 -o json',
          'named files, as JSON',
        ),
    handler: createBatch,
  }
}
