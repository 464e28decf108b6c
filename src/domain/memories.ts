import crypto from 'node:crypto'
import type { ChunkingConfig } from '../chunking/chunking-config.js'
import { conflictOf } from '../db/conflicts.js'
import type { Queryable, Tx } from '../db/database.js'
import type { MemoryRow, NewMemoryRow } from '../db/sql/memories.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import type { DocumentKind, DocumentPage, OcrMode } from '../documents/extracted-document.js'
import { AppError, alreadyExists, invalidArgument, notFound, toAppError } from '../errors/app-error.js'
import { idSchema } from '../validation/identity.js'
import {
  type BatchDeleteMemoriesRequest,
  batchCreateMemoriesSchema,
  batchDeleteMemoriesSchema,
  type ContentType,
  type CreateMemoryRequest,
  createMemorySchema,
  listMemoriesSchema,
  MAX_CONTENT_BYTES,
  type MemoryStatus,
} from '../validation/memory.js'
import { batchGetMemoriesSchema } from '../validation/memory-updates.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { metadataFilter } from './filters/metadata-filter.js'
import { type MEMORY_EXTRACT_JOB, MEMORY_INGEST_JOB, type MemoryIngestPayload } from './job-kinds.js'
import { decodeMemoryPageToken, memoryPageToken } from './memory-page-token.js'
import { nowMillis } from './paging.js'
import type { Principal } from './permissions.js'
import { primaryReads, type ReadConnection } from './read-routing.js'
import { findAccessibleSpace, requireSpaceAccess, requireVectorStorage } from './space-access.js'

export interface Memory {
  memoryId: string
  spaceId: string
  /** A text type (ContentType) or a document's (src/documents/document-types.ts). */
  contentType: string
  metadata: Record<string, unknown>
  chunkingConfig: ChunkingConfig
  processingStatus: MemoryStatus
  processingError?: string
  originalContentSha256: string
  chunkCount: number
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
  /** Documents only: the uploaded file's name and size, how it is extracted, and how extraction went. */
  fileName?: string
  contentBytes?: number
  documentOptions?: DocumentOptions
  extraction?: Extraction
  /** 1 when created, one more with each update: the If-Match / expectedVersion of the next. */
  version: number
  /** Epoch ms; past it, retrieval leaves the memory out unless asked for expired memories. */
  validUntil?: number
  /** A content update is being chunked and embedded; the previous content's chunks answer meanwhile. */
  contentPending?: boolean
}

export interface DocumentOptions {
  ocr: OcrMode
  extractPageImages: boolean
  pageImageDpi: number
  ocrLanguages: string[]
}

/** A document's extraction as processingStatus readers see it: its stage while it runs, then its pages. */
export interface Extraction {
  kind: DocumentKind
  stage: 'EXTRACTING' | 'OCR' | 'RENDERING' | 'DONE'
  pagesDone: number
  pagesTotal: number
  pages: DocumentPage[]
}

export interface MemoryContent {
  memoryId: string
  contentType: ContentType
  originalContent: string
}

export const DEFAULT_CONTENT_TYPE: ContentType = 'text/plain'
const DEFAULT_MEMORY_PAGE_SIZE = 100

export function toMemory(row: MemoryRow): Memory {
  return {
    memoryId: row.id,
    spaceId: row.space_id,
    contentType: row.content_type,
    metadata: row.metadata,
    chunkingConfig: row.chunking as ChunkingConfig,
    processingStatus: row.status,
    ...(row.processing_error ? { processingError: row.processing_error } : {}),
    originalContentSha256: row.content_sha256.toString('hex'),
    chunkCount: row.chunk_count,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
    updatedById: row.updated_by,
    ...(row.file_name === null ? {} : { fileName: row.file_name }),
    ...(row.content_bytes === null ? {} : { contentBytes: row.content_bytes }),
    ...(row.document_options === null ? {} : { documentOptions: row.document_options as unknown as DocumentOptions }),
    ...(row.extraction === null ? {} : { extraction: row.extraction as unknown as Extraction }),
    version: row.version,
    ...(row.valid_until === null ? {} : { validUntil: row.valid_until.getTime() }),
    ...(row.pending_content_sha256 === null ? {} : { contentPending: true }),
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** A text content as a create or an update gives it. */
type GivenContent = Pick<CreateMemoryRequest, 'originalContent' | 'originalContentB64' | 'contentType'>

/** The content as text: given as text, or base64 of UTF-8 (every accepted content type is text). */
function contentOf(request: GivenContent): { text: string; field: string } {
  if (request.originalContent !== undefined) {
    if (Buffer.byteLength(request.originalContent) > MAX_CONTENT_BYTES) throw contentTooLarge('originalContent')
    return { text: request.originalContent, field: 'originalContent' }
  }
  const encoded = request.originalContentB64!
  // base64 is 4 characters for 3 bytes: reject before decoding what cannot fit.
  if (encoded.length > Math.ceil(MAX_CONTENT_BYTES / 3) * 4) throw contentTooLarge('originalContentB64')
  const bytes = Buffer.from(encoded, 'base64')
  if (bytes.length > MAX_CONTENT_BYTES) throw contentTooLarge('originalContentB64')
  try {
    return { text: utf8.decode(bytes), field: 'originalContentB64' }
  } catch {
    throw invalidArgument(
      'originalContentB64',
      'must be UTF-8 text once decoded (text/plain, text/markdown and application/json are text)',
    )
  }
}

function contentTooLarge(field: string): AppError {
  const description = `is larger than ${MAX_CONTENT_BYTES} bytes`
  return new AppError('PAYLOAD_TOO_LARGE', `${field}: ${description}`, [{ field, description }])
}

/** The given content's text, checked: not empty, storable, valid JSON when its type says so. */
export function checkedContent(request: GivenContent): string {
  const { text, field } = contentOf(request)
  if (text.trim().length === 0) throw invalidArgument(field, 'must not be empty')
  // PostgreSQL text cannot hold NUL (base64 can carry it; UTF-8 decoding already refused lone surrogates).
  if (text.includes('\0')) throw invalidArgument(field, 'must not contain the NUL character')
  if ((request.contentType ?? DEFAULT_CONTENT_TYPE) === 'application/json') {
    try {
      JSON.parse(text)
    } catch {
      throw invalidArgument(field, 'is not valid JSON, yet contentType is application/json')
    }
  }
  return text
}

export interface CreateMemoryResult {
  memory: Memory
  /** False when dedupe found the same content already stored in the space (REST answers 200, not 201). */
  created: boolean
}

/**
 * Stores one memory PENDING with its ingest job, in `tx` (a transaction or a savepoint
 * of one): the memory and its job commit together, so no memory is left without its job.
 * The job runs once the caller has committed and woken the queue.
 */
/** A create whose request is parsed and whose space the caller may write to: what is left is storing it. */
interface PlannedCreate {
  row: NewMemoryRow
  dedupe: boolean
}

/**
 * Everything a create checks before it writes: the request, the space (read through
 * `spaceOf`, so a batch reads each space once), the content. Writes nothing.
 */
async function planCreate(
  principal: Principal,
  input: unknown,
  spaceOf: (spaceId: string) => Promise<SpaceRow>,
  now = nowMillis(),
): Promise<PlannedCreate> {
  const request = parseInput(createMemorySchema, input)
  const space = await spaceOf(request.spaceId)
  const content = checkedContent(request)
  return {
    dedupe: request.dedupe === true,
    row: pendingMemoryRow(principal, space, request, now, {
      content,
      content_type: request.contentType ?? DEFAULT_CONTENT_TYPE,
      content_sha256: crypto.createHash('sha256').update(content).digest(),
    }),
  }
}

/** What a memory's content makes of its row: the text (a document's is extracted later), and a document's file. */
type ContentColumns = Pick<NewMemoryRow, 'content' | 'content_type' | 'content_sha256'> &
  Partial<Pick<NewMemoryRow, 'content_id' | 'file_name' | 'content_bytes' | 'document_options'>>

/** A new memory's row, PENDING, created by `principal` in `space` with the request's id, metadata and chunking (or the space's). */
export function pendingMemoryRow(
  principal: Principal,
  space: SpaceRow,
  request: { memoryId?: string; metadata?: Record<string, unknown>; chunkingConfig?: unknown; validUntil?: number },
  now: Date,
  content: ContentColumns,
): NewMemoryRow {
  return {
    id: request.memoryId ?? crypto.randomUUID(),
    space_id: space.id,
    metadata: request.metadata ?? {},
    chunking: (request.chunkingConfig ?? space.default_chunking) as Record<string, unknown>,
    status: 'PENDING',
    processing_error: null,
    chunk_count: 0,
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
    updated_by: principal.userId,
    content_id: null,
    file_name: null,
    content_bytes: null,
    document_options: null,
    extraction: null,
    version: 1,
    valid_until: request.validUntil === undefined ? null : new Date(request.validUntil),
    pending_content_sha256: null,
    ...content,
  }
}

const memoryOfRow = ({ content: _content, content_id: _contentId, ...stored }: NewMemoryRow): Memory => toMemory(stored)

async function createOne(
  context: DomainContext,
  tx: Queryable,
  principal: Principal,
  input: unknown,
): Promise<CreateMemoryResult> {
  const { row, dedupe } = await planCreate(principal, input, (spaceId) =>
    findAccessibleSpace(tx, principal, spaceId, 'MEMORY', 'CREATE'),
  )
  return storeMemory(context, tx, row, { dedupe, firstJob: MEMORY_INGEST_JOB })
}

/**
 * Stores one planned memory with its first job in `tx` (a text memory's ingest, a document's
 * extraction), or, with `dedupe`, answers the memory of the same content already in the space.
 */
export async function storeMemory(
  context: DomainContext,
  tx: Queryable,
  row: NewMemoryRow,
  { dedupe, firstJob }: { dedupe: boolean; firstJob: typeof MEMORY_INGEST_JOB | typeof MEMORY_EXTRACT_JOB },
): Promise<CreateMemoryResult> {
  if (dedupe) {
    const existing = await memoriesSql.findMemoryByContent(tx, row.space_id, row.content_sha256)
    if (existing) return { memory: toMemory(existing), created: false }
  }
  let stored: Set<string>
  try {
    stored = await memoriesSql.insertMemoriesSkippingTakenIds(tx, [row])
  } catch (error) {
    if (conflictOf(error) === 'missing-reference') throw notFound(`space ${row.space_id}`)
    throw error
  }
  if (stored.size === 0) throw alreadyExists(`a memory with id ${row.id} already exists`)
  await context.jobs.enqueue(tx, firstJob, { memoryId: row.id, spaceId: row.space_id })
  return { memory: memoryOfRow(row), created: true }
}

/** A batch the one-statement path cannot store exactly as item-by-item creates would (an id taken, twice in the batch). */
class NeedsOneByOne extends Error {}

/**
 * The batch in a few statements: each distinct space read once, the new memories in one
 * insert, their jobs in another. Items that fail their checks answer their own error and
 * write nothing. The answer is what creating the items one by one, in order, would give;
 * where it might not be (a memory id already taken, or given twice, a space deleted
 * meanwhile), it throws and the caller, having rolled this back, creates them one by one.
 */
async function createAllAtOnce(
  context: DomainContext,
  tx: Queryable,
  principal: Principal,
  requests: unknown[],
): Promise<Array<CreateMemoryResult | unknown>> {
  const spaces = new Map<string, Promise<SpaceRow>>()
  const spaceOf = (spaceId: string) => {
    let space = spaces.get(spaceId)
    if (!space) {
      space = findAccessibleSpace(tx, principal, spaceId, 'MEMORY', 'CREATE')
      // Each item naming a refused space gets the refusal; none is left unhandled.
      space.catch(() => {})
      spaces.set(spaceId, space)
    }
    return space
  }
  const outcomes: Array<CreateMemoryResult | unknown> = []
  // Listings order by creation time, then id: the items are stamped a millisecond apart, in
  // request order, as creating them one by one would (each create takes longer than that).
  const batchStarted = Date.now()
  const toStore: NewMemoryRow[] = []
  const storedByContent = new Map<string, NewMemoryRow>()
  for (const [index, input] of requests.entries()) {
    try {
      const { row, dedupe } = await planCreate(principal, input, spaceOf, new Date(batchStarted + index))
      const contentKey = `${row.space_id}:${row.content_sha256.toString('hex')}`
      if (dedupe) {
        // The oldest memory of that content wins, as findMemoryByContent orders: one stored before this batch, else an earlier item.
        const existing = await memoriesSql.findMemoryByContent(tx, row.space_id, row.content_sha256)
        const earlier = storedByContent.get(contentKey)
        if (existing || earlier) {
          outcomes[index] = { memory: existing ? toMemory(existing) : memoryOfRow(earlier!), created: false }
          continue
        }
      }
      if (toStore.some((stored) => stored.id === row.id)) throw new NeedsOneByOne()
      toStore.push(row)
      if (!storedByContent.has(contentKey)) storedByContent.set(contentKey, row)
      outcomes[index] = { memory: memoryOfRow(row), created: true }
    } catch (error) {
      if (error instanceof NeedsOneByOne) throw error
      outcomes[index] = error
    }
  }
  const stored = await memoriesSql.insertMemoriesSkippingTakenIds(tx, toStore)
  if (stored.size !== toStore.length) throw new NeedsOneByOne()
  await context.jobs.enqueueMany(
    tx,
    MEMORY_INGEST_JOB,
    toStore.map((row) => ({ memoryId: row.id, spaceId: row.space_id }) satisfies MemoryIngestPayload as never),
  )
  return outcomes
}

/** Item by item, a savepoint each: a failing item rolls back only itself. */
async function createOneByOne(
  context: DomainContext,
  tx: Tx,
  principal: Principal,
  requests: unknown[],
): Promise<Array<CreateMemoryResult | unknown>> {
  const outcomes: Array<CreateMemoryResult | unknown> = []
  for (const input of requests) {
    try {
      outcomes.push(await tx.savepoint((savepoint) => createOne(context, savepoint, principal, input)))
    } catch (error) {
      outcomes.push(error)
    }
  }
  return outcomes
}

/** POST /v1/memories: stored PENDING, chunked and embedded by a job. */
export async function createMemory(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<CreateMemoryResult> {
  const principal = await context.authenticate(call)
  requireVectorStorage(context)
  const result = (await context.sql.begin((tx) => createOne(context, tx, principal, input))) as CreateMemoryResult
  context.jobs.wake()
  forgetExpiringSpaces(context, [result.memory])
  return result
}

export interface BatchItemError {
  code: number
  status: string
  message: string
  details: Array<{ field: string; description: string }>
}

/**
 * A space's first memory with validUntil flags it (migration 16's trigger), which makes
 * retrieval check expiry there. PostgreSQL tells every server's space rows cache through
 * the space's change notification; the embedded database has none, so the cache is told here.
 */
export function forgetExpiringSpaces(context: DomainContext, memories: Memory[]): void {
  for (const spaceId of new Set(
    memories.flatMap((memory) => (memory.validUntil === undefined ? [] : [memory.spaceId])),
  ))
    context.spaceRows.forgetSpace(spaceId)
}

/** One item's error in a batch's answer, its fields named under the item's place in the request (`requests.3`). */
export function batchItemError(context: DomainContext, error: unknown, place: string): BatchItemError {
  const appError = toAppError(error)
  if (appError.code === 'INTERNAL') context.log.error('memory batch item failed', { place, error: error as Error })
  return {
    code: appError.httpStatus,
    status: appError.code,
    message: appError.message,
    details: appError.details.map((detail) => ({ field: `${place}.${detail.field}`, description: detail.description })),
  }
}

/** Each request on its own: one bad item answers its own error and the others are stored. */
export async function batchCreateMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ results: Array<{ memory: Memory; created: boolean } | { error: BatchItemError }> }> {
  const principal = await context.authenticate(call)
  const { requests } = parseInput(batchCreateMemoriesSchema, input)
  requireVectorStorage(context)
  // One transaction for the batch, so it costs one commit (one WAL flush), not one per memory.
  const outcomes = await context.sql.begin(async (tx) => {
    try {
      return await tx.savepoint((savepoint) => createAllAtOnce(context, savepoint, principal, requests))
    } catch (error) {
      if (!(error instanceof NeedsOneByOne) && toAppError(error).code !== 'INTERNAL') throw error
      // A conflict or a database error in the one-statement path: its savepoint is rolled back.
      return createOneByOne(context, tx, principal, requests)
    }
  })
  forgetExpiringSpaces(
    context,
    outcomes.flatMap((outcome) =>
      (outcome as CreateMemoryResult)?.memory ? [(outcome as CreateMemoryResult).memory] : [],
    ),
  )
  const results = outcomes.map((outcome, index) =>
    outcome instanceof Error || !(outcome as CreateMemoryResult).memory
      ? { error: batchItemError(context, outcome, `requests.${index}`) }
      : (outcome as CreateMemoryResult),
  )
  context.jobs.wake()
  return { results }
}

/** The memory and its space, if the caller may act on it; NOT_FOUND otherwise. */
export async function findAccessibleMemory(
  context: DomainContext,
  principal: Principal,
  memoryId: string,
  action: 'GET' | 'DELETE',
  reads: ReadConnection = primaryReads(context),
): Promise<MemoryRow> {
  const memory = await reads.run((sql) => memoriesSql.findMemory(sql, memoryId))
  const space = memory ? await reads.run((sql) => spacesSql.findSpace(sql, memory.space_id)) : undefined
  requireSpaceAccess(principal, space, 'MEMORY', action, `memory ${memoryId}`)
  return memory!
}

export async function getMemory(context: DomainContext, call: CallContext, memoryId: unknown): Promise<Memory> {
  const { principal, reads } = await context.authenticateRead(call)
  const id = parseInput(idSchema, memoryId, 'memoryId')
  requireVectorStorage(context)
  return toMemory(await findAccessibleMemory(context, principal, id, 'GET', reads))
}

export async function getMemoryContent(
  context: DomainContext,
  call: CallContext,
  memoryId: unknown,
): Promise<MemoryContent> {
  const { principal, reads } = await context.authenticateRead(call)
  const id = parseInput(idSchema, memoryId, 'memoryId')
  requireVectorStorage(context)
  await findAccessibleMemory(context, principal, id, 'GET', reads)
  const stored = await reads.run((sql) => memoriesSql.findMemoryContent(sql, id))
  if (!stored) throw notFound(`memory ${id}`)
  return { memoryId: id, contentType: stored.content_type as ContentType, originalContent: stored.content }
}

/** GET /v1/spaces/{id}/memories: by creation or update time, either way, with status and metadata filters. */
export async function listMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ memories: Memory[]; nextToken?: string }> {
  const { principal, reads } = await context.authenticateRead(call)
  const request = parseInput(listMemoriesSchema, input)
  requireVectorStorage(context)
  await reads.run((sql) => findAccessibleSpace(sql, principal, request.spaceId, 'MEMORY', 'LIST'))
  const filter = request.filter === undefined ? undefined : metadataFilter(request.filter, 'filter', 'metadata')
  const pageSize = request.maxResults ?? DEFAULT_MEMORY_PAGE_SIZE
  const sortBy = request.sortBy ?? 'createdAt'
  const position = decodeMemoryPageToken(request.nextToken, sortBy)
  const rows = await reads.run((sql) =>
    memoriesSql.listMemories(sql, {
      spaceId: request.spaceId,
      status: request.statusFilter,
      metadataFilter: filter?.compiled,
      sortBy,
      after: position?.sortBy === 'createdAt' ? position.after : undefined,
      afterUpdated: position?.sortBy === 'updatedAt' ? position.after : undefined,
      descending: request.sortOrder === 'DESCENDING',
      limit: pageSize + 1,
    }),
  )
  const page = rows.slice(0, pageSize)
  const last = page.at(-1)
  const nextToken = rows.length > pageSize && last ? memoryPageToken(last, sortBy) : undefined
  return { memories: page.map(toMemory), nextToken }
}

/** Its chunks and vectors go with it, its deletion into its history; a running ingest finds it gone and stops. */
export async function deleteMemory(context: DomainContext, call: CallContext, memoryId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, memoryId, 'memoryId')
  requireVectorStorage(context)
  await findAccessibleMemory(context, principal, id, 'DELETE')
  await memoriesSql.deleteMemoriesRecorded(context.sql, [id], principal)
}

export interface BatchDeleteResult {
  deletedCount: number
  /** For a delete by ids: each id's outcome, in request order. */
  results?: Array<{ memoryId: string; deleted: boolean; error?: string }>
  /** For a delete by filter: how many memories match (all deleted, unless a dry run). */
  matchedCount?: number
  dryRun: boolean
}

/**
 * A delete by filter, made safe: it must name what to delete (a filter or a status), a
 * filter matching every memory of the space is refused (that is deleting the space), and
 * it deletes only when the caller confirms how many match (`expectedCount`, from a dry run
 * first). The memories are counted and deleted under their row locks in one transaction:
 * what is deleted is exactly what was counted.
 */
async function deleteByFilter(
  context: DomainContext,
  principal: Principal,
  request: BatchDeleteMemoriesRequest,
): Promise<BatchDeleteResult> {
  const spaceId = request.spaceId!
  const filter = request.filter === undefined ? undefined : metadataFilter(request.filter, 'filter', 'metadata')
  return (await context.sql.begin(async (tx) => {
    await findAccessibleSpace(tx, principal, spaceId, 'MEMORY', 'DELETE')
    const matched = await memoriesSql.lockMatchingMemories(tx, spaceId, request.statusFilter, filter?.compiled)
    if (filter && matched.length > 0) {
      const everyMemory = request.statusFilter
        ? (await memoriesSql.lockMatchingMemories(tx, spaceId, undefined, filter.compiled)).length
        : matched.length
      if (everyMemory === (await memoriesSql.countMemoriesInSpace(tx, spaceId)))
        throw invalidArgument(
          'filter',
          `matches every memory of space ${spaceId} (${everyMemory}): to delete them all, delete the space; ` +
            'otherwise narrow the filter',
        )
    }
    if (request.dryRun) return { deletedCount: 0, matchedCount: matched.length, dryRun: true }
    if (request.expectedCount !== matched.length)
      throw new AppError(
        'FAILED_PRECONDITION',
        `${matched.length} memories match now, not expectedCount ${request.expectedCount}: nothing was deleted`,
        [
          {
            field: 'expectedCount',
            description: `is ${request.expectedCount}, but ${matched.length} memories match now`,
          },
        ],
      )
    const deleted = await memoriesSql.deleteMemoriesRecorded(tx, matched, principal)
    return { deletedCount: deleted.length, matchedCount: matched.length, dryRun: false }
  })) as BatchDeleteResult
}

/** By ids (each checked like a single delete), or the memories of a space that match a filter (deleteByFilter). */
export async function batchDeleteMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<BatchDeleteResult> {
  const principal = await context.authenticate(call)
  const request = parseInput(batchDeleteMemoriesSchema, input)
  requireVectorStorage(context)
  if (request.spaceId) return deleteByFilter(context, principal, request)
  const ids = [...new Set(request.memoryIds!)]
  const located = await memoriesSql.spacesOfMemories(context.sql, ids)
  const spaceIds = [...new Set(located.map((entry) => entry.space_id))]
  const allowed = new Set<string>()
  const refusals = new Map<string, string>()
  for (const spaceId of spaceIds) {
    try {
      requireSpaceAccess(
        principal,
        await spacesSql.findSpace(context.sql, spaceId),
        'MEMORY',
        'DELETE',
        `space ${spaceId}`,
      )
      allowed.add(spaceId)
    } catch (error) {
      // A space the caller may not see reads as absent, like its memories.
      const appError = toAppError(error)
      refusals.set(spaceId, appError.code === 'PERMISSION_DENIED' ? appError.message : 'not found')
    }
  }
  const spaceOf = new Map(located.map((entry) => [entry.id, entry.space_id]))
  const deletable = ids.filter((id) => allowed.has(spaceOf.get(id) ?? ''))
  const deleted = new Set(
    (await memoriesSql.deleteMemoriesRecorded(context.sql, deletable, principal)).map((row) => row.id),
  )
  const results = request.memoryIds!.map((memoryId) => {
    if (deleted.has(memoryId)) return { memoryId, deleted: true }
    const spaceId = spaceOf.get(memoryId)
    return { memoryId, deleted: false, error: (spaceId && refusals.get(spaceId)) || 'not found' }
  })
  return { deletedCount: deleted.size, results, dryRun: false }
}

/**
 * POST /v1/memories:batchGet: a result per id, in order. An id that does not exist and one the
 * caller may not read answer alike (NOT_FOUND), so a batch never tells another owner's ids.
 */
export async function batchGetMemories(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ results: Array<{ memoryId: string; memory?: Memory; error?: BatchItemError }> }> {
  const { principal, reads } = await context.authenticateRead(call)
  const { memoryIds } = parseInput(batchGetMemoriesSchema, input)
  requireVectorStorage(context)
  const rows = await reads.run((sql) =>
    memoriesSql.findMemories(sql, [...new Set(memoryIds)], { withContentBytes: false }),
  )
  const spaceIds = [...new Set(rows.map((row) => row.space_id))]
  const spaces = new Map(
    (await reads.run((sql) => spacesSql.findSpaces(sql, spaceIds))).map((space) => [space.id, space]),
  )
  const readable = new Map<string, Memory>()
  for (const row of rows) {
    try {
      requireSpaceAccess(principal, spaces.get(row.space_id), 'MEMORY', 'GET', `memory ${row.id}`)
      readable.set(row.id, toMemory(row))
    } catch {
      // Refused reads as absent: the answer below is the same NOT_FOUND.
    }
  }
  return {
    results: memoryIds.map((memoryId, index) => {
      const memory = readable.get(memoryId)
      if (memory) return { memoryId, memory }
      return { memoryId, error: batchItemError(context, notFound(`memory ${memoryId}`), `memoryIds.${index}`) }
    }),
  }
}
