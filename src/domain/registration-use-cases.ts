import crypto from 'node:crypto'
import type * as v from 'valibot'
import type { Queryable } from '../db/database.js'
import type { RegistrationChange, RegistrationRow, RegistrationTable } from '../db/sql/registration-table.js'
import { invalidArgument } from '../errors/app-error.js'
import { idSchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import type { CredentialsInput, Modality } from '../validation/registry.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { MODEL_PROBE_JOB } from './job-kinds.js'
import { decodePageToken, nowMillis, pageOf, pageSizeOrDefault } from './paging.js'
import { authoriseOwner, type Principal, requireOwnership } from './permissions.js'
import { enqueueProbe, probeInputsChanged } from './probes.js'
import {
  nextLabels,
  type RegistryResource,
  registrationConflict,
  requireVisible,
  sameColumns,
  secretContext,
  storeCredentials,
} from './registry.js'

/**
 * The steps of create, list, get, update and delete that embedders, LLMs and rerankers
 * share, so that every kind keeps the same visibility, conflict, audit and probe rules.
 * Each kind's module (embedders.ts, llms.ts, rerankers.ts) declares a RegistrationApi: its
 * schemas, its own columns and its responses; registryUseCases builds the five use cases from
 * it with these steps. The rules these steps apply (visibility, conflicts, sealing
 * credentials, labels) are in registry.ts.
 */

/** One page of a list response: the items under the collection's name ("embedders": […]). */
export type RegistryPage<Collection extends string, Item> = { [Name in Collection]: Item[] } & { nextToken?: string }

/**
 * One kind's use cases as the transports call them: the same five for every kind, so
 * that the REST routes and gRPC services of embedders, LLMs and rerankers are built by
 * one helper each instead of one copy per kind.
 */
export interface RegistryUseCases<Item, Collection extends string> {
  resource: RegistryResource
  /** The collection as paths and list responses name it: "embedders". */
  collection: Collection
  idOf(item: Item): string
  create(context: DomainContext, call: CallContext, input: unknown): Promise<Item>
  list(context: DomainContext, call: CallContext, input: unknown): Promise<RegistryPage<Collection, Item>>
  get(context: DomainContext, call: CallContext, id: unknown): Promise<Item>
  update(context: DomainContext, call: CallContext, id: unknown, input: unknown): Promise<Item>
  delete(context: DomainContext, call: CallContext, id: unknown): Promise<void>
}

/** What the shared steps need to know about one kind of registration. */
export interface RegistrationKind<Row extends RegistrationRow, MutableColumn extends keyof Row & string> {
  resource: RegistryResource
  /** As messages name it: "embedder", "LLM". */
  noun: string
  table: RegistrationTable<Row, MutableColumn>
}

const DEFAULT_MODALITIES: Modality[] = ['TEXT']

/** The fields of a create request that both kinds have. */
export interface SharedCreateFields {
  displayName: string
  description?: string
  providerType: string
  endpointUrl: string
  apiPath?: string
  modelIdentifier: string
  supportedModalities?: Modality[]
  labels?: Record<string, string>
  version?: string
  monitoringEndpoint?: string
  credentials?: CredentialsInput
}

/** The columns both kinds have, for a new registration: `id` is the row's, `ownerId` already authorised. */
export function newRegistrationColumns(
  context: DomainContext,
  principal: Principal,
  kind: { table: { name: string } },
  id: string,
  ownerId: string,
  request: SharedCreateFields,
  defaultApiPath: string,
): RegistrationRow {
  const now = nowMillis()
  return {
    id,
    owner_id: ownerId,
    display_name: request.displayName,
    description: request.description ?? null,
    provider_type: request.providerType,
    endpoint_url: request.endpointUrl,
    api_path: request.apiPath ?? defaultApiPath,
    model_identifier: request.modelIdentifier,
    supported_modalities: request.supportedModalities ?? DEFAULT_MODALITIES,
    labels: request.labels ?? {},
    version: request.version ?? null,
    monitoring_endpoint: request.monitoringEndpoint ?? null,
    ...storeCredentials(context.secrets, request.credentials, secretContext(kind.table.name, id)),
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
    updated_by: principal.userId,
  }
}

/**
 * Stores a new registration (a duplicate is ALREADY_EXISTS) and its first probe in one
 * transaction: a process killed in between leaves neither, never a registration that is
 * never probed.
 */
export async function insertRegistration<Row extends RegistrationRow, MutableColumn extends keyof Row & string>(
  context: DomainContext,
  kind: RegistrationKind<Row, MutableColumn>,
  row: Row,
): Promise<void> {
  try {
    await context.sql.begin(async (tx) => {
      await kind.table.insert(tx, row)
      await context.jobs.enqueue(tx, MODEL_PROBE_JOB, { resource: kind.resource, id: row.id })
    })
    context.jobs.wake()
  } catch (error) {
    throw registrationConflict(error, kind.noun, row.id, row.owner_id)
  }
}

export interface ListRequest {
  ownerId?: string
  providerType?: string
  labelFilter?: Record<string, string>
  maxResults?: number
  nextToken?: string
}

/** One page of an owner's registrations; listing another owner's needs LIST_…_ANY. */
export async function listRegistrations<Row extends RegistrationRow, MutableColumn extends keyof Row & string, Item>(
  context: DomainContext,
  principal: Principal,
  kind: RegistrationKind<Row, MutableColumn>,
  request: ListRequest,
  toItem: (row: Row) => Item,
): Promise<{ items: Item[]; nextToken?: string }> {
  const ownerId = request.ownerId ?? principal.userId
  requireOwnership(principal, kind.resource, 'LIST', ownerId)
  const pageSize = pageSizeOrDefault(request.maxResults)
  const rows = await kind.table.list(context.sql, {
    ownerId,
    providerType: request.providerType,
    labels: request.labelFilter,
    after: decodePageToken(request.nextToken),
    limit: pageSize + 1,
  })
  return pageOf(rows, pageSize, toItem)
}

/** The row, if the principal may act on it; NOT_FOUND otherwise (see requireVisible). */
export async function findVisibleRegistration<Row extends RegistrationRow, MutableColumn extends keyof Row & string>(
  sql: Queryable,
  principal: Principal,
  kind: RegistrationKind<Row, MutableColumn>,
  action: 'GET' | 'UPDATE' | 'DELETE',
  id: string,
): Promise<Row> {
  // Rows read to be changed are locked, so that concurrent updates apply one after the other.
  const row = await kind.table.find(sql, id, { forUpdate: action !== 'GET' })
  return requireVisible(principal, kind.resource, action, row, `${kind.noun} ${id}`)
}

/** The fields of an update request that both kinds have. */
export interface SharedUpdateFields {
  displayName?: string
  description?: string
  providerType?: string
  endpointUrl?: string
  apiPath?: string
  modelIdentifier?: string
  supportedModalities?: Modality[]
  replaceLabels?: Record<string, string>
  mergeLabels?: Record<string, string>
  version?: string
  monitoringEndpoint?: string
  credentials?: CredentialsInput
}

/**
 * The columns both kinds have, after an update: a field given replaces the stored value,
 * "" clears an optional text field, labels replace or merge. Credentials are applied by
 * updateRegistration, which knows the row they are sealed for.
 */
export function nextSharedColumns<Row extends RegistrationRow>(current: Row, request: SharedUpdateFields): Row {
  return {
    ...current,
    display_name: request.displayName ?? current.display_name,
    description: request.description === undefined ? current.description : request.description || null,
    endpoint_url: request.endpointUrl ?? current.endpoint_url,
    api_path: request.apiPath ?? current.api_path,
    model_identifier: request.modelIdentifier ?? current.model_identifier,
    supported_modalities: request.supportedModalities ?? current.supported_modalities,
    labels: nextLabels(current.labels, request),
    version: request.version === undefined ? current.version : request.version || null,
    monitoring_endpoint:
      request.monitoringEndpoint === undefined ? current.monitoring_endpoint : request.monitoringEndpoint || null,
  }
}

/**
 * Updates one registration in a transaction: the row is locked, `nextRow` computes the
 * kind's new row from it, and `request.credentials` (when given) are sealed for it on top.
 * providerType cannot change. An update that changes nothing leaves the audit fields as
 * they were; one that changes what a probe depends on queues a new probe.
 */
export async function updateRegistration<Row extends RegistrationRow, MutableColumn extends keyof Row & string>(
  context: DomainContext,
  principal: Principal,
  kind: RegistrationKind<Row, MutableColumn>,
  id: string,
  request: { providerType?: string; credentials?: CredentialsInput },
  nextRow: (current: Row) => Row | Promise<Row>,
): Promise<Row> {
  let ownerId = principal.userId
  let probeNeeded = false
  try {
    const row = await context.sql.begin(async (tx) => {
      const current = await findVisibleRegistration(tx, principal, kind, 'UPDATE', id)
      ownerId = current.owner_id
      if (request.providerType !== undefined && request.providerType !== current.provider_type) {
        throw invalidArgument(
          'providerType',
          `cannot be changed (it is ${current.provider_type}); register a new ${kind.noun} instead`,
        )
      }
      const next: Row = {
        ...(await nextRow(current)),
        ...(request.credentials
          ? storeCredentials(context.secrets, request.credentials, secretContext(kind.table.name, id), current)
          : {}),
      }
      // The sealed secret is left out of the comparison: its fingerprint stands for it.
      const compared = kind.table.mutableColumns.filter((column) => column !== 'credential_secret')
      if (sameColumns(current as never, next as never, compared)) return current
      probeNeeded = probeInputsChanged(current as never, next as never)
      const change = Object.fromEntries(
        kind.table.mutableColumns.map((column) => [column, next[column]]),
      ) as RegistrationChange<Row, MutableColumn>
      return kind.table.update(tx, id, {
        ...change,
        updated_at: nowMillis(),
        updated_by: principal.userId,
      } as RegistrationChange<Row, MutableColumn>)
    })
    if (probeNeeded) await enqueueProbe(context, kind.resource, id)
    return row as Row
  } catch (error) {
    throw registrationConflict(error, kind.noun, id, ownerId)
  }
}

export async function deleteRegistration<Row extends RegistrationRow, MutableColumn extends keyof Row & string>(
  context: DomainContext,
  principal: Principal,
  kind: RegistrationKind<Row, MutableColumn>,
  id: string,
): Promise<void> {
  await context.sql.begin(async (tx) => {
    await findVisibleRegistration(tx, principal, kind, 'DELETE', id)
    await kind.table.delete(tx, id)
  })
}

/**
 * What one kind adds to the shared steps besides how it is named and stored (its
 * RegistrationKind): how its requests are parsed, how its own columns (besides those every
 * registration has) are built and changed, and how a row is answered.
 */
export interface RegistrationApi<
  Row extends RegistrationRow,
  IdField extends string,
  Item extends { [Field in IdField]: string },
  Collection extends string,
  CreateRequest extends SharedCreateFields & { ownerId?: string } & { [Field in IdField]?: string },
  UpdateRequest extends SharedUpdateFields,
> {
  /** The collection as paths and list responses name it: "embedders". */
  collection: Collection
  /** The id as items, requests and messages name it: "embedderId" (a create request may choose it). */
  idField: IdField
  createSchema: v.GenericSchema<unknown, CreateRequest>
  listSchema: v.GenericSchema<unknown, ListRequest>
  updateSchema: v.GenericSchema<unknown, UpdateRequest>
  defaultApiPath(request: CreateRequest): string
  /** The kind's own columns of a new row. */
  newKindColumns(request: CreateRequest): Omit<Row, keyof RegistrationRow>
  /** The kind's own columns after an update (a field given replaces the stored value). */
  nextKindColumns(current: Row, request: UpdateRequest): Omit<Row, keyof RegistrationRow>
  /** Fills in and checks what only the running server knows (a local model's dimensionality), before a create. */
  prepareCreate?(context: DomainContext, request: CreateRequest): Promise<CreateRequest>
  /** Checks (and may adjust) an updated row against what only the running server knows, inside the update. */
  reviseUpdatedRow?(context: DomainContext, current: Row, next: Row, request: UpdateRequest): Promise<Row>
  toItem(row: Row): Item
  /** Runs each update and delete of one registration, for kinds that must hear of them. */
  aroundWrite?<T>(context: DomainContext, id: string, write: () => Promise<T>): Promise<T>
  /** What a delete leaves to do once the row is gone. */
  afterDelete?(context: DomainContext, id: string): Promise<void>
}

/** Create, list, get, update and delete of one kind: the same steps and rules for every kind. */
export function registryUseCases<
  Row extends RegistrationRow,
  MutableColumn extends keyof Row & string,
  IdField extends string,
  Item extends { [Field in IdField]: string },
  Collection extends string,
  CreateRequest extends SharedCreateFields & { ownerId?: string } & { [Field in IdField]?: string },
  UpdateRequest extends SharedUpdateFields,
>(
  kind: RegistrationKind<Row, MutableColumn>,
  api: RegistrationApi<Row, IdField, Item, Collection, CreateRequest, UpdateRequest>,
): RegistryUseCases<Item, Collection> {
  const guardedWrite = <T>(context: DomainContext, id: string, write: () => Promise<T>): Promise<T> =>
    api.aroundWrite ? api.aroundWrite(context, id, write) : write()
  return {
    resource: kind.resource,
    collection: api.collection,
    idOf: (item) => item[api.idField],

    async create(context, call, input) {
      const principal = await context.authenticate(call)
      const parsed = parseInput(api.createSchema, input)
      const ownerId = await authoriseOwner(context.sql, principal, kind.resource, parsed.ownerId)
      const request = api.prepareCreate ? await api.prepareCreate(context, parsed) : parsed
      const id = request[api.idField] ?? crypto.randomUUID()
      const row = {
        ...newRegistrationColumns(context, principal, kind, id, ownerId, request, api.defaultApiPath(request)),
        ...api.newKindColumns(request),
      } as Row
      await insertRegistration(context, kind, row)
      return api.toItem(row)
    },

    async list(context, call, input) {
      const principal = await context.authenticate(call)
      const request = parseInput(api.listSchema, input)
      const page = await listRegistrations(context, principal, kind, request, api.toItem)
      return { [api.collection]: page.items, nextToken: page.nextToken } as RegistryPage<Collection, Item>
    },

    async get(context, call, rawId) {
      const principal = await context.authenticate(call)
      const id = parseInput(idSchema, rawId, api.idField)
      return api.toItem(await findVisibleRegistration(context.sql, principal, kind, 'GET', id))
    },

    /** A field given replaces the stored value; labels replace or merge; providerType cannot change. */
    async update(context, call, rawId, input) {
      const principal = await context.authenticate(call)
      const id = parseInput(idSchema, rawId, api.idField)
      const request = parseInput(api.updateSchema, input)
      const row = await guardedWrite(context, id, () =>
        updateRegistration(context, principal, kind, id, request, (current) => {
          const next = { ...nextSharedColumns(current, request), ...api.nextKindColumns(current, request) }
          return api.reviseUpdatedRow ? api.reviseUpdatedRow(context, current, next, request) : next
        }),
      )
      return api.toItem(row)
    },

    async delete(context, call, rawId) {
      const principal = await context.authenticate(call)
      const id = parseInput(idSchema, rawId, api.idField)
      await guardedWrite(context, id, () => deleteRegistration(context, principal, kind, id))
      await api.afterDelete?.(context, id)
    },
  }
}
