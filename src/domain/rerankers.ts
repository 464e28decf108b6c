import { type RerankerRow, rerankersTable } from '../db/sql/rerankers.js'
import {
  createRerankerSchema,
  defaultRerankerApiPath,
  listRerankersSchema,
  type RerankerProviderType,
  updateRerankerSchema,
} from '../validation/registry.js'
import type { DomainContext } from './context.js'
import type { Principal } from './permissions.js'
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

/** The use cases the transports call, under the names every kind shares. */
export const rerankerUseCases = registrations.registryUseCases(RERANKER, {
  collection: 'rerankers',
  idField: 'rerankerId',
  createSchema: createRerankerSchema,
  listSchema: listRerankersSchema,
  updateSchema: updateRerankerSchema,
  defaultApiPath: (request) => defaultRerankerApiPath(request.providerType),
  // A reranker has no columns of its own.
  newKindColumns: () => ({}),
  nextKindColumns: () => ({}),
  toItem: toReranker,
})

export const {
  create: createReranker,
  list: listRerankers,
  get: getReranker,
  /** A field given replaces the stored value; labels replace or merge; providerType cannot change. */
  update: updateReranker,
  delete: deleteReranker,
} = rerankerUseCases

/** A reranker the caller may use (their own, or any with GET_RERANKER_ANY); NOT_FOUND otherwise. */
export function findUsableReranker(
  context: DomainContext,
  principal: Principal,
  rerankerId: string,
): Promise<RerankerRow> {
  return registrations.findVisibleRegistration(context.sql, principal, RERANKER, 'GET', rerankerId)
}
