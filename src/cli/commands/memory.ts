// memsvc memory create|create-batch|get|list|delete|retrieve
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Argv } from 'yargs'
import { type CreateMemoryRequest, type Memory, ProcessingStatus } from '../../generated/memsvc/v1/memories.js'
import { clientHandler, commandGroup, fetchPages, withOptions } from '../command.js'
import { PAGING_OPTIONS, pagingRequest } from '../common-options.js'
import { type Connection, runAuthenticated, withConnection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { asList, parseChoice } from '../option-parsing.js'
import { formatTime, note, print, printPage } from '../output.js'
import { ID_WIDTH, renderFields, renderTable, TIME_WIDTH } from '../table.js'
import { retrieveSubcommand } from './memory-retrieve.js'
import { chunkingFrom, chunkingJson, describeChunking } from './space.js'

const STATUSES = [
  ProcessingStatus.PENDING,
  ProcessingStatus.PROCESSING,
  ProcessingStatus.COMPLETED,
  ProcessingStatus.FAILED,
] as const
const FINISHED: ReadonlySet<ProcessingStatus> = new Set([ProcessingStatus.COMPLETED, ProcessingStatus.FAILED])
/** Files per batch request (the server takes up to 500): a progress line after each. */
const BATCH_SIZE = 100
const WAIT_POLL_MS = 500
/** Content types by file extension; everything else is sent as text/plain. */
const CONTENT_TYPES_BY_EXTENSION: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.json': 'application/json',
}

export function memoryFields(memory: Memory): Array<[string, string | undefined]> {
  return [
    ['id', memory.memoryId],
    ['space', memory.spaceId],
    ['status', memory.processingStatus],
    ['error', memory.processingError],
    ['chunks', String(memory.chunkCount)],
    ['content type', memory.contentType],
    ['sha256', memory.originalContentSha256],
    ['chunking', describeChunking(memory.chunkingConfig)],
    [
      'metadata',
      memory.metadata && Object.keys(memory.metadata).length > 0 ? JSON.stringify(memory.metadata) : undefined,
    ],
    ['created', `${formatTime(memory.createdAt)} by ${memory.createdById}`],
  ]
}

const memoryJson = (memory: Memory) => ({ ...memory, chunkingConfig: chunkingJson(memory.chunkingConfig) })

const MEMORY_COLUMNS = [
  { header: 'ID', value: (memory: Memory) => memory.memoryId, minWidth: ID_WIDTH },
  { header: 'STATUS', value: (memory: Memory) => memory.processingStatus, minWidth: 10 },
  { header: 'CHUNKS', value: (memory: Memory) => String(memory.chunkCount), minWidth: 6 },
  { header: 'TYPE', value: (memory: Memory) => memory.contentType, dropOrder: 2 },
  { header: 'CREATED', value: (memory: Memory) => formatTime(memory.createdAt), minWidth: TIME_WIDTH, dropOrder: 1 },
  { header: 'ERROR', value: (memory: Memory) => memory.processingError ?? '', dropOrder: 3 },
]

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw badInput('give the content as an argument, with --file, or on stdin')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function metadataFrom(text: unknown): Record<string, unknown> | undefined {
  if (text === undefined) return undefined
  try {
    const parsed = JSON.parse(String(text)) as unknown
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>
  } catch {
    // Reported below, like any other value that is not an object.
  }
  throw badInput(`--metadata: must be a JSON object, e.g. --metadata '{"source":"wiki"}'`)
}

/** The fields every memory create shares, from the options. */
function createFields(argv: Record<string, unknown>): Omit<CreateMemoryRequest, 'originalContent'> {
  return {
    spaceId: String(argv.space),
    contentType: argv.contentType as string | undefined,
    metadata: metadataFrom(argv.metadata),
    chunkingConfig: chunkingFrom(argv),
    dedupe: argv.dedupe as boolean | undefined,
  }
}

/** Polls each memory until it is COMPLETED or FAILED; `onFinished` hears of each once. */
async function waitUntilFinished(
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

function failIfAnyFailed(memories: Memory[]): void {
  const failed = memories.filter((memory) => memory.processingStatus === ProcessingStatus.FAILED)
  if (failed.length > 0)
    throw new CliError(
      `${failed.length} of ${memories.length} memories FAILED: ${failed[0]!.processingError ?? 'no reason given'}`,
      EXIT_FAILED,
    )
}

const create = clientHandler(async (argv, settings) => {
  const given = [argv.content !== undefined, argv.file !== undefined].filter(Boolean).length
  if (given > 1) throw badInput('give the content either as an argument or with --file, not both')
  const file = argv.file === undefined ? undefined : String(argv.file)
  const content =
    argv.content !== undefined ? String(argv.content) : file ? await fs.readFile(file, 'utf8') : await readStdin()
  const request: CreateMemoryRequest = {
    ...createFields(argv),
    contentType:
      (argv.contentType as string | undefined) ??
      (file ? CONTENT_TYPES_BY_EXTENSION[path.extname(file).toLowerCase()] : undefined),
    memoryId: argv.id as string | undefined,
    originalContent: content,
  }
  const memory = await withConnection(settings, { authenticated: true }, async (connection) => {
    const { memory: stored } = await connection.run((api) => api.memories.create(request))
    if (!argv.wait) return stored!
    const [done] = await waitUntilFinished(connection, [stored!.memoryId], () => {})
    return done!
  })
  print(settings.output, { json: memoryJson(memory), text: () => renderFields(memoryFields(memory)) })
  failIfAnyFailed([memory])
})

/** Every regular file named, and every regular file under a named directory, in name order. */
async function filesOf(paths: string[]): Promise<string[]> {
  const files: string[] = []
  for (const entry of paths) {
    const stat = await fs.stat(entry).catch(() => undefined)
    if (!stat) throw badInput(`${entry}: no such file or directory`)
    if (stat.isFile()) files.push(entry)
    else if (stat.isDirectory()) {
      const names = (await fs.readdir(entry, { recursive: true, withFileTypes: true })).filter((item) => item.isFile())
      files.push(...names.map((item) => path.join(item.parentPath, item.name)).sort())
    }
  }
  if (files.length === 0) throw badInput('no files to store: name files or directories that hold some')
  return files
}

interface BatchOutcome {
  file: string
  memory?: Memory
  error?: string
}

const createBatch = clientHandler(async (argv, settings) => {
  const files = await filesOf(asList(argv.paths))
  const shared = createFields(argv)
  const progress = (message: string) => {
    if (settings.output === 'table') note(message)
  }
  const outcomes = await withConnection(settings, { authenticated: true }, async (connection) => {
    const results: BatchOutcome[] = []
    for (let start = 0; start < files.length; start += BATCH_SIZE) {
      const batch = files.slice(start, start + BATCH_SIZE)
      const requests = await Promise.all(
        batch.map(
          async (file): Promise<CreateMemoryRequest> => ({
            ...shared,
            contentType: shared.contentType ?? CONTENT_TYPES_BY_EXTENSION[path.extname(file).toLowerCase()],
            metadata: { ...shared.metadata, file },
            originalContent: await fs.readFile(file, 'utf8'),
          }),
        ),
      )
      const response = await connection.run((api) => api.memories.batchCreate({ requests }))
      response.results.forEach((item, index) => {
        const file = batch[index]!
        results.push(
          item.result?.$case === 'memory'
            ? { file, memory: item.result.value.memory }
            : { file, error: item.result?.value.message ?? 'no answer' },
        )
      })
      progress(`stored ${results.length}/${files.length}`)
    }
    const stored = results.filter((outcome) => outcome.memory)
    if (argv.wait && stored.length > 0) {
      let done = 0
      const finished = await waitUntilFinished(
        connection,
        stored.map((outcome) => outcome.memory!.memoryId),
        (memory) => {
          done++
          progress(`${memory.processingStatus.toLowerCase()} ${done}/${stored.length}: ${memory.memoryId}`)
        },
      )
      for (const [index, memory] of finished.entries()) stored[index]!.memory = memory
    }
    return results
  })
  print(settings.output, {
    json: {
      results: outcomes.map((outcome) =>
        outcome.memory ? { ...outcome, memory: memoryJson(outcome.memory) } : outcome,
      ),
    },
    text: () =>
      renderTable(outcomes, [
        { header: 'FILE', value: (outcome) => outcome.file },
        { header: 'ID', value: (outcome) => outcome.memory?.memoryId ?? '', minWidth: ID_WIDTH },
        { header: 'STATUS', value: (outcome) => outcome.memory?.processingStatus ?? 'REFUSED', minWidth: 10 },
        {
          header: 'CHUNKS',
          value: (outcome) => (outcome.memory ? String(outcome.memory.chunkCount) : ''),
          minWidth: 6,
        },
        { header: 'ERROR', value: (outcome) => outcome.error ?? outcome.memory?.processingError ?? '', dropOrder: 1 },
      ]),
  })
  const refused = outcomes.filter((outcome) => outcome.error)
  if (refused.length > 0)
    throw new CliError(
      `${refused.length} of ${outcomes.length} files were refused: ${refused[0]!.file}: ${refused[0]!.error}`,
      EXIT_FAILED,
    )
  if (argv.wait) failIfAnyFailed(outcomes.map((outcome) => outcome.memory!))
})

const get = clientHandler(async (argv, settings) => {
  const memoryId = String(argv.id)
  const shown = await withConnection(settings, { authenticated: true }, async (connection) => ({
    memory: await connection.run((api) => api.memories.get({ memoryId })),
    content: argv.content ? await connection.run((api) => api.memories.getContent({ memoryId })) : undefined,
  }))
  print(settings.output, {
    json: { ...memoryJson(shown.memory), ...(shown.content ? { originalContent: shown.content.originalContent } : {}) },
    text: () => (shown.content ? shown.content.originalContent : renderFields(memoryFields(shown.memory))),
  })
})

const list = clientHandler(async (argv, settings) => {
  const { maxResults, nextToken } = pagingRequest(argv)
  const filters = {
    spaceId: String(argv.space),
    statusFilter:
      argv.status === undefined
        ? ProcessingStatus.PROCESSING_STATUS_UNSPECIFIED
        : parseChoice(argv.status, 'status', STATUSES),
    maxResults,
  }
  const page = await fetchPages(settings, nextToken, argv.all === true, async (api, token) => {
    const response = await api.memories.list({ ...filters, nextToken: token })
    return { items: response.memories, nextToken: response.nextToken }
  })
  printPage(settings.output, page, {
    field: 'memories',
    what: 'memories',
    json: memoryJson,
    text: (memories) => (memories.length === 0 ? 'no memories\n' : renderTable(memories, MEMORY_COLUMNS)),
  })
})

const remove = clientHandler(async (argv, settings) => {
  const memoryId = String(argv.id)
  await runAuthenticated(settings, (api) => api.memories.delete({ memoryId }))
  print(settings.output, { json: { memoryId, deleted: true }, text: () => `deleted memory ${memoryId}\n` })
})

const idPositional = (command: Argv) => command.positional('id', { type: 'string', describe: 'memory id (UUID)' })
const SPACE_OPTION = {
  space: { type: 'string', describe: 'The space id (required)', requiresArg: true, demandOption: true },
} as const
const CREATE_OPTIONS = {
  ...SPACE_OPTION,
  'content-type': {
    type: 'string',
    describe: 'text/plain, text/markdown or application/json (default by file extension, else text/plain)',
    requiresArg: true,
  },
  metadata: { type: 'string', describe: 'A JSON object stored with the memory', requiresArg: true },
  dedupe: { type: 'boolean', describe: 'If the space already holds the same content, answer with that memory' },
  wait: { type: 'boolean', describe: 'Block until ingest has finished (COMPLETED or FAILED; exit 1 if FAILED)' },
  chunking: { type: 'string', describe: "Override the space's chunking: none, recursive, sentence", requiresArg: true },
  'chunk-size': { type: 'string', describe: 'Chunk size in characters', requiresArg: true },
  'chunk-overlap': {
    type: 'string',
    describe: 'Characters shared by neighbouring chunks (recursive)',
    requiresArg: true,
  },
} as const

export function memoryCommand(yargs: Argv): Argv {
  return commandGroup(
    yargs,
    'memory',
    'Store, list, delete and retrieve memories (chunked and embedded in the background)',
    [
      {
        command: 'create [content]',
        describe: 'Store one memory: the content as an argument, from --file, or from stdin',
        builder: (command) =>
          withOptions(
            command.positional('content', { type: 'string', describe: 'The text to store' }),
            CREATE_OPTIONS,
            {
              file: { type: 'string', describe: 'Read the content from this file', requiresArg: true },
              id: {
                type: 'string',
                describe: 'Use this UUID as the memory id instead of a generated one',
                requiresArg: true,
              },
            },
          )
            .example(
              '$0 memory create --space 7f3a… "Paris is the capital of France" --wait',
              'store a sentence and wait for it',
            )
            .example('$0 memory create --space 7f3a… --file notes.md', 'store a file as text/markdown')
            .example('cat log.txt | $0 memory create --space 7f3a…', 'from stdin'),
        handler: create,
      },
      {
        command: 'create-batch <paths..>',
        describe: 'Store files (or every file under directories) as memories, showing progress',
        builder: (command) =>
          withOptions(
            command.positional('paths', { type: 'string', array: true, describe: 'Files or directories' }),
            CREATE_OPTIONS,
          ).example(
            '$0 memory create-batch --space 7f3a… docs/ --wait',
            'every file under docs/, each with metadata {"file": …}',
          ),
        handler: createBatch,
      },
      {
        command: 'get <id>',
        describe: 'Show one memory, or its content with --content',
        builder: (command) =>
          withOptions(idPositional(command), { content: { type: 'boolean', describe: 'Print the stored content' } }),
        handler: get,
      },
      {
        command: 'list',
        describe: 'List the memories of a space, oldest first',
        builder: (command) =>
          withOptions(
            command,
            SPACE_OPTION,
            { status: { type: 'string', describe: `Only this status: ${STATUSES.join(', ')}`, requiresArg: true } },
            PAGING_OPTIONS,
          ),
        handler: list,
      },
      {
        command: 'delete <id>',
        describe: 'Delete a memory with its chunks and vectors',
        builder: idPositional,
        handler: remove,
      },
      retrieveSubcommand(),
    ],
  )
}
