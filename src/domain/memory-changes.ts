import { isDeepStrictEqual } from 'node:util'
import type { Queryable } from '../db/database.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { MemoryChangeRow } from '../db/sql/memory-changes.js'
import * as memoryChangesSql from '../db/sql/memory-changes.js'
import * as spacesSql from '../db/sql/spaces.js'
import { invalidArgument, notFound } from '../errors/app-error.js'
import { memoryHistorySchema } from '../validation/memory-updates.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import type { Principal } from './permissions.js'
import { requireSpaceAccess, requireVectorStorage } from './space-access.js'

const DEFAULT_HISTORY_PAGE_SIZE = 100

/** The fields of a memory an update can change, as its history names them. */
export type ChangedField = 'metadata' | 'validUntil' | 'content' | 'contentType' | 'chunkingConfig'

export interface MetadataChange {
  key: string
  before?: unknown
  after?: unknown
}

/** What one change did, as stored in memory_changes.changes and answered by the history. */
export interface MemoryChangeDetails {
  fields: ChangedField[]
  metadataChanges: MetadataChange[]
  contentSha256Before?: string
  contentSha256After?: string
  validUntilBefore?: number
  validUntilAfter?: number
}

export interface MemoryChange extends MemoryChangeDetails {
  action: 'UPDATE' | 'DELETE'
  version: number
  changedAt: number
  changedById: string
  apiKeyId: string
}

/** Keys added, removed and changed between two metadata objects, in key order. */
export function metadataDiff(before: Record<string, unknown>, after: Record<string, unknown>): MetadataChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  const changes: MetadataChange[] = []
  for (const key of keys) {
    const had = Object.hasOwn(before, key)
    const has = Object.hasOwn(after, key)
    if (had && has && isDeepStrictEqual(before[key], after[key])) continue
    changes.push({ key, ...(had ? { before: before[key] } : {}), ...(has ? { after: after[key] } : {}) })
  }
  return changes
}

/** Records an update of a memory in its history, in the update's transaction. */
export async function recordUpdate(
  tx: Queryable,
  principal: Principal,
  memory: { id: string; space_id: string; version: number },
  details: MemoryChangeDetails,
): Promise<void> {
  await memoryChangesSql.insertMemoryChange(tx, {
    memory_id: memory.id,
    space_id: memory.space_id,
    action: 'UPDATE',
    version: memory.version,
    changed_by: principal.userId,
    api_key_id: principal.apiKeyId,
    changes: details as unknown as Record<string, unknown>,
  })
}

function toMemoryChange(row: MemoryChangeRow): MemoryChange {
  const details = row.changes as unknown as MemoryChangeDetails & Record<string, unknown>
  const defined = Object.fromEntries(
    Object.entries(details).filter(([, value]) => value !== null && value !== undefined),
  )
  return {
    action: row.action,
    version: row.version,
    changedAt: row.changed_at.getTime(),
    changedById: row.changed_by,
    apiKeyId: row.api_key_id ?? '',
    fields: [],
    metadataChanges: [],
    ...(defined as Partial<MemoryChangeDetails>),
  }
}

const encodeHistoryToken = (id: string) => Buffer.from(id).toString('base64url')

function decodeHistoryToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined
  const id = Buffer.from(token, 'base64url').toString('utf8')
  if (!/^\d{1,19}$/.test(id)) throw invalidArgument('nextToken', 'is not a valid page token')
  return id
}

/**
 * GET /v1/memories/{id}/history: newest first. Readable by whoever may read the memory's space,
 * also once the memory is deleted (its history stays with its space).
 */
export async function getMemoryHistory(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ changes: MemoryChange[]; nextToken?: string }> {
  const { principal, reads } = await context.authenticateRead(call)
  const request = parseInput(memoryHistorySchema, input)
  requireVectorStorage(context)
  const pageSize = request.maxResults ?? DEFAULT_HISTORY_PAGE_SIZE
  const rows = await reads.run(async (sql) => {
    const memory = await memoriesSql.findMemory(sql, request.memoryId)
    const spaceId = memory?.space_id ?? (await memoryChangesSql.spaceOfMemoryChanges(sql, request.memoryId))
    if (!spaceId) throw notFound(`memory ${request.memoryId}`)
    const space = await spacesSql.findSpace(sql, spaceId)
    requireSpaceAccess(principal, space, 'MEMORY', 'GET', `memory ${request.memoryId}`)
    return memoryChangesSql.listMemoryChanges(sql, request.memoryId, {
      before: decodeHistoryToken(request.nextToken),
      limit: pageSize + 1,
    })
  })
  const page = rows.slice(0, pageSize)
  const last = page[page.length - 1]
  return {
    changes: page.map(toMemoryChange),
    ...(rows.length > pageSize && last ? { nextToken: encodeHistoryToken(last.id) } : {}),
  }
}
