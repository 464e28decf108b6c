// memsvc apikey create|list|update|delete
import type { Argv } from 'yargs'
import { type ApiKey, ApiKeyStatus } from '../../generated/memsvc/v1/apikeys.js'
import { clientHandler, commandGroup, withOptions } from '../command.js'
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
} from '../common-options.js'
import { runAuthenticated } from '../connection.js'
import { badInput } from '../exit-codes.js'
import { parseChoice, parseLabels, parseTime } from '../option-parsing.js'
import { formatLabels, formatTime, print } from '../output.js'
import { ID_WIDTH, renderFields, renderTable, TIME_WIDTH } from '../table.js'

const STATUSES = [ApiKeyStatus.ACTIVE, ApiKeyStatus.INACTIVE] as const

const STATUS_OPTION = { type: 'string', describe: 'ACTIVE or INACTIVE', requiresArg: true } as const

const CREATE_OPTIONS = {
  ...LABEL_OPTION,
  'expires-at': {
    type: 'string',
    describe:
      'When the key stops working: epoch ms, ISO date (2026-01-01[T12:00:00Z]) or a duration from now (30d, 12h, 1w)',
    requiresArg: true,
  },
  ...OWNER_OPTION,
  id: { type: 'string', describe: 'Use this UUID as the key id instead of a generated one', requiresArg: true },
} as const

const LIST_OPTIONS = {
  ...PAGING_OPTIONS,
  ...OWNER_FILTER_OPTION,
  status: STATUS_OPTION,
  ...LABEL_FILTER_OPTION,
} as const

const UPDATE_OPTIONS = { status: STATUS_OPTION, ...LABEL_UPDATE_OPTIONS } as const

export function apiKeyFields(key: ApiKey): Array<[string, string | undefined]> {
  return [
    ['id', key.apiKeyId],
    ['prefix', key.keyPrefix],
    ['status', key.status],
    ['owner', key.userId],
    ['labels', formatLabels(key.labels)],
    ['expires', formatTime(key.expiresAt)],
    ['last used', formatTime(key.lastUsedAt)],
    ['created', `${formatTime(key.createdAt)} by ${key.createdById}`],
    ['updated', `${formatTime(key.updatedAt)} by ${key.updatedById}`],
  ]
}

function keyTable(keys: ApiKey[]): string {
  return renderTable(keys, [
    { header: 'ID', value: (key) => key.apiKeyId, minWidth: ID_WIDTH },
    { header: 'PREFIX', value: (key) => key.keyPrefix, minWidth: 12 },
    { header: 'STATUS', value: (key) => key.status, minWidth: 8 },
    { header: 'LABELS', value: (key) => formatLabels(key.labels) },
    { header: 'EXPIRES', value: (key) => formatTime(key.expiresAt), minWidth: TIME_WIDTH, dropOrder: 1 },
    { header: 'LAST USED', value: (key) => formatTime(key.lastUsedAt), minWidth: TIME_WIDTH, dropOrder: 3 },
    { header: 'CREATED', value: (key) => formatTime(key.createdAt), minWidth: TIME_WIDTH, dropOrder: 2 },
  ])
}

const create = clientHandler(async (argv, settings) => {
  const request = {
    labels: parseLabels(argv.label, 'label') ?? {},
    expiresAt: argv.expiresAt === undefined ? undefined : parseTime(String(argv.expiresAt), 'expires-at'),
    ownerId: argv.ownerId as string | undefined,
    apiKeyId: argv.id as string | undefined,
  }
  const created = await runAuthenticated(settings, (api) => api.apiKeys.create(request))
  print(settings.output, {
    json: created,
    text: () =>
      `API key created. Copy it now: it is shown only this once.\n\n  ${created.rawApiKey}\n\n` +
      renderFields(apiKeyFields(created.apiKeyMetadata!)),
  })
})

const list = clientHandler(async (argv, settings) => {
  const filters = {
    ownerId: argv.ownerId as string | undefined,
    status: argv.status === undefined ? undefined : parseChoice(argv.status, 'status', STATUSES),
    labelFilter: parseLabels(argv.label, 'label') ?? {},
  }
  const paging = pagingRequest(argv)
  await printListedPages(argv, settings, paging, (api, page) => api.apiKeys.list({ ...filters, ...page }), {
    field: 'keys',
    what: 'API keys',
    text: (keys) => (keys.length === 0 ? 'no API keys\n' : keyTable(keys)),
  })
})

const update = clientHandler(async (argv, settings) => {
  const request = {
    apiKeyId: String(argv.id),
    status: argv.status === undefined ? undefined : parseChoice(argv.status, 'status', STATUSES),
    ...labelUpdate(argv),
  }
  if (request.status === undefined && !request.replaceLabels && !request.mergeLabels) {
    throw badInput('nothing to update: give --status, --replace-label, --merge-label or --clear-labels')
  }
  const updated = await runAuthenticated(settings, (api) => api.apiKeys.update(request))
  print(settings.output, { json: updated, text: () => renderFields(apiKeyFields(updated)) })
})

const remove = clientHandler(async (argv, settings) => {
  const apiKeyId = String(argv.id)
  await runAuthenticated(settings, (api) => api.apiKeys.delete({ apiKeyId }))
  print(settings.output, {
    json: { apiKeyId, deleted: true },
    text: () => `deleted API key ${apiKeyId}; it stops working at once\n`,
  })
})

export function apiKeyCommand(yargs: Argv): Argv {
  return commandGroup(yargs, 'apikey', 'Create, list, update and delete API keys', [
    {
      command: 'create',
      describe: 'Create an API key (printed once; it cannot be shown again)',
      builder: (command) =>
        withOptions(command, CREATE_OPTIONS)
          .example('$0 apikey create --label env=prod --label team=search --expires-at 30d', 'a key valid for 30 days')
          .example(
            '$0 apikey create --owner-id 3f2a… --output json | jq -r .rawApiKey',
            'a key for another user, for a script',
          ),
      handler: create,
    },
    {
      command: 'list',
      describe: 'List API keys (metadata only, never the keys themselves)',
      builder: (command) =>
        withOptions(command, LIST_OPTIONS)
          .example('$0 apikey list', 'your keys, first page')
          .example('$0 apikey list --status ACTIVE --label env=prod --all', 'every active production key')
          .example('$0 apikey list --owner-id 3f2a… --output json', "another user's keys (admins)"),
      handler: list,
    },
    {
      command: 'update <id>',
      describe: 'Activate/deactivate a key or change its labels',
      builder: (command) =>
        withOptions(command.positional('id', { type: 'string', describe: 'API key id (UUID)' }), UPDATE_OPTIONS)
          .example('$0 apikey update 7c1d… --status INACTIVE', 'stop a key from working (reversible)')
          .example('$0 apikey update 7c1d… --merge-label owner=ana', 'add a label, keep the others')
          .example(
            '$0 apikey update --replace-label env=dev --replace-label team=search 7c1d…',
            'replace all labels, one --replace-label each',
          ),
      handler: update,
    },
    {
      command: 'delete <id>',
      describe: 'Delete an API key for good (it stops working at once)',
      builder: (command) =>
        command
          .positional('id', { type: 'string', describe: 'API key id (UUID)' })
          .example('$0 apikey delete 7c1d…', 'delete a key'),
      handler: remove,
    },
  ])
}
