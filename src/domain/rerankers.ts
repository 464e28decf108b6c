import crypto from 'node:crypto'
import { rerankersTable, type RerankerRow } from '../db/sql/rerankers.js'
import { idSchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import {
  createRerankerSchema,
  defaultRerankerApiPath,
  listRerankersSchema,
  type Modality,
  type RerankerProviderType,
  updateRerankerSchema,
} from '../validation/registry.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { authoriseOwner, type Principal } from './permissions.js'
import type { ProbeStatus } from './probes.js'
import { credentialsView, type CredentialsView } from './registry.js'
import * as registrations from './registration-use-cases.js'

/** A reranker as every response carries it: credentials without the secret. */
export interface Reranker {
  rerankerId: string
  ownerId: string
  displayName: string
  description?: string
  providerType: RerankerProviderType
  endpointUrl: string
  apiPath: string
  modelIdentifier: string
  supportedModalities: Modality[]
  labels: Record<string, string>
  version?: string
  monitoringEndpoint?: string
  credentials: CredentialsView
  /** The last connectivity probe, once one has run. */
  lastProbe?: ProbeStatus
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
}

/** How the shared registration steps name and store rerankers. */
const RERANKER: registrations.RegistrationKind<RerankerRow, (typeof rerankersTable.mutableColumns)[number]> = { resource: 'RERANKER', noun: 'reranker', table: rerankersTable }

export function toReranker(row: RerankerRow): Reranker {
  return {
    rerankerId: row.id,
    ownerId: row.owner_id,
    displayName: row.display_name,
    description: row.description ?? undefined,
    providerType: row.provider_type as RerankerProviderType,
    endpointUrl: row.endpoint_url,
    apiPath: row.api_path,
    modelIdentifier: row.model_identifier,
    supportedModalities: row.supported_modalities as Modality[],
    labels: row.labels,
    version: row.version ?? undefined,
    monitoringEndpoint: row.monitoring_endpoint ?? undefined,
    credentials: credentialsView(row),
    lastProbe: row.probe ?? undefined,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
    updatedById: row.updated_by,
  }
}

export async function createReranker(context: DomainContext, call: CallContext, input: unknown): Promise<Reranker> {
  const principal = await context.authenticate(call)
  const request = parseInput(createRerankerSchema, input)
  const ownerId = await authoriseOwner(context.sql, principal, 'RERANKER', request.ownerId)
  const id = request.rerankerId ?? crypto.randomUUID()
  const row: RerankerRow = registrations.newRegistrationColumns(context, principal, RERANKER, id, ownerId, request, defaultRerankerApiPath(request.providerType))
  await registrations.insertRegistration(context, RERANKER, row)
  return toReranker(row)
}

export async function listRerankers(context: DomainContext, call: CallContext, input: unknown): Promise<{ rerankers: Reranker[]; nextToken?: string }> {
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
export async function updateReranker(context: DomainContext, call: CallContext, rerankerId: unknown, input: unknown): Promise<Reranker> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, rerankerId, 'rerankerId')
  const request = parseInput(updateRerankerSchema, input)
  const row = await registrations.updateRegistration(context, principal, RERANKER, id, request, (current) => registrations.nextSharedColumns(current, request))
  return toReranker(row)
}

export async function deleteReranker(context: DomainContext, call: CallContext, rerankerId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, rerankerId, 'rerankerId')
  await registrations.deleteRegistration(context, principal, RERANKER, id)
}

/** A reranker the caller may use (their own, or any with GET_RERANKER_ANY); NOT_FOUND otherwise. */
export function findUsableReranker(context: DomainContext, principal: Principal, rerankerId: string): Promise<RerankerRow> {
  return registrations.findVisibleRegistration(context.sql, principal, RERANKER, 'GET', rerankerId)
}
