// memsvc memory create|create-batch|get|list|update|history|delete|content|page-image|retrieve
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Argv } from 'yargs'
import { contentTypeOfFileName, documentKindOf } from '../../documents/document-types.js'
import { type CreateMemoryRequest, type Memory, ProcessingStatus } from '../../generated/memsvc/v1/memories.js'
import { clientHandler, commandGroup, withOptions } from '../command.js'
import { PAGING_OPTIONS, pagingRequest, printListedPages } from '../common-options.js'
import { runAuthenticated, withConnection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { uploadFile } from '../file-upload.js'
import { asList, parseChoice } from '../option-parsing.js'
import { formatTime, print } from '../output.js'
import { ID_WIDTH, renderFields, renderTable, TIME_WIDTH } from '../table.js'
import { createBatchSubcommand } from './memory-batch.js'
import { contentSubcommands } from './memory-content.js'
import {
  DELETE_EPILOG,
  DELETE_OPTIONS,
  deleteByFilter,
  getSeveral,
  lifecycleSubcommands,
  memoryWithVersion,
} from './memory-lifecycle.js'
import { retrieveSubcommand } from './memory-retrieve.js'
import {
  CREATE_OPTIONS,
  createFields,
  DOCUMENT_OPTIONS,
  describePages,
  failIfAnyFailed,
  memoryFields,
  memoryJson,
  SPACE_OPTION,
  STATUSES,
  waitUntilFinished,
} from './memory-shared.js'

const MEMORY_COLUMNS = [
  { header: 'ID', value: (memory: Memory) => memory.memoryId, minWidth: ID_WIDTH },
  { header: 'STATUS', value: (memory: Memory) => memory.processingStatus, minWidth: 10 },
  { header: 'CHUNKS', value: (memory: Memory) => String(memory.chunkCount), minWidth: 6 },
  { header: 'FILE', value: (memory: Memory) => memory.fileName ?? '', dropOrder: 4 },
  { header: 'PAGES', value: (memory: Memory) => describePages(memory) ?? '', dropOrder: 5 },
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

/** A document (by --content-type, else by its extension) is streamed through UploadMemory, not read as text. */
const isDocument = (contentType: string | undefined) =>
  contentType !== undefined && documentKindOf(contentType) !== undefined

const create = clientHandler(async (argv, settings) => {
  const given = [argv.content !== undefined, argv.file !== undefined].filter(Boolean).length
  if (given > 1) throw badInput('give the content either as an argument or with --file, not both')
  const file = argv.file === undefined ? undefined : String(argv.file)
  const fields = { ...createFields(argv), memoryId: argv.id as string | undefined }
  const contentType = fields.contentType ?? (file ? contentTypeOfFileName(file) : undefined)
  const memory = await withConnection(settings, { authenticated: true }, async (connection) => {
    let stored: Memory
    if (file && isDocument(contentType)) {
      const header = { ...fields, contentType, fileName: path.basename(file) }
      stored = (await uploadFile(connection, header, file, () => {})).memory!
    } else {
      const request: CreateMemoryRequest = {
        ...fields,
        contentType,
        originalContent:
          argv.content !== undefined
            ? String(argv.content)
            : file
              ? await fs.readFile(file, 'utf8')
              : await readStdin(),
      }
      stored = (await connection.run((api) => api.memories.create(request))).memory!
    }
    if (!argv.wait) return stored
    const [done] = await waitUntilFinished(connection, [stored.memoryId], () => {})
    return done!
  })
  print(settings.output, { json: memoryJson(memory), text: () => renderFields(memoryFields(memory)) })
  failIfAnyFailed([memory])
})

const get = clientHandler(async (argv, settings) => {
  const memoryIds = asList(argv.ids)
  if (memoryIds.length > 1) {
    if (argv.content) throw badInput('--content shows one memory: give one id')
    return getSeveral(settings, memoryIds)
  }
  const memoryId = memoryIds[0]!
  const shown = await withConnection(settings, { authenticated: true }, async (connection) => ({
    memory: await connection.run((api) => api.memories.get({ memoryId })),
    content: argv.content ? await connection.run((api) => api.memories.getContent({ memoryId })) : undefined,
  }))
  print(settings.output, {
    json: { ...memoryJson(shown.memory), ...(shown.content ? { originalContent: shown.content.originalContent } : {}) },
    text: () => (shown.content ? shown.content.originalContent : memoryWithVersion(shown.memory)),
  })
})

const list = clientHandler(async (argv, settings) => {
  const paging = pagingRequest(argv)
  const filters = {
    spaceId: String(argv.space),
    statusFilter:
      argv.status === undefined
        ? ProcessingStatus.PROCESSING_STATUS_UNSPECIFIED
        : parseChoice(argv.status, 'status', STATUSES),
  }
  await printListedPages(argv, settings, paging, (api, page) => api.memories.list({ ...filters, ...page }), {
    field: 'memories',
    what: 'memories',
    json: memoryJson,
    text: (memories) => (memories.length === 0 ? 'no memories\n' : renderTable(memories, MEMORY_COLUMNS)),
  })
})

const remove = clientHandler(async (argv, settings) => {
  const memoryIds = asList(argv.ids)
  if (argv.space !== undefined) {
    if (memoryIds.length > 0) throw badInput('give memory ids or --space with --filter/--status, not both')
    return deleteByFilter(argv, settings)
  }
  for (const flag of ['filter', 'status', 'expectedCount'] as const)
    if (argv[flag] !== undefined)
      throw badInput(`--${flag === 'expectedCount' ? 'expected-count' : flag} goes with --space`)
  if (memoryIds.length === 0)
    throw badInput('name the memories to delete: their ids, or --space with --filter/--status')
  if (memoryIds.length === 1) {
    const memoryId = memoryIds[0]!
    await runAuthenticated(settings, (api) => api.memories.delete({ memoryId }))
    print(settings.output, { json: { memoryId, deleted: true }, text: () => `deleted memory ${memoryId}\n` })
    return
  }
  const { results, deletedCount } = await runAuthenticated(settings, (api) => api.memories.batchDelete({ memoryIds }))
  print(settings.output, {
    json: { results, deletedCount },
    text: () =>
      renderTable(results, [
        { header: 'ID', value: (result) => result.memoryId, minWidth: ID_WIDTH },
        { header: 'DELETED', value: (result) => (result.deleted ? 'yes' : 'no'), minWidth: 7 },
        { header: 'ERROR', value: (result) => result.error ?? '' },
      ]),
  })
  const failed = results.filter((result) => !result.deleted)
  if (failed.length > 0)
    throw new CliError(
      `${failed.length} of ${results.length} memories were not deleted: ${failed[0]!.error}`,
      EXIT_FAILED,
    )
})

const idsPositional = (command: Argv) =>
  command.positional('ids', { type: 'string', array: true, describe: 'memory ids (UUIDs)' })

export function memoryCommand(yargs: Argv): Argv {
  return commandGroup(
    yargs,
    'memory',
    'Store, list, delete and retrieve memories (chunked and embedded in the background)',
    [
      {
        command: 'create [content]',
        describe: 'Store one memory: the content as an argument, from --file (text or a document), or from stdin',
        builder: (command) =>
          withOptions(
            command.positional('content', { type: 'string', describe: 'The text to store' }),
            CREATE_OPTIONS,
            {
              file: {
                type: 'string',
                describe:
                  'Read the content from this file; a PDF, DOCX, PPTX, XLSX, HTML or image file is uploaded as a document',
                requiresArg: true,
              },
              id: {
                type: 'string',
                describe: 'Use this UUID as the memory id instead of a generated one',
                requiresArg: true,
              },
            },
            DOCUMENT_OPTIONS,
          )
            .example(
              '$0 memory create --space 7f3a… "Paris is the capital of France" --wait',
              'store a sentence and wait for it',
            )
            .example('$0 memory create --space 7f3a… --file notes.md', 'store a file as text/markdown')
            .example('$0 memory create --space 7f3a… --file scan.pdf --ocr on --wait', 'a document, read by OCR')
            .example('cat log.txt | $0 memory create --space 7f3a…', 'from stdin'),
        handler: create,
      },
      createBatchSubcommand(),
      {
        command: 'get <ids..>',
        describe: 'Show one memory (a document with its pages), or its text with --content; several ids: a table',
        epilog:
          'Several ids are read in one request (up to 1,000): a row each, NOT_FOUND for an id that\n' +
          'does not exist or is not yours (the two look alike). Exit 1 when any was not found; the\n' +
          'others are shown all the same.',
        builder: (command) =>
          withOptions(idsPositional(command), {
            content: { type: 'boolean', describe: 'Print the stored content (one id)' },
          })
            .example('$0 memory get 0b6e…', 'one memory, its version and metadata')
            .example('$0 memory get 0b6e… 4c1a… 9f2d…', 'several, as a table'),
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
      ...lifecycleSubcommands(),
      {
        command: 'delete [ids..]',
        describe: 'Delete memories by id, or those of a space matching a filter (counted first: a dry run)',
        epilog: DELETE_EPILOG,
        builder: (command) =>
          withOptions(idsPositional(command), DELETE_OPTIONS)
            .example('$0 memory delete 0b6e…', 'one memory')
            .example(`$0 memory delete --space 7f3a… --filter "val('$.topic') = 'drafts'"`, 'count what matches')
            .example(
              `$0 memory delete --space 7f3a… --filter "val('$.topic') = 'drafts'" --expected-count 12`,
              'delete them, if still 12',
            )
            .example('$0 memory delete --space 7f3a… --status failed --expected-count 3', 'the FAILED ones'),
        handler: remove,
      },
      ...contentSubcommands(),
      retrieveSubcommand(),
    ],
  )
}
