import crypto from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import type { Queryable } from '../db/database.js'
import type { LockedMemoryRow, PendingContent } from '../db/sql/memories.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import { AppError, invalidArgument } from '../errors/app-error.js'
import { metadataSchema } from '../validation/memory.js'
import {
  batchUpdateMemoriesSchema,
  type UpdateMemoryRequest,
  updateMemorySchema,
} from '../validation/memory-updates.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { MEMORY_INGEST_JOB } from './job-kinds.js'
import {
  type BatchItemError,
  batchItemError,
  checkedContent,
  forgetExpiringSpaces,
  type Memory,
  toMemory,
} from './memories.js'
import { type ChangedField, type MemoryChangeDetails, metadataDiff, recordUpdate } from './memory-changes.js'
import type { Principal } from './permissions.js'
import { requireSpaceAccess, requireVectorStorage } from './space-access.js'

/** A lost update: the memory moved on since the caller read it. */
function versionConflict(memoryId: string, current: number, expected: number): AppError {
  const description = `is ${expected}, but memory ${memoryId} is at version ${current}: read it again and re-apply the change`
  return new AppError('FAILED_PRECONDITION', `expectedVersion ${description}`, [
    { field: 'expectedVersion', description },
  ])
}

/** The metadata after the update: replaced, or merged (a null value removes its key), then checked as any metadata. */
function nextMetadata(row: LockedMemoryRow, request: UpdateMemoryRequest): Record<string, unknown> {
  if (request.replaceMetadata) return request.replaceMetadata
  if (!request.mergeMetadata) return row.metadata
  const merged: Record<string, unknown> = { ...row.metadata }
  for (const [key, value] of Object.entries(request.mergeMetadata)) {
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return parseInput(metadataSchema, merged, 'mergeMetadata')
}

function nextValidUntil(row: LockedMemoryRow, request: UpdateMemoryRequest): Date | null {
  if (request.clearValidUntil) return null
  return request.validUntil === undefined ? row.valid_until : new Date(request.validUntil)
}

const changesContent = (request: UpdateMemoryRequest) =>
  request.originalContent !== undefined ||
  request.originalContentB64 !== undefined ||
  request.contentType !== undefined ||
  request.chunkingConfig !== undefined

/**
 * The content the update makes, if it makes one other than the latest (a pending update's,
 * else the stored one): new text, a new type for the same text, or a new chunking of it.
 */
function nextContent(row: LockedMemoryRow, request: UpdateMemoryRequest): PendingContent | undefined {
  if (!changesContent(request)) return undefined
  const givesText = request.originalContent !== undefined || request.originalContentB64 !== undefined
  if (row.content_id !== null && (givesText || request.contentType !== undefined))
    throw invalidArgument(
      givesText ? 'originalContent' : 'contentType',
      "a document's text comes from its file: store the new file as a new memory (its chunkingConfig may change here)",
    )
  const contentType = request.contentType ?? row.latest_content_type
  const content = givesText
    ? checkedContent({ ...request, contentType: contentType as UpdateMemoryRequest['contentType'] })
    : row.latest_content
  if (!givesText && contentType === 'application/json' && row.latest_content_type !== contentType)
    checkedContent({ originalContent: content, contentType })
  const next: PendingContent = {
    content,
    content_type: contentType,
    content_sha256: givesText ? crypto.createHash('sha256').update(content).digest() : row.latest_content_sha256,
    chunking: (request.chunkingConfig ?? row.latest_chunking) as Record<string, unknown>,
  }
  const unchanged =
    next.content_sha256.equals(row.latest_content_sha256) &&
    next.content_type === row.latest_content_type &&
    isDeepStrictEqual(next.chunking, row.latest_chunking)
  return unchanged ? undefined : next
}

/** What the update changes, for its history; no fields means there is nothing to change. */
function changeDetails(
  row: LockedMemoryRow,
  metadata: Record<string, unknown>,
  validUntil: Date | null,
  pending: PendingContent | undefined,
): MemoryChangeDetails {
  const fields: ChangedField[] = []
  const metadataChanges = metadataDiff(row.metadata, metadata)
  if (metadataChanges.length > 0) fields.push('metadata')
  const validUntilBefore = row.valid_until?.getTime()
  const validUntilAfter = validUntil?.getTime()
  if (validUntilBefore !== validUntilAfter) fields.push('validUntil')
  const details: MemoryChangeDetails = { fields, metadataChanges }
  if (validUntilBefore !== validUntilAfter) {
    if (validUntilBefore !== undefined) details.validUntilBefore = validUntilBefore
    if (validUntilAfter !== undefined) details.validUntilAfter = validUntilAfter
  }
  if (pending) {
    if (!pending.content_sha256.equals(row.latest_content_sha256)) fields.push('content')
    if (pending.content_type !== row.latest_content_type) fields.push('contentType')
    if (!isDeepStrictEqual(pending.chunking, row.latest_chunking)) fields.push('chunkingConfig')
    details.contentSha256Before = row.latest_content_sha256.toString('hex')
    details.contentSha256After = pending.content_sha256.toString('hex')
  }
  return details
}

/**
 * One update in `tx`: the memory locked, the caller's right to change it and the version
 * checked, then the next version and its history written together. A content change is
 * queued for ingest; the previous chunks answer until the new ones are stored.
 */
async function updateOne(
  context: DomainContext,
  tx: Queryable,
  principal: Principal,
  input: unknown,
  spaceOf: (spaceId: string) => Promise<SpaceRow | undefined>,
): Promise<Memory> {
  const request = parseInput(updateMemorySchema, input)
  const [row] = await memoriesSql.lockMemories(tx, [request.memoryId])
  requireSpaceAccess(principal, row && (await spaceOf(row.space_id)), 'MEMORY', 'UPDATE', `memory ${request.memoryId}`)
  const memory = row!
  if (request.expectedVersion !== undefined && request.expectedVersion !== memory.version)
    throw versionConflict(memory.id, memory.version, request.expectedVersion)
  const metadata = nextMetadata(memory, request)
  const validUntil = nextValidUntil(memory, request)
  const pending = nextContent(memory, request)
  const details = changeDetails(memory, metadata, validUntil, pending)
  // Nothing differs from what is stored: no new version, no history.
  if (details.fields.length === 0) return toMemory(memory)
  const updated = await memoriesSql.updateMemory(tx, memory.id, {
    metadata,
    valid_until: validUntil,
    updated_by: principal.userId,
    pending,
  })
  await recordUpdate(tx, principal, updated, details)
  if (pending) await context.jobs.enqueue(tx, MEMORY_INGEST_JOB, { memoryId: memory.id, spaceId: memory.space_id })
  return toMemory(updated)
}

/** Each space read once per call (a batch names few spaces for many memories). */
function spaceReader(tx: Queryable): (spaceId: string) => Promise<SpaceRow | undefined> {
  const spaces = new Map<string, Promise<SpaceRow | undefined>>()
  return (spaceId) => {
    let space = spaces.get(spaceId)
    if (!space) {
      space = spacesSql.findSpace(tx, spaceId)
      spaces.set(spaceId, space)
    }
    return space
  }
}

/** PATCH /v1/memories/{id}: metadata and validity at once; a content change as a new version, ingested again. */
export async function updateMemory(context: DomainContext, call: CallContext, input: unknown): Promise<Memory> {
  const principal = await context.authenticate(call)
  requireVectorStorage(context)
  const memory = (await context.sql.begin((tx) => updateOne(context, tx, principal, input, spaceReader(tx)))) as Memory
  context.jobs.wake()
  forgetExpiringSpaces(context, [memory])
  return memory
}

/** Up to MAX_MEMORY_BATCH_ITEMS updates in one transaction, each in its own savepoint: an item fails alone, whole. */
export async function batchUpdateMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ results: Array<{ memory: Memory } | { error: BatchItemError }> }> {
  const principal = await context.authenticate(call)
  const { requests } = parseInput(batchUpdateMemoriesSchema, input)
  requireVectorStorage(context)
  const results = await context.sql.begin(async (tx) => {
    const spaceOf = spaceReader(tx)
    const answers: Array<{ memory: Memory } | { error: BatchItemError }> = []
    for (const [index, item] of requests.entries()) {
      try {
        answers.push({
          memory: await tx.savepoint((savepoint) => updateOne(context, savepoint, principal, item, spaceOf)),
        })
      } catch (error) {
        answers.push({ error: batchItemError(context, error, `requests.${index}`) })
      }
    }
    return answers
  })
  context.jobs.wake()
  forgetExpiringSpaces(
    context,
    results.flatMap((result) => ('memory' in result ? [result.memory] : [])),
  )
  return { results: results as Array<{ memory: Memory } | { error: BatchItemError }> }
}
