// memsvc space export ID and memsvc space import FILE: a space as NDJSON (docs/export-format.md)
// through the streaming RPCs, with progress on stderr. An export is written under a temporary
// name and renamed once its last line (the trailer) has arrived, so a cut export leaves no file
// that looks whole. An import streams the file from disk; when the connection is cut, it sends
// the file again under the import's id (the server skips the lines it has applied), a few times
// with backoff, and says so.
import fs from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { status } from '@grpc/grpc-js'
import { MemsvcError } from '../../../sdk/src/index.js'
import type { ExportSpaceChunk, ImportSpaceHeader, SpaceImport } from '../../generated/memsvc/v1/spaces.js'
import { formatSize, formatSizeProgress } from '../batch-files.js'
import { type Args, clientHandler, idPositional, type Subcommand, withOptions } from '../command.js'
import { repeatable } from '../common-options.js'
import { type Connection, withConnection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED, EXIT_UNREACHABLE } from '../exit-codes.js'
import { asList, lastValue, parseInteger } from '../option-parsing.js'
import { formatTime, note, print, shellQuote } from '../output.js'
import { renderFields } from '../table.js'
import { TransferProgress } from '../transfer-progress.js'
import { onceDrained, writeAtomically } from './memory-content.js'

const NEWLINE = 0x0a
/** The trailer line is short; longer lines (memories) are counted, never kept. */
const MAX_KEPT_LINE_BYTES = 4096
/** Bytes per ImportSpace data message: well under the 4 MiB gRPC limit, and progress moves often enough. */
const IMPORT_MESSAGE_BYTES = 1024 * 1024
/** Automatic resumes after a cut connection, and the wait before the first (doubled each time, up to the maximum). */
const DEFAULT_RESUMES = 5
const MAX_RESUMES = 20
const FIRST_RESUME_DELAY_MS = 1_000
const MAX_RESUME_DELAY_MS = 15_000
/** The response header in which ImportSpace names its import as soon as it has one. */
export const IMPORT_ID_HEADER = 'x-import-id'
const COMPLETED = 'COMPLETED'
const CONNECTION_BROKE = /RST_STREAM|ECONNRESET|ECONNREFUSED|EPIPE|socket hang up|Connection dropped|closed/i
/** The server is still applying the stream that was cut (it has not noticed yet): the resume waits and tries again. */
const STILL_APPLYING = /is being applied by another request/
/** How a server's message names the import to resume: "…send the whole stream again with importId=<id>…". */
const IMPORT_ID_IN_MESSAGE = /importId=([0-9a-f-]{36})/i

/** Counts the lines of an NDJSON stream as it passes, and keeps the last one if it is short (the trailer). */
class LineCounter {
  lines = 0
  bytes = 0
  #current: Buffer[] = []
  #currentBytes = 0
  #lastLine: string | undefined
  #trailerSeen = false

  add(data: Uint8Array): void {
    this.bytes += data.length
    let start = 0
    for (let index = data.indexOf(NEWLINE); index >= 0; index = data.indexOf(NEWLINE, index + 1)) {
      this.#keep(data.subarray(start, index))
      this.#lastLine =
        this.#currentBytes <= MAX_KEPT_LINE_BYTES ? Buffer.concat(this.#current).toString('utf8') : undefined
      // Only a short line that names kind "end" is parsed: memory lines are counted, never read.
      if (this.#lastLine?.includes('"end"') && trailerOf(parsedLine(this.#lastLine))) this.#trailerSeen = true
      this.#current = []
      this.#currentBytes = 0
      this.lines++
      start = index + 1
    }
    this.#keep(data.subarray(start))
  }

  #keep(part: Uint8Array): void {
    this.#currentBytes += part.length
    if (this.#currentBytes <= MAX_KEPT_LINE_BYTES) this.#current.push(Buffer.from(part))
  }

  /** The last line, terminated or not, when it is short enough to have been kept. */
  lastLine(): string | undefined {
    if (this.#currentBytes > 0)
      return this.#currentBytes <= MAX_KEPT_LINE_BYTES ? Buffer.concat(this.#current).toString('utf8') : undefined
    return this.#lastLine
  }

  /** Memories so far: every line but the header and the trailer. */
  get memories(): number {
    return Math.max(0, this.lines - 1 - (this.#trailerSeen ? 1 : 0))
  }
}

interface Trailer {
  memoryCount: number
  chunkCount: number
}

interface LastLine {
  kind?: unknown
  memoryCount?: unknown
  chunkCount?: unknown
  error?: { code?: unknown; message?: unknown }
}

function parsedLine(line: string | undefined): LastLine | undefined {
  if (line === undefined) return undefined
  try {
    return JSON.parse(line) as LastLine
  } catch {
    // Not a whole line: the export was cut.
    return undefined
  }
}

const trailerOf = (last: LastLine | undefined): Trailer | undefined =>
  last?.kind === 'end'
    ? { memoryCount: Number(last.memoryCount ?? 0), chunkCount: Number(last.chunkCount ?? 0) }
    : undefined

/** Why the export stopped: the server's error line (written when it failed after the stream began), or a cut. */
function whyCut(last: LastLine | undefined): string {
  if (last?.kind === 'error' && last.error) return `the server failed: ${last.error.code}: ${last.error.message}`
  return 'its last line is not the end line'
}

/** "1 memory", "1,200 memories": the count and its noun, the plural given when it is not the noun with an s. */
const plural = (count: number, word: string, words = `${word}s`) =>
  `${count.toLocaleString('en-US')} ${count === 1 ? word : words}`

/** The export's bytes as they arrive, counted; ends with an error if the trailer never came. */
async function* exportedBytes(
  chunks: AsyncIterable<ExportSpaceChunk>,
  counter: LineCounter,
  progress: TransferProgress,
  trailer: { value?: Trailer },
): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    counter.add(chunk.data)
    progress.update(`exporting: ${plural(counter.memories, 'memory', 'memories')}, ${formatSize(counter.bytes)}`)
    yield chunk.data
  }
  const last = parsedLine(counter.lastLine())
  trailer.value = trailerOf(last)
  if (!trailer.value)
    throw new CliError(
      `the export broke off after ${plural(counter.memories, 'memory', 'memories')} (${formatSize(counter.bytes)}): ` +
        whyCut(last),
      EXIT_FAILED,
    )
}

const exportSpace = clientHandler(async (argv: Args, settings) => {
  const spaceId = String(argv.id)
  const file = lastValue(argv.file)
  if (file === undefined && process.stdout.isTTY)
    throw badInput('an export is NDJSON for a file: give --file NAME, or redirect stdout to a file')
  const counter = new LineCounter()
  const progress = new TransferProgress()
  const trailer: { value?: Trailer } = {}
  try {
    await withConnection(settings, { authenticated: true }, async (connection) => {
      const chunks = connection.stream((api) => api.spaces.export({ spaceId, omitVectors: argv.omitVectors === true }))
      const bytes = exportedBytes(chunks, counter, progress, trailer)
      if (file !== undefined) await writeAtomically(file, bytes)
      else for await (const part of bytes) if (!process.stdout.write(part)) await onceDrained()
    })
  } finally {
    progress.finish()
  }
  const { memoryCount, chunkCount } = trailer.value!
  const summary = {
    spaceId,
    ...(file === undefined ? {} : { file }),
    memories: memoryCount,
    chunks: chunkCount,
    bytes: counter.bytes,
    vectors: argv.omitVectors !== true,
  }
  const text =
    `exported ${plural(memoryCount, 'memory', 'memories')} (${plural(chunkCount, 'chunk')}${argv.omitVectors ? ', no vectors' : ''}, ` +
    `${formatSize(counter.bytes)}) of space ${spaceId}${file === undefined ? '' : ` to ${file}`}`
  // On stdout only when the data went to a file: otherwise stdout is the export itself.
  if (file === undefined) note(text)
  else print(settings.output, { json: summary, text: () => `${text}\n` })
})

// ---- import

interface ImportOptions {
  file: string
  header: ImportSpaceHeader
  resumes: number
}

function importOptions(argv: Args): ImportOptions {
  const file = String(argv.file)
  const resume = lastValue(argv.resume)
  const spaceId = lastValue(argv.space)
  const newSpaceName = lastValue(argv.name)
  const embedderIds = asList(argv.embedder)
  if (resume !== undefined && (spaceId !== undefined || newSpaceName !== undefined || embedderIds.length > 0))
    throw badInput('--resume continues an import into the space it started: leave out --space, --name and --embedder')
  if (resume === undefined && (spaceId === undefined) === (newSpaceName === undefined))
    throw badInput('say where to import: --space ID (an existing space) or --name NAME (a new space), not both')
  if (spaceId !== undefined && embedderIds.length > 0)
    throw badInput("--embedder chooses a new space's embedders: it goes with --name, not --space")
  let stat: fs.Stats
  try {
    stat = fs.statSync(file)
  } catch (error) {
    throw badInput(
      `${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    )
  }
  if (!stat.isFile())
    throw badInput(`${file}: not a file (an import is read twice when it resumes, so it must be a file)`)
  const resumes = lastValue(argv.retries)
  return {
    file,
    header: resume === undefined ? { spaceId, newSpaceName, embedderIds } : { importId: resume, embedderIds: [] },
    resumes: resumes === undefined ? DEFAULT_RESUMES : parseInteger(resumes, 'retries', { min: 0, max: MAX_RESUMES }),
  }
}

/** The header first, then the file's bytes as they are read, one message per read. */
async function* importMessages(header: ImportSpaceHeader, file: string, counter: LineCounter, onSent: () => void) {
  yield { part: { $case: 'header' as const, value: header } }
  for await (const data of fs.createReadStream(file, { highWaterMark: IMPORT_MESSAGE_BYTES })) {
    yield { part: { $case: 'data' as const, value: data as Buffer } }
    // Counted once gRPC asked for the next message, i.e. took this one.
    counter.add(data as Buffer)
    onSent()
  }
}

/**
 * A connection that broke (the server went away, a reset), as opposed to a server that answered;
 * or a resume that came while the server was still applying the stream that broke.
 */
function isCut(error: unknown): boolean {
  if (error instanceof CliError) return error.exitCode === EXIT_UNREACHABLE
  if (!MemsvcError.is(error)) return false
  if (error.grpcStatus === status.UNAVAILABLE) return true
  if (error.grpcStatus === status.FAILED_PRECONDITION) return STILL_APPLYING.test(error.message)
  return (
    (error.grpcStatus === status.INTERNAL || error.grpcStatus === status.UNKNOWN) &&
    CONNECTION_BROKE.test(error.message)
  )
}

const whatHappened = (error: unknown) =>
  MemsvcError.is(error) && STILL_APPLYING.test(error.message)
    ? 'the server is still applying the stream that was cut'
    : `the connection was cut (${reasonOf(error)})`

const reasonOf = (error: unknown) =>
  MemsvcError.is(error) ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error)

class ImportRun {
  readonly #connection: Connection
  readonly #options: ImportOptions
  readonly #progress = new TransferProgress()
  readonly #totalBytes: number
  #importId: string | undefined
  resumed = 0

  constructor(connection: Connection, options: ImportOptions) {
    this.#connection = connection
    this.#options = options
    this.#importId = options.header.importId
    this.#totalBytes = fs.statSync(options.file).size
  }

  async run(): Promise<SpaceImport> {
    let delay = FIRST_RESUME_DELAY_MS
    try {
      if (this.#importId) this.#progress.notice(`resuming import ${this.#importId}`)
      for (;;) {
        try {
          return await this.#attempt()
        } catch (error) {
          if (!isCut(error)) throw this.#withImportId(error)
          if (!this.#importId)
            throw new CliError(
              `the connection was cut (${reasonOf(error)}) before the server named the import, so it cannot be ` +
                'resumed: run the import again (a new space may have been created: "memsvc space list" shows it)',
              EXIT_FAILED,
            )
          if (this.resumed >= this.#options.resumes)
            throw new CliError(
              `the connection was cut (${reasonOf(error)}) and ${plural(this.resumed, 'resume')} did not finish it: ` +
                `once the server is back, resume with: memsvc space import ${shellQuote(this.#options.file)} --resume ${this.#importId}`,
              EXIT_FAILED,
            )
          this.resumed++
          this.#progress.notice(
            `${whatHappened(error)}; resuming import ${this.#importId} in ` +
              `${delay / 1_000} s (resume ${this.resumed} of ${this.#options.resumes})`,
          )
          await sleep(delay)
          delay = Math.min(delay * 2, MAX_RESUME_DELAY_MS)
        }
      }
    } finally {
      this.#progress.finish()
    }
  }

  async #attempt(): Promise<SpaceImport> {
    const counter = new LineCounter()
    const header: ImportSpaceHeader = this.#importId
      ? { importId: this.#importId, embedderIds: [] }
      : this.#options.header
    const messages = importMessages(header, this.#options.file, counter, () =>
      this.#progress.update(
        `importing: ${formatSizeProgress(counter.bytes, this.#totalBytes)} sent, ${plural(counter.memories, 'memory', 'memories')}`,
      ),
    )
    return this.#connection.run((api) =>
      api.spaces.import(messages, { onHeaders: (headers) => this.#learnImportId(headers[IMPORT_ID_HEADER]) }),
    )
  }

  #learnImportId(importId: string | undefined): void {
    if (!importId || importId === this.#importId) return
    this.#importId = importId
    this.#progress.notice(`import ${importId} started (if it is cut: --resume ${importId})`)
  }

  /** The server's refusal, with the command that resumes the import when the server says it can be. */
  #withImportId(error: unknown): unknown {
    if (!MemsvcError.is(error)) return error
    const named = IMPORT_ID_IN_MESSAGE.exec(error.message)?.[1]
    if (named)
      return new CliError(
        `${reasonOf(error)}. Resume: memsvc space import ${shellQuote(this.#options.file)} --resume ${named}`,
        EXIT_FAILED,
      )
    if (!this.#importId) return error
    return new CliError(`${reasonOf(error)} (import ${this.#importId})`, EXIT_FAILED)
  }
}

const importFields = (result: SpaceImport): Array<[string, string | undefined]> => [
  ['import', result.importId],
  ['space', result.spaceId],
  ['state', result.state],
  ['error', result.error],
  ['memories', `${result.memoriesImported} imported of ${result.memoriesExpected}`],
  ['skipped', `${result.memoriesSkipped} (the same content was already in the space)`],
  ['re-embedding', `${result.memoriesReembedding} (no embedder of the same fingerprint: embedded again)`],
  ['chunks', String(result.chunksImported)],
  ['vectors', String(result.vectorsImported)],
  ['lines applied', String(result.linesApplied)],
  ['started', `${formatTime(result.createdAt)} by ${result.createdById}`],
  ['updated', formatTime(result.updatedAt)],
]

const importSpace = clientHandler(async (argv: Args, settings) => {
  const options = importOptions(argv)
  let resumed = 0
  const result = await withConnection(settings, { authenticated: true }, async (connection) => {
    const run = new ImportRun(connection, options)
    try {
      return await run.run()
    } finally {
      resumed = run.resumed
    }
  })
  print(settings.output, { json: { ...result, resumed }, text: () => renderFields(importFields(result)) })
  if (result.state === COMPLETED) return
  if (result.state === 'RECEIVING')
    throw new CliError(
      `import ${result.importId} is not finished: the stream ended after ${result.linesApplied} lines without its end ` +
        `line (a file cut short?). Resume it with the whole file: ` +
        `memsvc space import ${shellQuote(options.file)} --resume ${result.importId}`,
      EXIT_FAILED,
    )
  throw new CliError(`import ${result.importId} ${result.state}: ${result.error ?? 'no reason given'}`, EXIT_FAILED)
})

export const IMPORT_EPILOG = [
  "Reads an export (memsvc space export) into a new space (--name: the export's settings and",
  'labels; your embedders of the same fingerprints, or --embedder) or an existing one (--space).',
  'Memories whose content the space already holds are skipped. Vectors are kept when an embedder',
  'of the space has the fingerprint (provider, model, dimensionality) they were made with, and',
  'embedded again otherwise. The file is streamed from disk, progress on stderr. If the',
  'connection is cut, the import resumes by itself (--retries times, with backoff): the file is',
  'sent again and the server skips the lines it has applied. --resume IMPORT_ID does the same by',
  'hand, with the id an earlier run printed. Exit 1 unless the import ends COMPLETED.',
].join('\n')

export function transferSubcommands(): Subcommand[] {
  return [
    {
      command: 'export <id>',
      describe: 'Write a space, its memories, chunks and vectors as NDJSON to a file or stdout',
      epilog: [
        'The format is docs/export-format.md: a header line (the space, its embedders), a line per',
        'memory with its chunks and vectors, and an end line. A file is written under a temporary',
        'name and renamed once the end line has arrived: a failed export leaves no file. Progress',
        '(memories, MB) goes to stderr.',
      ].join('\n'),
      builder: (command) =>
        withOptions(idPositional(command, 'space'), {
          file: {
            type: 'string',
            describe: 'Write to this file (default: stdout, when it is not a terminal)',
            requiresArg: true,
          },
          'omit-vectors': { type: 'boolean', describe: 'Leave the vectors out (smaller; an import embeds again)' },
        })
          .example('$0 space export 7f3a… --file notes.ndjson', 'the whole space into a file')
          .example('$0 space export 7f3a… --omit-vectors | gzip > notes.ndjson.gz', 'without vectors, compressed'),
      handler: exportSpace,
    },
    {
      command: 'import <file>',
      describe: 'Read an export into a new space (--name) or an existing one (--space), resuming after a cut',
      epilog: IMPORT_EPILOG,
      builder: (command) =>
        withOptions(command.positional('file', { type: 'string', describe: 'An export (NDJSON) file' }), {
          space: { type: 'string', describe: 'Import into this existing space', requiresArg: true },
          name: { type: 'string', describe: 'Import into a new space of this name', requiresArg: true },
          embedder: repeatable({
            describe: "The new space's embedder (repeatable; default: yours with the export's fingerprints)",
          }),
          resume: {
            type: 'string',
            describe: 'Resume this import (its id, as an earlier run printed), sending the whole file again',
            requiresArg: true,
          },
          retries: {
            type: 'string',
            describe: `Automatic resumes after a cut connection, 0 to ${MAX_RESUMES} (default ${DEFAULT_RESUMES})`,
            requiresArg: true,
          },
        })
          .example('$0 space import notes.ndjson --name notes-copy', 'into a new space')
          .example('$0 space import notes.ndjson --space 7f3a…', 'into an existing space')
          .example('$0 space import notes.ndjson --resume 2c9e…', 'finish an import that was cut'),
      handler: importSpace,
    },
  ]
}
