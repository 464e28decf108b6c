// The commands of a registry resource (create|list|get|update|delete|probe), shared by
// `memsvc embedder`, `memsvc llm` and `memsvc reranker`. Each kind supplies its settings tables, how to
// show a resource, and thin typed calls to its gRPC service.
import type { Argv, Options } from 'yargs'
import type { Credentials } from '../../generated/memsvc/v1/registry.js'
import { type Args, clientHandler, collectPages, commandGroup, type Page, withOptions } from '../command.js'
import {
  LABEL_FILTER_OPTION,
  LABEL_OPTION,
  LABEL_UPDATE_OPTIONS,
  labelUpdate,
  OWNER_FILTER_OPTION,
  OWNER_OPTION,
  PAGING_OPTIONS,
  pagingRequest,
} from '../common-options.js'
import { type Connection, withConnection } from '../connection.js'
import { badInput } from '../exit-codes.js'
import { parseChoice, parseLabels } from '../option-parsing.js'
import { pageNote, print } from '../output.js'
import {
  CREDENTIAL_OPTIONS,
  credentialsFrom,
  type Setting,
  settingOptions,
  settingValues,
} from '../registry-options.js'
import { type Column, renderFields, renderTable } from '../table.js'

export interface RegistryResource {
  credentials?: Credentials | undefined
  createdAt: number
}

type Request = Record<string, unknown>

export interface RegistryKind<Resource extends RegistryResource> {
  /** Command name and words for messages: embedder / embedders / "an embedder". */
  noun: string
  plural: string
  /** "an embedder", "an LLM" */
  article: string
  /** The request/resource id field: embedderId / llmId / rerankerId. */
  idField: string
  providerTypes: readonly string[]
  settings: Setting[]
  /** Extra option tables (LLM capabilities and sampling), per command. */
  extraOptions?: { create: Record<string, Options>; update: Record<string, Options> }
  /**
   * Request fields the extra options set. On update `current` is the stored resource,
   * for messages the server replaces as a whole (given only when needsCurrent says so).
   */
  extraValues?: (argv: Args, current: Resource | undefined) => Request
  /** Whether an update must read the stored resource first (to merge partial messages). */
  needsCurrent?: (argv: Args) => boolean
  columns: Column<Resource>[]
  fields: (resource: Resource) => Array<[string, string | undefined]>
  examples: Record<'create' | 'list' | 'update', Array<[string, string]>>
  rpc: {
    create(connection: Connection, request: Request): Promise<Resource>
    list(connection: Connection, request: Request): Promise<Page<Resource>>
    get(connection: Connection, id: string): Promise<Resource>
    update(connection: Connection, request: Request): Promise<Resource>
    remove(connection: Connection, id: string): Promise<void>
    /** Queues the connectivity probe again; answers the job's id. */
    probe(connection: Connection, id: string): Promise<{ jobId: string }>
  }
}

const CREDENTIAL_FLAGS = Object.keys(CREDENTIAL_OPTIONS)

/**
 * The defaults, overlaid with the request's defined fields. The generated encoders
 * need every repeated/map field and every non-optional enum present (an undefined
 * enum would be sent as -1), so each kind's calls start from a full default message.
 */
export function complete<T>(defaults: T, request: Request): T {
  const result = { ...defaults } as Record<string, unknown>
  for (const [field, value] of Object.entries(request)) if (value !== undefined) result[field] = value
  return result as T
}

function providerOption(kind: RegistryKind<RegistryResource>, describe: string): Record<string, Options> {
  return {
    'provider-type': { type: 'string', describe: `${describe}: ${kind.providerTypes.join(', ')}`, requiresArg: true },
  }
}

export function registryCommand<Resource extends RegistryResource>(
  yargs: Argv,
  kind: RegistryKind<Resource>,
  describe: string,
): Argv {
  const anyKind = kind as unknown as RegistryKind<RegistryResource>
  const idPositional = (command: Argv) =>
    command.positional('id', { type: 'string', describe: `${kind.noun} id (UUID)` })

  const create = clientHandler(async (argv, settings) => {
    const request: Request = {
      [kind.idField]: argv.id as string | undefined,
      ownerId: argv['owner-id'] as string | undefined,
      providerType:
        argv['provider-type'] === undefined
          ? undefined
          : parseChoice(argv['provider-type'], 'provider-type', kind.providerTypes),
      labels: parseLabels(argv.label, 'label') ?? {},
      ...settingValues(argv, kind.settings, 'create'),
      ...kind.extraValues?.(argv, undefined),
      credentials: credentialsFrom(argv),
    }
    if (request.providerType === undefined)
      throw badInput(`--provider-type is required: one of ${kind.providerTypes.join(', ')}`)
    const created = await withConnection(settings, { authenticated: true }, (connection) =>
      kind.rpc.create(connection, request),
    )
    print(settings.output, { json: created, text: () => renderFields(kind.fields(created)) })
  })

  const list = clientHandler(async (argv, settings) => {
    const { maxResults, nextToken } = pagingRequest(argv)
    const filters: Request = {
      ownerId: argv['owner-id'] as string | undefined,
      providerType:
        argv['provider-type'] === undefined
          ? undefined
          : parseChoice(argv['provider-type'], 'provider-type', kind.providerTypes),
      labelFilter: parseLabels(argv.label, 'label') ?? {},
      maxResults,
    }
    const page = await withConnection(settings, { authenticated: true }, (connection) =>
      collectPages(
        (token) => kind.rpc.list(connection, { ...filters, nextToken: token }),
        nextToken,
        argv.all === true,
      ),
    )
    print(settings.output, {
      json: { [kind.plural]: page.items, ...(page.nextToken ? { nextToken: page.nextToken } : {}) },
      text: () => (page.items.length === 0 ? `no ${kind.plural}\n` : renderTable(page.items, kind.columns)),
    })
    if (settings.output === 'table') pageNote(page.nextToken, kind.plural)
  })

  const get = clientHandler(async (argv, settings) => {
    const resource = await withConnection(settings, { authenticated: true }, (connection) =>
      kind.rpc.get(connection, String(argv.id)),
    )
    print(settings.output, { json: resource, text: () => renderFields(kind.fields(resource)) })
  })

  const update = clientHandler(async (argv, settings) => {
    const id = String(argv.id)
    const updated = await withConnection(settings, { authenticated: true }, async (connection) => {
      const changesCredentials = CREDENTIAL_FLAGS.some((flag) => argv[flag] !== undefined)
      const current = changesCredentials || kind.needsCurrent?.(argv) ? await kind.rpc.get(connection, id) : undefined
      const values = settingValues(argv, kind.settings, 'update')
      // Lists whose presence matters travel in a wrapper message on update.
      if (values.supportedModalities) values.supportedModalities = { items: values.supportedModalities }
      const request: Request = {
        [kind.idField]: id,
        ...values,
        ...kind.extraValues?.(argv, current),
        ...labelUpdate(argv),
        credentials: credentialsFrom(argv, current?.credentials),
      }
      const changes = Object.entries(request).filter(([field, value]) => field !== kind.idField && value !== undefined)
      if (changes.length === 0)
        throw badInput(`nothing to update: give at least one setting (see memsvc ${kind.noun} update --help)`)
      return kind.rpc.update(connection, request)
    })
    print(settings.output, { json: updated, text: () => renderFields(kind.fields(updated)) })
  })

  const remove = clientHandler(async (argv, settings) => {
    const id = String(argv.id)
    await withConnection(settings, { authenticated: true }, (connection) => kind.rpc.remove(connection, id))
    print(settings.output, { json: { [kind.idField]: id, deleted: true }, text: () => `deleted ${kind.noun} ${id}\n` })
  })

  const probe = clientHandler(async (argv, settings) => {
    const id = String(argv.id)
    const requested = await withConnection(settings, { authenticated: true }, (connection) =>
      kind.rpc.probe(connection, id),
    )
    print(settings.output, {
      json: { [kind.idField]: id, jobId: requested.jobId },
      text: () =>
        `probe of ${kind.noun} ${id} queued as job ${requested.jobId}; \`memsvc ${kind.noun} get ${id}\` shows its result\n`,
    })
  })

  const withExamples = (command: Argv, examples: Array<[string, string]>) =>
    examples.reduce((built, [line, what]) => built.example(line, what), command)
  const createOptions: Record<string, Options> = {
    id: {
      type: 'string',
      describe: `Use this UUID as the ${kind.noun} id instead of a generated one`,
      requiresArg: true,
    },
    ...OWNER_OPTION,
    ...providerOption(anyKind, 'Provider (required)'),
    ...settingOptions(kind.settings, 'create'),
    ...LABEL_OPTION,
  }

  return commandGroup(yargs, kind.noun, describe, [
    {
      command: 'create',
      describe: `Register ${kind.article}; every setting is an option`,
      builder: (command) =>
        withExamples(
          withOptions(command, createOptions, kind.extraOptions?.create ?? {}, CREDENTIAL_OPTIONS),
          kind.examples.create,
        ),
      handler: create,
    },
    {
      command: 'list',
      describe: `List ${kind.plural}`,
      builder: (command) =>
        withExamples(
          withOptions(
            command,
            PAGING_OPTIONS,
            OWNER_FILTER_OPTION,
            providerOption(anyKind, 'Only this provider'),
            LABEL_FILTER_OPTION,
          ),
          kind.examples.list,
        ),
      handler: list,
    },
    {
      command: 'get <id>',
      describe: `Show one ${kind.noun} (credentials as kind and fingerprint only)`,
      builder: (command) => idPositional(command).example(`$0 ${kind.noun} get 5b0e…`, 'everything about it'),
      handler: get,
    },
    {
      command: 'update <id>',
      describe: `Change settings of ${kind.article}; options left out keep their value (the provider type cannot change)`,
      builder: (command) =>
        withExamples(
          withOptions(
            idPositional(command),
            settingOptions(kind.settings, 'update'),
            kind.extraOptions?.update ?? {},
            LABEL_UPDATE_OPTIONS,
            CREDENTIAL_OPTIONS,
          ),
          kind.examples.update,
        ),
      handler: update,
    },
    {
      command: 'delete <id>',
      describe: `Delete ${kind.article}`,
      builder: (command) => idPositional(command).example(`$0 ${kind.noun} delete 5b0e…`, 'remove it'),
      handler: remove,
    },
    {
      command: 'probe <id>',
      describe: `Check again that ${kind.article} answers (runs as a background job; \`get\` shows the last probe)`,
      builder: (command) => idPositional(command).example(`$0 ${kind.noun} probe 5b0e…`, 'probe it now'),
      handler: probe,
    },
  ])
}
