// What happens to a memory after it is stored: memsvc memory update (metadata, content, validity,
// with an optional version precondition), memory get of several ids at once, memory history, and
// memory delete by filter, which counts first and deletes only the count confirmed.
import fs from 'node:fs/promises'
import { status } from '@grpc/grpc-js'
import { MemsvcError } from '../../../sdk/src/index.js'
import { contentTypeOfFileName, documentKindOf } from '../../documents/document-types.js'
import {
  type BatchGetResult,
  type Memory,
  type MemoryChange,
  type MetadataChange,
  ProcessingStatus,
  type UpdateMemoryRequest,
} from '../../generated/memsvc/v1/memories.js'
import { DEFAULT_PAGE_SIZE, MAX_MEMORY_PAGE_SIZE } from '../../validation/limits.js'
import type { ClientSettings } from '../client-settings.js'
import { type Args, clientHandler, collectPages, idPositional, type Subcommand, withOptions } from '../command.js'
import { PAGING_OPTIONS } from '../common-options.js'
import { type Connection, withConnection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { lastValue, parseChoice, parseInteger, parseTime } from '../option-parsing.js'
import { formatTime, print, shellQuote } from '../output.js'
import { ID_WIDTH, renderFields, renderTable, TIME_WIDTH } from '../table.js'
import {
  CHUNK_SIZE_OPTIONS,
  FINISHED,
  jsonObjectOption,
  memoryFields,
  memoryJson,
  STATUSES,
  WAIT_POLL_MS,
} from './memory-shared.js'
import { chunkingFrom } from './space.js'

/** A content hash in the history table: enough hex digits to tell versions apart. */
const HASH_DIGITS = 12
/** The largest version and count the proto's int32 fields hold. */
const MAX_INT32 = 2_147_483_647
/** The object a bad --metadata or --merge-metadata on update is shown. */
const TOPIC_EXAMPLE = '{"topic":"billing"}'

/** The new content from --content or --content-file (read as UTF-8 text), with the type its extension names. */
async function newContent(argv: Args): Promise<{ originalContent?: string; contentType?: string }> {
  const contentType = lastValue(argv.contentType)
  const text = lastValue(argv.content)
  if (text !== undefined) return { originalContent: text, contentType }
  const file = lastValue(argv.contentFile)
  if (file === undefined) return { contentType }
  const typeOfFile = contentType ?? contentTypeOfFileName(file)
  if (typeOfFile && documentKindOf(typeOfFile))
    throw badInput(`--content-file ${file}: a ${typeOfFile} document; update replaces the text of a memory only`)
  try {
    return { originalContent: await fs.readFile(file, 'utf8'), contentType: typeOfFile }
  } catch (error) {
    throw badInput(`--content-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
}

async function updateRequest(argv: Args): Promise<UpdateMemoryRequest> {
  const validUntil = lastValue(argv.validUntil)
  const expectedVersion = lastValue(argv.expectedVersion)
  const request: UpdateMemoryRequest = {
    memoryId: String(argv.id),
    expectedVersion:
      expectedVersion === undefined
        ? undefined
        : parseInteger(expectedVersion, 'expected-version', { min: 1, max: MAX_INT32 }),
    replaceMetadata: jsonObjectOption(lastValue(argv.metadata), 'metadata', TOPIC_EXAMPLE),
    mergeMetadata: jsonObjectOption(lastValue(argv.mergeMetadata), 'merge-metadata', TOPIC_EXAMPLE),
    validUntil: validUntil === undefined ? undefined : parseTime(validUntil, 'valid-until'),
    clearValidUntil: argv.clearValidUntil === true ? true : undefined,
    chunkingConfig: chunkingFrom(argv),
    ...(await newContent(argv)),
  }
  const { memoryId: _id, expectedVersion: _version, ...changes } = request
  if (Object.values(changes).every((value) => value === undefined))
    throw badInput(
      'nothing to update: give --metadata, --merge-metadata, --content, --content-file, --content-type, ' +
        '--valid-until, --clear-valid-until or a chunking option',
    )
  return request
}

/** A stale --expected-version in one line: the current version, and how to go on. */
async function versionConflict(connection: Connection, request: UpdateMemoryRequest, error: MemsvcError) {
  const current = await connection.run((api) => api.memories.get({ memoryId: request.memoryId })).catch(() => undefined)
  if (!current) return error
  return new CliError(
    `version conflict: memory ${request.memoryId} is at version ${current.version}, ` +
      `not ${request.expectedVersion}; nothing was changed. See what changed with ` +
      `"memsvc memory history ${request.memoryId}", then run the update again with --expected-version ${current.version}`,
    EXIT_FAILED,
  )
}

/** Until a content update has been chunked and embedded (or failed). */
async function waitForContent(connection: Connection, memoryId: string): Promise<Memory> {
  for (;;) {
    const memory = await connection.run((api) => api.memories.get({ memoryId }))
    if (FINISHED.has(memory.processingStatus) && memory.contentPending !== true) return memory
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS))
  }
}

const versionFields = (memory: Memory): Array<[string, string | undefined]> => [
  ['version', String(memory.version)],
  ['updated', `${formatTime(memory.updatedAt)} by ${memory.updatedById}`],
  ['valid until', memory.validUntil === undefined ? undefined : formatTime(memory.validUntil)],
  [
    'content pending',
    memory.contentPending ? 'yes: searches use the previous content until it is embedded' : undefined,
  ],
]

/** A memory as `memory get` and `memory update` show it: its fields, then its version and validity. */
export const memoryWithVersion = (memory: Memory): string =>
  renderFields([...memoryFields(memory), ...versionFields(memory)])

const update = clientHandler(async (argv, settings) => {
  const request = await updateRequest(argv)
  const memory = await withConnection(settings, { authenticated: true }, async (connection) => {
    let updated: Memory
    try {
      updated = await connection.run((api) => api.memories.update(request))
    } catch (error) {
      if (
        MemsvcError.is(error) &&
        error.grpcStatus === status.FAILED_PRECONDITION &&
        request.expectedVersion !== undefined
      )
        throw await versionConflict(connection, request, error)
      throw error
    }
    return argv.wait ? waitForContent(connection, request.memoryId) : updated
  })
  print(settings.output, { json: memoryJson(memory), text: () => memoryWithVersion(memory) })
  if (memory.processingStatus === ProcessingStatus.FAILED)
    throw new CliError(`memory ${memory.memoryId} FAILED: ${memory.processingError ?? 'no reason given'}`, EXIT_FAILED)
})

// ---- memory get ID ID…

const resultStatus = (result: BatchGetResult) =>
  result.result?.$case === 'memory'
    ? result.result.value.processingStatus
    : result.result?.$case === 'error'
      ? result.result.value.status
      : 'NO ANSWER'

const found = (result: BatchGetResult) => (result.result?.$case === 'memory' ? result.result.value : undefined)

const BATCH_GET_COLUMNS = [
  { header: 'ID', value: (result: BatchGetResult) => result.memoryId, minWidth: ID_WIDTH },
  { header: 'STATUS', value: resultStatus, minWidth: 10 },
  { header: 'VERSION', value: (result: BatchGetResult) => String(found(result)?.version ?? ''), minWidth: 7 },
  { header: 'CHUNKS', value: (result: BatchGetResult) => String(found(result)?.chunkCount ?? ''), minWidth: 6 },
  {
    header: 'UPDATED',
    value: (result: BatchGetResult) => formatTime(found(result)?.updatedAt),
    minWidth: TIME_WIDTH,
    dropOrder: 2,
  },
  { header: 'SPACE', value: (result: BatchGetResult) => found(result)?.spaceId ?? '', dropOrder: 3 },
  {
    header: 'METADATA',
    value: (result: BatchGetResult) => {
      const metadata = found(result)?.metadata
      return metadata && Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : ''
    },
    dropOrder: 1,
  },
]

const batchGetResultJson = (result: BatchGetResult) =>
  result.result?.$case === 'memory'
    ? { memoryId: result.memoryId, memory: memoryJson(result.result.value) }
    : { memoryId: result.memoryId, error: result.result?.value ?? { status: 'NO ANSWER' } }

/** Several ids in one BatchGetMemories: a row per id (NOT_FOUND for one that is absent or not yours); exit 1 if any. */
export async function getSeveral(settings: ClientSettings, memoryIds: string[]): Promise<void> {
  const { results } = await withConnection(settings, { authenticated: true }, (connection) =>
    connection.run((api) => api.memories.batchGet({ memoryIds })),
  )
  print(settings.output, {
    json: { results: results.map(batchGetResultJson) },
    text: () => renderTable(results, BATCH_GET_COLUMNS),
  })
  const missing = results.filter((result) => !found(result))
  if (missing.length > 0)
    throw new CliError(
      `${missing.length} of ${results.length} memories not found: ${missing.map((result) => result.memoryId).join(', ')}`,
      EXIT_FAILED,
    )
}

// ---- memory history ID

const HISTORY_PAGING_OPTIONS = {
  ...PAGING_OPTIONS,
  'max-results': {
    type: 'string',
    describe: `Changes per page, 1-${MAX_MEMORY_PAGE_SIZE} (server default ${DEFAULT_PAGE_SIZE})`,
    requiresArg: true,
  },
} as const

const hashPrefix = (hash: string | undefined) => (hash ? hash.slice(0, HASH_DIGITS) : '')

/** `topic: "a" → "b"`, `+source: "wiki"`, `-draft`: one key's change. */
function describeMetadataChange(change: MetadataChange): string {
  if (change.before === undefined) return `+${change.key}: ${JSON.stringify(change.after)}`
  if (change.after === undefined) return `-${change.key}`
  return `${change.key}: ${JSON.stringify(change.before)} → ${JSON.stringify(change.after)}`
}

function describeContentChange(change: MemoryChange): string {
  if (!change.contentSha256Before && !change.contentSha256After) return ''
  const after = change.action === 'DELETE' ? '(deleted)' : hashPrefix(change.contentSha256After)
  return `${hashPrefix(change.contentSha256Before)} → ${after}`
}

function describeValidity(change: MemoryChange): string {
  if (!change.fields.includes('validUntil')) return ''
  const side = (epochMs: number | undefined) => (epochMs === undefined ? 'none' : formatTime(epochMs))
  return `${side(change.validUntilBefore)} → ${side(change.validUntilAfter)}`
}

const HISTORY_COLUMNS = [
  { header: 'ACTION', value: (change: MemoryChange) => change.action, minWidth: 6 },
  { header: 'VERSION', value: (change: MemoryChange) => String(change.version), minWidth: 7 },
  { header: 'WHEN', value: (change: MemoryChange) => formatTime(change.changedAt), minWidth: TIME_WIDTH },
  { header: 'BY', value: (change: MemoryChange) => change.changedById, minWidth: ID_WIDTH, dropOrder: 3 },
  { header: 'KEY', value: (change: MemoryChange) => change.apiKeyId, minWidth: ID_WIDTH, dropOrder: 4 },
  { header: 'FIELDS', value: (change: MemoryChange) => change.fields.join(','), minWidth: 8 },
  {
    header: 'METADATA',
    value: (change: MemoryChange) => change.metadataChanges.map(describeMetadataChange).join('; '),
    dropOrder: 1,
  },
  { header: 'CONTENT SHA-256', value: describeContentChange, dropOrder: 2 },
  { header: 'VALID UNTIL', value: describeValidity, dropOrder: 5 },
]

const history = clientHandler(async (argv, settings) => {
  const memoryId = String(argv.id)
  const pageSize = lastValue(argv.maxResults)
  const maxResults =
    pageSize === undefined ? undefined : parseInteger(pageSize, 'max-results', { min: 1, max: MAX_MEMORY_PAGE_SIZE })
  const nextToken = lastValue(argv.nextToken)
  const page = await withConnection(settings, { authenticated: true }, (connection) =>
    collectPages(
      async (token) => {
        const answer = await connection.run((api) => api.memories.history({ memoryId, maxResults, nextToken: token }))
        return { items: answer.changes, nextToken: answer.nextToken }
      },
      nextToken,
      argv.all === true,
    ),
  )
  print(settings.output, {
    json: { memoryId, changes: page.items, ...(page.nextToken ? { nextToken: page.nextToken } : {}) },
    text: () =>
      page.items.length === 0
        ? `memory ${memoryId} has not changed since it was created\n`
        : renderTable(page.items, HISTORY_COLUMNS),
  })
  if (settings.output === 'table' && page.nextToken)
    process.stderr.write(`older changes: repeat with --next-token ${page.nextToken} (or --all)\n`)
})

// ---- memory delete --space S --filter F [--status S] [--expected-count N]

interface FilterDelete {
  spaceId: string
  filter?: string
  statusFilter?: ProcessingStatus
}

/** The command that deletes exactly `count` memories matching `selection`, ready to copy. */
function confirmCommand(selection: FilterDelete, count: number): string {
  const words = ['memsvc', 'memory', 'delete', '--space', selection.spaceId]
  if (selection.filter !== undefined) words.push('--filter', selection.filter)
  if (selection.statusFilter !== undefined) words.push('--status', selection.statusFilter)
  words.push('--expected-count', String(count))
  return words.map(shellQuote).join(' ')
}

/** "filter val('$.a') = 'x' and status FAILED": what the memories to delete are chosen by. */
const describeSelection = (selection: FilterDelete) =>
  [
    selection.filter === undefined ? undefined : `filter ${selection.filter}`,
    selection.statusFilter === undefined ? undefined : `status ${selection.statusFilter}`,
  ]
    .filter(Boolean)
    .join(' and ')

const memories = (count: number) => `${count} memor${count === 1 ? 'y' : 'ies'}`

async function countMatches(connection: Connection, selection: FilterDelete): Promise<number> {
  const answer = await connection.run((api) => api.memories.batchDelete({ ...selection, dryRun: true }))
  return answer.matchedCount ?? 0
}

/**
 * Without --expected-count: a dry run that prints how many match and the command that deletes them.
 * With it: the delete, which the server refuses (FAILED_PRECONDITION) when the count moved meanwhile.
 */
export async function deleteByFilter(argv: Args, settings: ClientSettings): Promise<void> {
  const filter = lastValue(argv.filter)
  const statusName = lastValue(argv.status)
  if (filter === undefined && statusName === undefined)
    throw badInput(
      '--space needs --filter or --status: name the memories to delete (to delete them all, delete the space)',
    )
  const selection: FilterDelete = {
    spaceId: String(lastValue(argv.space)),
    filter,
    statusFilter: statusName === undefined ? undefined : parseChoice(statusName, 'status', STATUSES),
  }
  const expected = lastValue(argv.expectedCount)
  const expectedCount =
    expected === undefined ? undefined : parseInteger(expected, 'expected-count', { min: 0, max: MAX_INT32 })
  await withConnection(settings, { authenticated: true }, async (connection) => {
    if (expectedCount === undefined) {
      const matched = await countMatches(connection, selection)
      const command = confirmCommand(selection, matched)
      print(settings.output, {
        json: { dryRun: true, matchedCount: matched, deletedCount: 0, ...(matched > 0 ? { command } : {}) },
        text: () =>
          matched === 0
            ? `no memories of space ${selection.spaceId} match ${describeSelection(selection)}: nothing to delete\n`
            : `${memories(matched)} of space ${selection.spaceId} match ${describeSelection(selection)}. ` +
              `Nothing was deleted (a dry run). To delete ${matched === 1 ? 'it' : 'them'}:\n  ${command}\n`,
      })
      return
    }
    try {
      const answer = await connection.run((api) => api.memories.batchDelete({ ...selection, expectedCount }))
      print(settings.output, {
        json: {
          dryRun: false,
          matchedCount: answer.matchedCount ?? answer.deletedCount,
          deletedCount: answer.deletedCount,
        },
        text: () =>
          `deleted ${memories(answer.deletedCount)} of space ${selection.spaceId} matching ${describeSelection(selection)}\n`,
      })
    } catch (error) {
      if (!(MemsvcError.is(error) && error.grpcStatus === status.FAILED_PRECONDITION)) throw error
      const now = await countMatches(connection, selection).catch(() => undefined)
      throw new CliError(
        now === undefined
          ? `the count moved: not ${memories(expectedCount)} match any more (${error.message}); nothing was deleted`
          : `the count moved: ${memories(now)} match now, not ${expectedCount}; nothing was deleted. ` +
              `Check what matches, then confirm the new count: ${confirmCommand(selection, now)}`,
        EXIT_FAILED,
      )
    }
  })
}

export const DELETE_OPTIONS = {
  space: {
    type: 'string',
    describe: 'Delete by filter in this space (with --filter and/or --status) instead of by ids',
    requiresArg: true,
  },
  filter: {
    type: 'string',
    describe: "Metadata filter expression of the memories to delete, e.g. \"val('$.topic') = 'billing'\"",
    requiresArg: true,
  },
  status: { type: 'string', describe: `Only memories with this status: ${STATUSES.join(', ')}`, requiresArg: true },
  'expected-count': {
    type: 'string',
    describe: 'Delete, if exactly this many memories match (without it, only count them: a dry run)',
    requiresArg: true,
  },
} as const

export const DELETE_EPILOG = [
  'By ids: each memory is deleted with its chunks and vectors.',
  'By filter (--space with --filter and/or --status): a dry run first. It counts the memories',
  'that match and prints the command that deletes them, --expected-count set to that count.',
  'With --expected-count the server deletes only if exactly that many match at that moment;',
  'if the count moved meanwhile, nothing is deleted and the error says how many match now.',
  'A filter that matches every memory is refused.',
].join('\n')

// ---- the subcommands

export function lifecycleSubcommands(): Subcommand[] {
  return [
    {
      command: 'update <id>',
      describe:
        'Change a memory: its metadata (no re-embedding), its content (a new version, embedded again), its validity',
      epilog: [
        'Metadata and --valid-until change at once. New content is chunked and embedded again as',
        'a new version; until that is COMPLETED, searches find the previous content (--wait blocks',
        'until then). --expected-version N changes the memory only if it is still at version N',
        '("memory get" shows it): a version conflict changes nothing, and the error tells the',
        'current version to retry with.',
      ].join('\n'),
      builder: (command) =>
        withOptions(idPositional(command, 'memory'), {
          metadata: {
            type: 'string',
            describe: 'Replace ALL metadata with this JSON object',
            requiresArg: true,
            conflicts: ['merge-metadata'],
          },
          'merge-metadata': {
            type: 'string',
            describe: 'Set these top-level keys, keep the others; a key set to null is removed (a JSON object)',
            requiresArg: true,
          },
          content: {
            type: 'string',
            describe: 'New text content (a new version, chunked and embedded again)',
            requiresArg: true,
            conflicts: ['content-file'],
          },
          'content-file': { type: 'string', describe: 'Read the new text content from this file', requiresArg: true },
          'content-type': {
            type: 'string',
            describe:
              'text/plain, text/markdown or application/json (default: unchanged, or by --content-file extension)',
            requiresArg: true,
          },
          'valid-until': {
            type: 'string',
            describe:
              'Leave it out of retrieval after this time: ISO date/time, epoch ms, or a duration from now (30d)',
            requiresArg: true,
            conflicts: ['clear-valid-until'],
          },
          'clear-valid-until': { type: 'boolean', describe: 'Valid without end again' },
          'expected-version': {
            type: 'string',
            describe: 'Only if the memory is still at this version (else: a version conflict, nothing changed)',
            requiresArg: true,
          },
          chunking: { type: 'string', describe: 'Chunk it again: none, recursive, sentence', requiresArg: true },
          ...CHUNK_SIZE_OPTIONS,
          wait: { type: 'boolean', describe: 'After a content change, block until it is embedded (exit 1 if FAILED)' },
        })
          .example(
            `$0 memory update 0b6e… --merge-metadata '{"topic":"billing","draft":null}'`,
            'set one key, remove another',
          )
          .example(
            '$0 memory update 0b6e… --content-file notes.md --expected-version 3 --wait',
            'new content, if still at version 3',
          )
          .example('$0 memory update 0b6e… --valid-until 2026-12-31', 'left out of retrieval after 2026'),
      handler: update,
    },
    {
      command: 'history <id>',
      describe: "A memory's updates and its delete, newest first: who, when, with which key, what changed",
      builder: (command) =>
        withOptions(idPositional(command, 'memory'), HISTORY_PAGING_OPTIONS)
          .example('$0 memory history 0b6e…', 'every change, newest first')
          .example('$0 memory history 0b6e… --all -o json', 'as JSON, every page'),
      handler: history,
    },
  ]
}
