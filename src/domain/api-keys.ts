import crypto from 'node:crypto'
import { conflictOf } from '../db/conflicts.js'
import type { Queryable } from '../db/database.js'
import type { ApiKeyRow } from '../db/sql/api-keys.js'
import * as apiKeysSql from '../db/sql/api-keys.js'
import { alreadyExists, invalidArgument, notFound, permissionDenied } from '../errors/app-error.js'
import { createApiKeySchema, idSchema, listApiKeysSchema, updateApiKeySchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-format.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { decodePageToken, encodePageToken, nowMillis, pageSizeOrDefault } from './paging.js'
import { authoriseOwner, hasPermission, type Principal, requireOwnership } from './permissions.js'

/** Key metadata as every response carries it: never the raw key, never the hash. */
export interface ApiKey {
  apiKeyId: string
  userId: string
  keyPrefix: string
  status: 'ACTIVE' | 'INACTIVE'
  labels: Record<string, string>
  expiresAt?: number
  lastUsedAt?: number
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    apiKeyId: row.id,
    userId: row.user_id,
    keyPrefix: row.key_prefix,
    status: row.status,
    labels: row.labels,
    expiresAt: row.expires_at?.getTime(),
    lastUsedAt: row.last_used_at?.getTime(),
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
    updatedById: row.updated_by,
  }
}

/** Creates a key for `ownerId` (already authorised) and returns its row and the one-time raw key. */
export async function issueApiKey(
  sql: Queryable,
  options: { ownerId: string; creatorId: string; labels?: Record<string, string>; expiresAt?: Date; apiKeyId?: string },
): Promise<{ row: ApiKeyRow; rawApiKey: string }> {
  const rawApiKey = generateApiKey()
  const now = nowMillis()
  const row: ApiKeyRow = {
    id: options.apiKeyId ?? crypto.randomUUID(),
    user_id: options.ownerId,
    key_prefix: displayPrefix(rawApiKey),
    status: 'ACTIVE',
    labels: options.labels ?? {},
    expires_at: options.expiresAt ?? null,
    last_used_at: null,
    created_at: now,
    updated_at: now,
    created_by: options.creatorId,
    updated_by: options.creatorId,
  }
  try {
    await apiKeysSql.insertApiKey(sql, row, hashApiKey(rawApiKey))
  } catch (error) {
    if (conflictOf(error) === 'duplicate-api-key-id') throw alreadyExists(`an API key with id ${row.id} already exists`)
    throw error
  }
  return { row, rawApiKey }
}

export async function createApiKey(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ apiKeyMetadata: ApiKey; rawApiKey: string }> {
  const principal = await context.authenticate(call)
  const request = parseInput(createApiKeySchema, input)
  if (request.expiresAt !== undefined && request.expiresAt <= Date.now()) {
    throw invalidArgument('expiresAt', 'must be in the future')
  }
  const ownerId = await authoriseOwner(context.sql, principal, 'APIKEY', request.ownerId)
  const { row, rawApiKey } = await issueApiKey(context.sql, {
    ownerId,
    creatorId: principal.userId,
    labels: request.labels,
    expiresAt: request.expiresAt === undefined ? undefined : new Date(request.expiresAt),
    apiKeyId: request.apiKeyId,
  })
  return { apiKeyMetadata: toApiKey(row), rawApiKey }
}

/** A page of keys, each already serialised as the JSON of an ApiKey (see listApiKeysJson). */
export interface ApiKeyPage {
  keysJson: string[]
  nextToken?: string
}

export async function listApiKeys(context: DomainContext, call: CallContext, input: unknown): Promise<ApiKeyPage> {
  const principal = await context.authenticate(call)
  const request = parseInput(listApiKeysSchema, input)
  const ownerId = request.ownerId ?? principal.userId
  requireOwnership(principal, 'APIKEY', 'LIST', ownerId)
  const page = await apiKeysSql.listApiKeysJson(context.sql, {
    ownerId,
    status: request.status,
    labels: request.labelFilter,
    after: decodePageToken(request.nextToken),
    pageSize: pageSizeOrDefault(request.maxResults),
  })
  return { keysJson: page.items, nextToken: page.next && encodePageToken(page.next) }
}

/**
 * Another user's key is answered exactly like a key that does not exist (404, same
 * message) unless the caller may act on anyone's keys: the answer reveals nothing
 * about ids the caller does not own.
 */
async function findAuthorisedKey(
  sql: Queryable,
  principal: Principal,
  action: 'UPDATE' | 'DELETE',
  id: string,
  forUpdate = false,
): Promise<ApiKeyRow> {
  const row = await apiKeysSql.findApiKey(sql, id, { forUpdate })
  if (!row || (row.user_id !== principal.userId && !hasPermission(principal, `${action}_APIKEY_ANY`)))
    throw notFound(`API key ${id}`)
  requireOwnership(principal, 'APIKEY', action, row.user_id)
  return row
}

/**
 * Deactivation by an administrator is a decision the key's owner cannot undo: only the
 * one who deactivated a key, or someone who may update anyone's keys, re-activates it.
 */
function requireMayReactivate(principal: Principal, key: ApiKeyRow): void {
  const deactivatedBy = key.deactivated_by ?? key.user_id
  if (deactivatedBy === principal.userId || hasPermission(principal, 'UPDATE_APIKEY_ANY')) return
  throw permissionDenied('this key was deactivated by an administrator; only an administrator can re-activate it')
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const aKeys = Object.keys(a)
  return aKeys.length === Object.keys(b).length && aKeys.every((key) => b[key] === a[key])
}

export async function updateApiKey(
  context: DomainContext,
  call: CallContext,
  apiKeyId: unknown,
  input: unknown,
): Promise<ApiKey> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, apiKeyId, 'apiKeyId')
  const request = parseInput(updateApiKeySchema, input)
  const updated = await context.sql.begin(async (tx) => {
    const current = await findAuthorisedKey(tx, principal, 'UPDATE', id, true)
    const status = request.status ?? current.status
    if (status === 'ACTIVE' && current.status === 'INACTIVE') requireMayReactivate(principal, current)
    const labels =
      request.replaceLabels ?? (request.mergeLabels ? { ...current.labels, ...request.mergeLabels } : current.labels)
    if (Object.keys(labels).length > 20)
      throw invalidArgument('mergeLabels', 'the merged label set would have more than 20 labels')
    // An update that changes nothing leaves the audit fields as they were.
    if (status === current.status && sameLabels(labels, current.labels)) return { row: current, revoked: false }
    const deactivatedBy =
      status === 'ACTIVE' ? null : current.status === 'INACTIVE' ? (current.deactivated_by ?? null) : principal.userId
    const row = await apiKeysSql.updateApiKey(tx, id, {
      status,
      labels,
      updatedAt: nowMillis(),
      updatedBy: principal.userId,
      deactivatedBy,
    })
    return { row, revoked: current.status === 'ACTIVE' && status === 'INACTIVE' }
  })
  context.authenticator.forgetKey(id)
  if (updated.revoked) await context.authenticator.propagateRevocation()
  return toApiKey(updated.row)
}

export async function deleteApiKey(context: DomainContext, call: CallContext, apiKeyId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, apiKeyId, 'apiKeyId')
  await context.sql.begin(async (tx) => {
    await findAuthorisedKey(tx, principal, 'DELETE', id, true)
    await apiKeysSql.deleteApiKey(tx, id)
  })
  context.authenticator.forgetKey(id)
  await context.authenticator.propagateRevocation()
}
