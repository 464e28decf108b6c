// The commands of a registry resource (create|list|get|update|delete|probe), shared by
// `memsvc embedder`, `memsvc llm` and `memsvc reranker`. Each kind supplies its settings tables, the
// columns and lines only it shows, its gRPC service and the default messages its requests start from.
import type { Argv, Options } from 'yargs'
import type { MemsvcClient } from '../../../sdk/src/index.js'
import type { Credentials, ProbeStatus } from '../../generated/memsvc/v1/registry.js'
import { type Args, clientHandler, commandGroup, fetchPages, idPositional, type Page, withOptions } from '../command.js'
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
import { runAuthenticated, withConnection } from '../connection.js'
import { badInput } from '../exit-codes.js'
import { parseChoice, parseLabels } from '../option-parsing.js'
import { formatLabels, formatTime, print, printPage } from '../output.js'
import {
  CREDENTIAL_OPTIONS,
  credentialsFrom,
  describeCredentials,
  describeProbe,
  type Setting,
  settingOptions,
  settingValues,
} from '../registry-options.js'
import { type Column, ID_WIDTH, renderFields, renderTable } from '../table.js'

/** What every registration has, whatever its kind (see COMMON_SETTINGS). */
export interface RegistryResource {
  ownerId: string
  displayName: string
  description?: string | undefined
  providerType: string
  endpointUrl: string
  apiPath: string
  modelIdentifier: string
  labels: Record<string, string>
  version?: string | undefined
  monitoringEndpoint?: string | undefined
  credentials?: Credentials | undefined
  lastProbe?: ProbeStatus | undefined
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
}

type Request = Record<string, unknown>

/**
 * A registry service as the SDK binds it (api.embedders, api.llms, api.rerankers): the same six
 * calls, with the kind's id field in the requests and its plural naming the list response's items.
 */
export interface RegistryService<Resource> {
  create(request: Request): Promise<Resource>
  list(request: Request): Promise<{ nextToken?: string | undefined }>
  get(request: Request): Promise<Resource>
  update(request: Request): Promise<Resource>
  delete(request: Request): Promise<unknown>
  /** Queues the connectivity probe again; answers the job's id. */
  probe(request: Request): Promise<{ jobId: string }>
}

export interface RegistryKind<Resource extends RegistryResource> {
  /** Command name and words for messages: embedder / embedders / "an embedder". */
  noun: string
  /** Also the field of the list response (and of the list JSON) that holds the items. */
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
  /** The kind's own table columns, shown between MODEL and ENDPOINT. */
  extraColumns: Column<Resource>[]
  /** The kind's own lines in `get`, shown between the model and the labels. */
  extraFields: (resource: Resource) => Array<[string, string | undefined]>
  examples: Record<'create' | 'list' | 'update', Array<[string, string]>>
  service: (api: MemsvcClient) => RegistryService<Resource>
  /**
   * Full default messages the requests start from (see `complete`); typed by each kind as its
   * generated request, so that the compiler checks them.
   */
  requestDefaults: { create: object; list: object; update: object }
}

const CREDENTIAL_FLAGS = Object.keys(CREDENTIAL_OPTIONS)

/**
 * The defaults, overlaid with the request's defined fields. The generated encoders
 * need every repeated/map field and every non-optional enum present (an undefined
 * enum would be sent as -1), so each kind's calls start from a full default message.
 */
function complete(defaults: object, request: Request): Request {
  const result: Request = { ...defaults }
  for (const [field, value] of Object.entries(request)) if (value !== undefined) result[field] = value
  return result
}

/** The resource's id under the kind's name for it: embedderId, llmId, rerankerId. */
function idOf(resource: RegistryResource, idField: string): string {
  return (resource as unknown as Record<string, string>)[idField]!
}

/** The table of a list: the columns every registration has, with the kind's own in the middle. */
function columns<Resource extends RegistryResource>(kind: RegistryKind<Resource>): Column<Resource>[] {
  return [
    { header: 'ID', value: (resource) => idOf(resource, kind.idField), minWidth: ID_WIDTH },
    { header: 'NAME', value: (resource) => resource.displayName },
    { header: 'PROVIDER', value: (resource) => resource.providerType, minWidth: 8 },
    { header: 'MODEL', value: (resource) => resource.modelIdentifier },
    ...kind.extraColumns,
    { header: 'ENDPOINT', value: (resource) => `${resource.endpointUrl}${resource.apiPath}`, dropOrder: 1 },
    { header: 'LABELS', value: (resource) => formatLabels(resource.labels), dropOrder: 2 },
  ]
}

/** Everything about one registration: the common settings, the kind's own, then ownership and history. */
function fields<Resource extends RegistryResource>(
  kind: RegistryKind<Resource>,
  resource: Resource,
): Array<[string, string | undefined]> {
  return [
    ['id', idOf(resource, kind.idField)],
    ['display name', resource.displayName],
    ['description', resource.description],
    ['provider', resource.providerType],
    ['endpoint', resource.endpointUrl],
    ['api path', resource.apiPath],
    ['model', resource.modelIdentifier],
    ...kind.extraFields(resource),
    ['labels', formatLabels(resource.labels)],
    ['version', resource.version],
    ['monitoring', resource.monitoringEndpoint],
    ['credentials', describeCredentials(resource.credentials)],
    ['last probe', describeProbe(resource.lastProbe)],
    ['owner', resource.ownerId],
    ['created', `${formatTime(resource.createdAt)} by ${resource.createdById}`],
    ['updated', `${formatTime(resource.updatedAt)} by ${resource.updatedById}`],
  ]
}

/** The kind's calls, each starting its request from the kind's full default message. */
function calls<Resource extends RegistryResource>(kind: RegistryKind<Resource>) {
  const { service, requestDefaults: defaults, idField } = kind
  return {
    create: (api: MemsvcClient, request: Request) => service(api).create(complete(defaults.create, request)),
    async list(api: MemsvcClient, request: Request): Promise<Page<Resource>> {
      const response = await service(api).list(complete(defaults.list, request))
      const items = (response as Record<string, unknown>)[kind.plural] as Resource[]
      return { items, nextToken: response.nextToken }
    },
    get: (api: MemsvcClient, id: string) => service(api).get({ [idField]: id }),
    update: (api: MemsvcClient, request: Request) => service(api).update(complete(defaults.update, request)),
    remove: (api: MemsvcClient, id: string) => service(api).delete({ [idField]: id }),
    probe: (api: MemsvcClient, id: string) => service(api).probe({ [idField]: id }),
  }
}

/** --provider-type as one of the kind's enum names; undefined when not given. */
function providerTypeFrom(argv: Args, providerTypes: readonly string[]): string | undefined {
  return argv['provider-type'] === undefined
    ? undefined
    : parseChoice(argv['provider-type'], 'provider-type', providerTypes)
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

  const call = calls(kind)
  const showFields = (resource: Resource) => renderFields(fields(kind, resource))

  const create = clientHandler(async (argv, settings) => {
    const request: Request = {
      [kind.idField]: argv.id as string | undefined,
      ownerId: argv['owner-id'] as string | undefined,
      providerType: providerTypeFrom(argv, kind.providerTypes),
      labels: parseLabels(argv.label, 'label') ?? {},
      ...settingValues(argv, kind.settings, 'create'),
      ...kind.extraValues?.(argv, undefined),
      credentials: credentialsFrom(argv),
    }
    if (request.providerType === undefined)
      throw badInput(`--provider-type is required: one of ${kind.providerTypes.join(', ')}`)
    const created = await runAuthenticated(settings, (api) => call.create(api, request))
    print(settings.output, { json: created, text: () => showFields(created) })
  })

  const list = clientHandler(async (argv, settings) => {
    const { maxResults, nextToken } = pagingRequest(argv)
    const filters: Request = {
      ownerId: argv['owner-id'] as string | undefined,
      providerType: providerTypeFrom(argv, kind.providerTypes),
      labelFilter: parseLabels(argv.label, 'label') ?? {},
      maxResults,
    }
    const page = await fetchPages(settings, nextToken, argv.all === true, (api, token) =>
      call.list(api, { ...filters, nextToken: token }),
    )
    printPage(settings.output, page, {
      field: kind.plural,
      what: kind.plural,
      text: (items) => (items.length === 0 ? `no ${kind.plural}\n` : renderTable(items, columns(kind))),
    })
  })

  const get = clientHandler(async (argv, settings) => {
    const resource = await runAuthenticated(settings, (api) => call.get(api, String(argv.id)))
    print(settings.output, { json: resource, text: () => showFields(resource) })
  })

  const update = clientHandler(async (argv, settings) => {
    const id = String(argv.id)
    const updated = await withConnection(settings, { authenticated: true }, async (connection) => {
      const changesCredentials = CREDENTIAL_FLAGS.some((flag) => argv[flag] !== undefined)
      const current =
        changesCredentials || kind.needsCurrent?.(argv) ? await connection.run((api) => call.get(api, id)) : undefined
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
      return connection.run((api) => call.update(api, request))
    })
    print(settings.output, { json: updated, text: () => showFields(updated) })
  })

  const remove = clientHandler(async (argv, settings) => {
    const id = String(argv.id)
    await runAuthenticated(settings, (api) => call.remove(api, id))
    print(settings.output, { json: { [kind.idField]: id, deleted: true }, text: () => `deleted ${kind.noun} ${id}\n` })
  })

  const probe = clientHandler(async (argv, settings) => {
    const id = String(argv.id)
    const requested = await runAuthenticated(settings, (api) => call.probe(api, id))
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
      builder: (command) =>
        idPositional(command, kind.noun).example(`$0 ${kind.noun} get 5b0e…`, 'everything about it'),
      handler: get,
    },
    {
      command: 'update <id>',
      describe: `Change settings of ${kind.article}; options left out keep their value (the provider type cannot change)`,
      builder: (command) =>
        withExamples(
          withOptions(
            idPositional(command, kind.noun),
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
      builder: (command) => idPositional(command, kind.noun).example(`$0 ${kind.noun} delete 5b0e…`, 'remove it'),
      handler: remove,
    },
    {
      command: 'probe <id>',
      describe: `Check again that ${kind.article} answers (runs as a background job; \`get\` shows the last probe)`,
      builder: (command) => idPositional(command, kind.noun).example(`$0 ${kind.noun} probe 5b0e…`, 'probe it now'),
      handler: probe,
    },
  ])
}
