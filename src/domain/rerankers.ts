import crypto from 'node:crypto'
import { type RerankerRow, rerankersTable } from '../db/sql/rerankers.js'
import { idSchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import {
  createRerankerSchema,
  defaultRerankerApiPath,
  listRerankersSchema,
  type RerankerProviderType,
  updateRerankerSchema,
} from '../validation/registry.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { authoriseOwner, type Principal } from './permissions.js'
import * as registrations from './registration-use-cases.js'
import { type RegistrationView, registrationView } from './registry.js'

/** A reranker as every response carries it: the fields every registration has, credentials without the secret. */
export type Reranker = { rerankerId: string } & RegistrationView<RerankerProviderType>

/** How the shared registration steps name and store rerankers. */
const RERANKER: registrations.RegistrationKind<RerankerRow, (typeof rerankersTable.mutableColumns)[number]> = {
  resource: 'RERANKER',
  noun: 'reranker',
  table: rerankersTable,
}

export function toReranker(row: RerankerRow): Reranker {
  return { rerankerId: row.id, ...registrationView<RerankerProviderType>(row) }
}

export async function createReranker(context: DomainContext, call: CallContext, input: unknown): Promise<Reranker> {
  const principal = await context.authenticate(call)
  const request = parseInput(createRerankerSchema, input)
  const ownerId = await authoriseOwner(context.sql, principal, 'RERANKER', request.ownerId)
  const id = request.rerankerId ?? crypto.randomUUID()
  const row: RerankerRow = registrations.newRegistrationColumns(
    context,
    principal,
    RERANKER,
    id,
    ownerId,
    request,
    defaultRerankerApiPath(request.providerType),
  )
  await registrations.insertRegistration(context, RERANKER, row)
  return toReranker(row)
}

export async function listRerankers(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ rerankers: Reranker[]; nextToken?: string }> {
  const principal = await context.authenticate(call)
  const request = parseInput(listRerankersSchema, input)
  const page = await registrations.listRegistrations(context, principal, RERANKER, request, toReranker)
  return { rerankers: page.items, nextToken: page.nextToken }
}

export async function getReranker(context: DomainContext, call: CallContext, rerankerId: unknown): Promise<Reranker> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, rerankerId, 'rerankerId')
  return toReranker(await registrations.findVisibleRegistration(context.sql, principal, RERANKER, 'GET', id))
}

/** A field given replaces the stored value; labels replace or merge; providerType cannot change. */
export async function updateReranker(
  context: DomainContext,
  call: CallContext,
  rerankerId: unknown,
  input: unknown,
): Promise<Reranker> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, rerankerId, 'rerankerId')
  const request = parseInput(updateRerankerSchema, input)
  const row = await registrations.updateRegistration(context, principal, RERANKER, id, request, (current) =>
    registrations.nextSharedColumns(current, request),
  )
  return toReranker(row)
}

export async function deleteReranker(context: DomainContext, call: CallContext, rerankerId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, rerankerId, 'rerankerId')
  await registrations.deleteRegistration(context, principal, RERANKER, id)
}

/** A reranker the caller may use (their own, or any with GET_RERANKER_ANY); NOT_FOUND otherwise. */
export function findUsableReranker(
  context: DomainContext,
  principal: Principal,
  rerankerId: string,
): Promise<RerankerRow> {
  return registrations.findVisibleRegistration(context.sql, principal, RERANKER, 'GET', rerankerId)
}

/** The use cases the transports call, under the names every kind shares. */
export const rerankerUseCases: registrations.RegistryUseCases<Reranker, 'rerankers'> = {
  resource: 'RERANKER',
  collection: 'rerankers',
  idOf: (item) => item.rerankerId,
  create: createReranker,
  list: listRerankers,
  get: getReranker,
  update: updateReranker,
  delete: deleteReranker,
}
