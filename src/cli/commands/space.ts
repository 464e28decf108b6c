// memsvc space create|list|get|update|delete|export|import
import type { Argv } from 'yargs'
import {
  type ChunkingConfig,
  RecursiveChunking_KeepStrategy as KeepStrategy,
  type Space,
  type SpaceEmbedderInput,
} from '../../generated/memsvc/v1/spaces.js'
import { DEFAULT_TEXT_SEARCH_LANGUAGE } from '../../validation/limits.js'
import { clientHandler, commandGroup, idPositional, withOptions } from '../command.js'
import {
  LABEL_FILTER_OPTION,
  LABEL_OPTION,
  LABEL_UPDATE_OPTIONS,
  labelUpdate,
  OWNER_FILTER_OPTION,
  OWNER_OPTION,
  PAGING_OPTIONS,
  pagingRequest,
  printListedPages,
  repeatable,
} from '../common-options.js'
import { runAuthenticated } from '../connection.js'
import { badInput } from '../exit-codes.js'
import { asList, parseChoice, parseInteger, parseLabels, parseNumber } from '../option-parsing.js'
import { formatLabels, formatTime, print, yesNo } from '../output.js'
import { ID_WIDTH, renderFields, renderTable } from '../table.js'
import { transferSubcommands } from './space-transfer.js'

const CHUNKING_STRATEGIES = ['none', 'recursive', 'sentence'] as const

const CHUNKING_OPTIONS = {
  chunking: {
    type: 'string',
    describe: `Default chunking of its memories: ${CHUNKING_STRATEGIES.join(', ')} (server default recursive, 512/64)`,
    requiresArg: true,
  },
  'chunk-size': {
    type: 'string',
    describe: 'Chunk size in characters (recursive), or the maximum (sentence)',
    requiresArg: true,
  },
  'chunk-overlap': {
    type: 'string',
    describe: 'Characters shared by neighbouring chunks (recursive; default size/8)',
    requiresArg: true,
  },
} as const

/** The chunking message from --chunking/--chunk-size/--chunk-overlap; undefined when none is given. */
export function chunkingFrom(argv: Record<string, unknown>): ChunkingConfig | undefined {
  const size = argv.chunkSize === undefined ? undefined : parseInteger(argv.chunkSize, 'chunk-size', { min: 1 })
  const overlap =
    argv.chunkOverlap === undefined ? undefined : parseInteger(argv.chunkOverlap, 'chunk-overlap', { min: 0 })
  if (argv.chunking === undefined && size === undefined && overlap === undefined) return undefined
  const strategy =
    argv.chunking === undefined ? 'recursive' : parseChoice(argv.chunking, 'chunking', CHUNKING_STRATEGIES)
  if (strategy === 'none') return { strategy: { $case: 'none', value: {} } }
  if (strategy === 'sentence') return { strategy: { $case: 'sentence', value: { maxChunkSize: size } } }
  return {
    strategy: {
      $case: 'recursive',
      value: {
        chunkSize: size,
        chunkOverlap: overlap,
        separators: [],
        keepStrategy: KeepStrategy.KEEP_STRATEGY_UNSPECIFIED,
      },
    },
  }
}

/** As the REST API and the proto3 JSON mapping write it: `{"recursive": {…}}`, not the generated oneof wrapper. */
export function chunkingJson(config: ChunkingConfig | undefined): Record<string, unknown> | undefined {
  return config?.strategy && { [config.strategy.$case]: config.strategy.value }
}

const spaceJson = (space: Space) => ({ ...space, defaultChunkingConfig: chunkingJson(space.defaultChunkingConfig) })

export function describeChunking(config: ChunkingConfig | undefined): string {
  const strategy = config?.strategy
  if (!strategy) return ''
  if (strategy.$case === 'recursive')
    return `recursive, ${strategy.value.chunkSize} characters, overlap ${strategy.value.chunkOverlap}`
  if (strategy.$case === 'sentence') return `sentence, at most ${strategy.value.maxChunkSize} characters`
  return 'none (one chunk)'
}

/** `--embedder ID` or `--embedder ID=WEIGHT`, repeatable. */
function embeddersFrom(values: unknown): SpaceEmbedderInput[] {
  return asList(values).map((entry) => {
    const [embedderId, weight] = entry.split('=', 2) as [string, string | undefined]
    return { embedderId, defaultRetrievalWeight: weight === undefined ? undefined : parseNumber(weight, 'embedder') }
  })
}

const describeEmbedders = (space: Space) =>
  space.spaceEmbedders
    .map((entry) => {
      const progress =
        entry.indexState === 'BACKFILLING'
          ? ` ${entry.backfillProgress?.completedMemories}/${entry.backfillProgress?.totalMemories}`
          : ''
      return `${entry.embedderId} (weight ${entry.defaultRetrievalWeight}, ${entry.indexState}${progress})`
    })
    .join('\n')

export function spaceFields(space: Space): Array<[string, string | undefined]> {
  return [
    ['id', space.spaceId],
    ['name', space.name],
    ['embedders', describeEmbedders(space)],
    ['chunking', describeChunking(space.defaultChunkingConfig)],
    ['keyword language', space.textSearchLanguage],
    ['public read', yesNo(space.publicRead)],
    ['labels', formatLabels(space.labels)],
    ['owner', space.ownerId],
    ['created', `${formatTime(space.createdAt)} by ${space.createdById}`],
    ['updated', `${formatTime(space.updatedAt)} by ${space.updatedById}`],
  ]
}

const create = clientHandler(async (argv, settings) => {
  // None is a keyword-only space (or one with the owner's default LOCAL embedder, when the server has one).
  const spaceEmbedders = embeddersFrom(argv.embedder)
  const request = {
    spaceId: argv.id as string | undefined,
    ownerId: argv.ownerId as string | undefined,
    name: String(argv.name),
    labels: parseLabels(argv.label, 'label') ?? {},
    spaceEmbedders,
    defaultChunkingConfig: chunkingFrom(argv),
    publicRead: argv.publicRead as boolean | undefined,
    textSearchLanguage: argv.language as string | undefined,
  }
  const space = await runAuthenticated(settings, (api) => api.spaces.create(request))
  print(settings.output, { json: spaceJson(space), text: () => renderFields(spaceFields(space)) })
})

const list = clientHandler(async (argv, settings) => {
  const paging = pagingRequest(argv)
  const filters = { ownerId: argv.ownerId as string | undefined, labelFilter: parseLabels(argv.label, 'label') ?? {} }
  await printListedPages(argv, settings, paging, (api, page) => api.spaces.list({ ...filters, ...page }), {
    field: 'spaces',
    what: 'spaces',
    json: spaceJson,
    text: (spaces) =>
      spaces.length === 0
        ? 'no spaces\n'
        : renderTable(spaces, [
            { header: 'ID', value: (space) => space.spaceId, minWidth: ID_WIDTH },
            { header: 'NAME', value: (space) => space.name },
            { header: 'EMBEDDERS', value: (space) => String(space.spaceEmbedders.length), minWidth: 9 },
            { header: 'PUBLIC', value: (space) => yesNo(space.publicRead), minWidth: 6 },
            { header: 'LABELS', value: (space) => formatLabels(space.labels), dropOrder: 1 },
          ]),
  })
})

const get = clientHandler(async (argv, settings) => {
  const space = await runAuthenticated(settings, (api) => api.spaces.get({ spaceId: String(argv.id) }))
  print(settings.output, { json: spaceJson(space), text: () => renderFields(spaceFields(space)) })
})

const update = clientHandler(async (argv, settings) => {
  const request = {
    spaceId: String(argv.id),
    name: argv.name as string | undefined,
    publicRead: argv.publicRead as boolean | undefined,
    ...labelUpdate(argv),
  }
  if (Object.entries(request).every(([field, value]) => field === 'spaceId' || value === undefined)) {
    throw badInput('nothing to update: give --name, --public-read / --no-public-read or a label option')
  }
  const space = await runAuthenticated(settings, (api) => api.spaces.update(request))
  print(settings.output, { json: spaceJson(space), text: () => renderFields(spaceFields(space)) })
})

const remove = clientHandler(async (argv, settings) => {
  const spaceId = String(argv.id)
  await runAuthenticated(settings, (api) => api.spaces.delete({ spaceId }))
  print(settings.output, {
    json: { spaceId, deleted: true },
    text: () => `deleted space ${spaceId} and its memories\n`,
  })
})

const PUBLIC_READ_OPTION = {
  'public-read': { type: 'boolean', describe: 'Other users may read (retrieve from) it, never write' },
} as const

export function spaceCommand(yargs: Argv): Argv {
  return commandGroup(
    yargs,
    'space',
    'Create and manage spaces (collections of memories embedded by their embedders)',
    [
      {
        command: 'create',
        describe: 'Create a space',
        builder: (command) =>
          withOptions(
            command,
            {
              name: {
                type: 'string',
                describe: 'Its name, unique per owner (required)',
                requiresArg: true,
                demandOption: true,
              },
              embedder: repeatable({
                describe: 'An embedder id, or ID=WEIGHT (repeatable); none: searched by keywords until one is added',
              }),
              language: {
                type: 'string',
                describe:
                  'Language of its keyword search, a PostgreSQL text search configuration ' +
                  `(default ${DEFAULT_TEXT_SEARCH_LANGUAGE}; simple: no stemming or stop words); fixed once created`,
                requiresArg: true,
              },
              id: {
                type: 'string',
                describe: 'Use this UUID as the space id instead of a generated one',
                requiresArg: true,
              },
            },
            OWNER_OPTION,
            PUBLIC_READ_OPTION,
            CHUNKING_OPTIONS,
            LABEL_OPTION,
          )
            .example('$0 space create --name notes', 'a space searched by keywords, in English')
            .example(
              '$0 space create --name notizen --language german --embedder 5b0e…',
              'German, embedded by one embedder',
            )
            .example(
              '$0 space create --name docs --embedder 5b0e…=1 --embedder 9c1d…=0.5 --chunk-size 800',
              'two embedders, larger chunks',
            ),
        handler: create,
      },
      {
        command: 'list',
        describe: 'List spaces',
        builder: (command) => withOptions(command, PAGING_OPTIONS, OWNER_FILTER_OPTION, LABEL_FILTER_OPTION),
        handler: list,
      },
      {
        command: 'get <id>',
        describe: 'Show one space and the state of its embedders',
        builder: (command) => idPositional(command, 'space'),
        handler: get,
      },
      {
        command: 'update <id>',
        describe: 'Rename, share or label a space',
        builder: (command) =>
          withOptions(
            idPositional(command, 'space'),
            { name: { type: 'string', describe: 'A new name', requiresArg: true } },
            PUBLIC_READ_OPTION,
            LABEL_UPDATE_OPTIONS,
          )
            .example('$0 space update 7f3a… --name travel-notes --public-read', 'rename it and let other users read it')
            .example(
              '$0 space update --merge-label tier=gold --merge-label team=search 7f3a…',
              'add two labels, keep the others',
            ),
        handler: update,
      },
      {
        command: 'delete <id>',
        describe: 'Delete a space with its memories, chunks and vectors',
        builder: (command) => idPositional(command, 'space'),
        handler: remove,
      },
      ...transferSubcommands(),
    ],
  )
}
