import crypto from 'node:crypto'
import { type EmbedderRow, embeddersTable } from '../db/sql/embedders.js'
import { dropEmbedderIndex } from '../db/vector-index-upkeep.js'
import { idSchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import {
  createEmbedderSchema,
  type DistributionType,
  defaultEmbedderApiPath,
  type EmbedderProviderType,
  listEmbeddersSchema,
  updateEmbedderSchema,
} from '../validation/registry.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { authoriseOwner } from './permissions.js'
import * as registrations from './registration-use-cases.js'
import { type RegistrationView, registrationView } from './registry.js'

/** An embedder as every response carries it: credentials without the secret. */
export type Embedder = { embedderId: string } & RegistrationView<EmbedderProviderType> & {
    dimensionality: number
    distributionType: DistributionType
    maxSequenceLength?: number
  }

/** How the shared registration steps name and store embedders. */
const EMBEDDER: registrations.RegistrationKind<EmbedderRow, (typeof embeddersTable.mutableColumns)[number]> = {
  resource: 'EMBEDDER',
  noun: 'embedder',
  table: embeddersTable,
}

export function toEmbedder(row: EmbedderRow): Embedder {
  return {
    embedderId: row.id,
    ...registrationView<EmbedderProviderType>(row),
    dimensionality: row.dimensionality,
    distributionType: row.distribution_type as DistributionType,
    maxSequenceLength: row.max_sequence_length ?? undefined,
  }
}

export async function createEmbedder(context: DomainContext, call: CallContext, input: unknown): Promise<Embedder> {
  const principal = await context.authenticate(call)
  const request = parseInput(createEmbedderSchema, input)
  const ownerId = await authoriseOwner(context.sql, principal, 'EMBEDDER', request.ownerId)
  const id = request.embedderId ?? crypto.randomUUID()
  const row: EmbedderRow = {
    ...registrations.newRegistrationColumns(
      context,
      principal,
      EMBEDDER,
      id,
      ownerId,
      request,
      defaultEmbedderApiPath(request.providerType),
    ),
    dimensionality: request.dimensionality,
    distribution_type: request.distributionType,
    max_sequence_length: request.maxSequenceLength ?? null,
  }
  await registrations.insertRegistration(context, EMBEDDER, row)
  return toEmbedder(row)
}

export async function listEmbedders(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ embedders: Embedder[]; nextToken?: string }> {
  const principal = await context.authenticate(call)
  const request = parseInput(listEmbeddersSchema, input)
  const page = await registrations.listRegistrations(context, principal, EMBEDDER, request, toEmbedder)
  return { embedders: page.items, nextToken: page.nextToken }
}

export async function getEmbedder(context: DomainContext, call: CallContext, embedderId: unknown): Promise<Embedder> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, embedderId, 'embedderId')
  return toEmbedder(await registrations.findVisibleRegistration(context.sql, principal, EMBEDDER, 'GET', id))
}

/** A field given replaces the stored value; labels replace or merge; providerType cannot change. */
export async function updateEmbedder(
  context: DomainContext,
  call: CallContext,
  embedderId: unknown,
  input: unknown,
): Promise<Embedder> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, embedderId, 'embedderId')
  const request = parseInput(updateEmbedderSchema, input)
  // The spaces using it plan retrieval from its registration (endpoint, credentials, dimensionality).
  const row = await context.spaceRows.afterEmbedderWrite(id, () =>
    registrations.updateRegistration(context, principal, EMBEDDER, id, request, (current) => ({
      ...registrations.nextSharedColumns(current, request),
      dimensionality: request.dimensionality ?? current.dimensionality,
      distribution_type: request.distributionType ?? current.distribution_type,
      max_sequence_length: request.maxSequenceLength ?? current.max_sequence_length,
    })),
  )
  return toEmbedder(row)
}

export async function deleteEmbedder(context: DomainContext, call: CallContext, embedderId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, embedderId, 'embedderId')
  await context.spaceRows.afterEmbedderWrite(id, () =>
    registrations.deleteRegistration(context, principal, EMBEDDER, id),
  )
  // Its vectors went with it (foreign keys); its index, on the table every embedder shares, is dropped apart.
  await dropEmbedderIndex(context.sql, id, context.log)
}

/** The use cases the transports call, under the names every kind shares. */
export const embedderUseCases: registrations.RegistryUseCases<Embedder, 'embedders'> = {
  resource: 'EMBEDDER',
  collection: 'embedders',
  idOf: (item) => item.embedderId,
  create: createEmbedder,
  list: listEmbedders,
  get: getEmbedder,
  update: updateEmbedder,
  delete: deleteEmbedder,
}
