import crypto from 'node:crypto'
import { type ChunkingConfig, DEFAULT_CHUNKING } from '../chunking/chunking-config.js'
import { conflictOf } from '../db/conflicts.js'
import type { Queryable } from '../db/database.js'
import * as chunksSql from '../db/sql/chunks.js'
import { type EmbedderRow, embeddersTable } from '../db/sql/embedders.js'
import type { IndexState, SpaceEmbedderRow, SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import * as usersSql from '../db/sql/users.js'
import { ensureEmbedderIndex } from '../db/vector-storage.js'
import { AppError, alreadyExists, invalidArgument, notFound, permissionDenied } from '../errors/app-error.js'
import { idSchema } from '../validation/identity.js'
import {
  addEmbedderSchema,
  createSpaceSchema,
  DEFAULT_RETRIEVAL_WEIGHT,
  listSpacesSchema,
  MAX_SPACE_EMBEDDERS,
  removeEmbedderSchema,
  updateSpaceSchema,
} from '../validation/memory.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { SPACE_BACKFILL_JOB, type SpaceBackfillPayload } from './job-kinds.js'
import { defaultSpaceEmbedders } from './local-embedders.js'
import { decodePageToken, nowMillis, pageOf, pageSizeOrDefault } from './paging.js'
import { hasPermission, type Principal, ROLE_PERMISSIONS, type Role, requireOwnership } from './permissions.js'
import { nextLabels, sameColumns } from './registry.js'
import { findAccessibleSpace, requireVectorStorage } from './space-access.js'

export interface SpaceEmbedder {
  embedderId: string
  defaultRetrievalWeight: number
  /** Retrieval uses an embedder once READY; BACKFILLING while its vectors for older memories are written. */
  indexState: IndexState
  backfillProgress: { completedMemories: number; totalMemories: number; error?: string }
}

export interface Space {
  spaceId: string
  ownerId: string
  name: string
  labels: Record<string, string>
  spaceEmbedders: SpaceEmbedder[]
  defaultChunkingConfig: ChunkingConfig
  publicRead: boolean
  /** The PostgreSQL text search configuration of its keyword search (stop words, stemming); fixed at creation. */
  textSearchLanguage: string
  /** OCR for its documents unless a memory says otherwise. */
  defaultOcr: 'AUTO' | 'ON' | 'OFF'
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
}

function toSpaceEmbedder(row: SpaceEmbedderRow): SpaceEmbedder {
  return {
    embedderId: row.embedder_id,
    defaultRetrievalWeight: row.default_retrieval_weight,
    indexState: row.index_state,
    backfillProgress: {
      completedMemories: row.backfill_done,
      totalMemories: row.backfill_total,
      ...(row.backfill_error ? { error: row.backfill_error } : {}),
    },
  }
}

export function toSpace(row: SpaceRow, embedders: SpaceEmbedderRow[]): Space {
  return {
    spaceId: row.id,
    ownerId: row.owner_id,
    name: row.name,
    labels: row.labels,
    spaceEmbedders: embedders.filter((entry) => entry.space_id === row.id).map(toSpaceEmbedder),
    defaultChunkingConfig: row.default_chunking as ChunkingConfig,
    publicRead: row.public_read,
    textSearchLanguage: row.text_search_language,
    defaultOcr: row.default_ocr,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
    updatedById: row.updated_by,
  }
}

async function withEmbedders(sql: Queryable, row: SpaceRow): Promise<Space> {
  return toSpace(row, await spacesSql.listSpaceEmbedders(sql, [row.id]))
}

/**
 * Runs `write` in one transaction on the space, locked, once the principal may UPDATE or
 * DELETE it; the cached rows of the space are forgotten whatever the outcome.
 */
function writeSpace<T>(
  context: DomainContext,
  principal: Principal,
  id: string,
  action: 'UPDATE' | 'DELETE',
  write: (tx: Queryable, space: SpaceRow) => Promise<T>,
): Promise<T> {
  return context.spaceRows.afterSpaceWrite(
    id,
    () =>
      context.sql.begin(async (tx) =>
        write(tx, await findAccessibleSpace(tx, principal, id, 'SPACE', action)),
      ) as Promise<T>,
  )
}

function spaceConflict(error: unknown, spaceId: string, name: string | undefined): unknown {
  switch (conflictOf(error)) {
    case 'duplicate-space-id':
      return alreadyExists(`a space with id ${spaceId} already exists`)
    case 'duplicate-space-name':
      return alreadyExists(`this owner already has a space named "${name}"`)
    case 'duplicate-space-embedder':
      return alreadyExists('the embedder is already in this space')
    case 'missing-reference':
      return notFound('embedder or owner (deleted meanwhile)')
    default:
      return error
  }
}

/**
 * The embedder, if the caller can see it and the space's owner may use it: the owner's
 * own, or any when the owner holds GET_EMBEDDER_ANY. Only dense embedders hold vectors.
 */
export async function usableEmbedder(
  sql: Queryable,
  principal: Principal,
  ownerRole: Role,
  ownerId: string,
  embedderId: string,
  field: string,
): Promise<EmbedderRow> {
  const row = await embeddersTable.find(sql, embedderId)
  const callerSees = row && (row.owner_id === principal.userId || hasPermission(principal, 'GET_EMBEDDER_ANY'))
  if (!row || !callerSees)
    throw new AppError('NOT_FOUND', `${field}: embedder ${embedderId} not found`, [{ field, description: 'not found' }])
  if (row.owner_id !== ownerId && !ROLE_PERMISSIONS[ownerRole].has('GET_EMBEDDER_ANY')) {
    throw permissionDenied(`${field}: embedder ${embedderId} belongs to another user; the space's owner cannot use it`)
  }
  if (row.distribution_type !== 'DENSE')
    throw invalidArgument(field, `embedder ${embedderId} is ${row.distribution_type}; spaces hold dense vectors only`)
  return row
}

/** The language must be a text search configuration of this database (PGlite has every snowball one PostgreSQL ships). */
async function requireTextSearchLanguage(sql: Queryable, language: string): Promise<void> {
  const languages = await spacesSql.textSearchLanguages(sql)
  if (!languages.includes(language))
    throw invalidArgument(
      'textSearchLanguage',
      `this database has no text search configuration "${language}"; it has ${languages.join(', ')}`,
    )
}

async function ownerRole(sql: Queryable, principal: Principal, ownerId: string): Promise<Role> {
  if (ownerId === principal.userId) return principal.role
  const owner = await usersSql.findUserById(sql, ownerId)
  if (!owner) throw notFound(`user ${ownerId}`)
  return owner.role as Role
}

/** The embedder's HNSW index exists from the moment it first joins any space. */
export async function joinSpace(
  tx: Queryable,
  spaceId: string,
  embedder: EmbedderRow,
  position: number,
  weight: number,
  backfillTotal: number,
): Promise<SpaceEmbedderRow> {
  if (!(await spacesSql.embedderInAnySpace(tx, embedder.id)))
    await ensureEmbedderIndex(tx, embedder.id, embedder.dimensionality)
  const row: SpaceEmbedderRow = {
    space_id: spaceId,
    embedder_id: embedder.id,
    position,
    default_retrieval_weight: weight,
    index_state: backfillTotal > 0 ? 'BACKFILLING' : 'READY',
    backfill_done: 0,
    backfill_total: backfillTotal,
    backfill_error: null,
    added_at: nowMillis(),
  }
  await spacesSql.insertSpaceEmbedders(tx, [row])
  return row
}

export async function createSpace(context: DomainContext, call: CallContext, input: unknown): Promise<Space> {
  const principal = await context.authenticate(call)
  const request = parseInput(createSpaceSchema, input)
  requireVectorStorage(context)
  const ownerId = request.ownerId ?? principal.userId
  requireOwnership(principal, 'SPACE', 'CREATE', ownerId)
  const role = await ownerRole(context.sql, principal, ownerId)
  await requireTextSearchLanguage(context.sql, request.textSearchLanguage)
  // A space that names no embedder gets its owner's default LOCAL embedder, if any (local-embedders.ts).
  const requested = request.spaceEmbedders?.length
    ? request.spaceEmbedders
    : await defaultSpaceEmbedders(context.sql, ownerId, role)
  const embedders = await Promise.all(
    requested.map((entry, index) =>
      usableEmbedder(context.sql, principal, role, ownerId, entry.embedderId, `spaceEmbedders.${index}.embedderId`),
    ),
  )
  const now = nowMillis()
  const row: SpaceRow = {
    id: request.spaceId ?? crypto.randomUUID(),
    owner_id: ownerId,
    name: request.name,
    labels: request.labels ?? {},
    default_chunking: (request.defaultChunkingConfig ?? DEFAULT_CHUNKING) as Record<string, unknown>,
    public_read: request.publicRead ?? false,
    text_search_language: request.textSearchLanguage,
    default_ocr: request.defaultOcr ?? 'AUTO',
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
    updated_by: principal.userId,
  }
  try {
    const members = await context.sql.begin(async (tx) => {
      await spacesSql.insertSpace(tx, row)
      const rows: SpaceEmbedderRow[] = []
      for (const [index, embedder] of embedders.entries()) {
        rows.push(
          await joinSpace(
            tx,
            row.id,
            embedder,
            index,
            requested[index]!.defaultRetrievalWeight ?? DEFAULT_RETRIEVAL_WEIGHT,
            0,
          ),
        )
      }
      return rows
    })
    return toSpace(row, members as SpaceEmbedderRow[])
  } catch (error) {
    throw spaceConflict(error, row.id, row.name)
  }
}

export async function listSpaces(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ spaces: Space[]; nextToken?: string }> {
  const { principal, reads } = await context.authenticateRead(call)
  const request = parseInput(listSpacesSchema, input)
  const ownerId = request.ownerId ?? principal.userId
  requireOwnership(principal, 'SPACE', 'LIST', ownerId)
  const pageSize = pageSizeOrDefault(request.maxResults)
  return reads.run(async (sql) => {
    const rows = await spacesSql.listSpaces(sql, {
      ownerId,
      labels: request.labelFilter,
      after: decodePageToken(request.nextToken),
      limit: pageSize + 1,
    })
    const page = pageOf(rows, pageSize, (row) => row)
    const members = await spacesSql.listSpaceEmbedders(
      sql,
      page.items.map((row) => row.id),
    )
    return { spaces: page.items.map((row) => toSpace(row, members)), nextToken: page.nextToken }
  })
}

export async function getSpace(context: DomainContext, call: CallContext, spaceId: unknown): Promise<Space> {
  const { principal, reads } = await context.authenticateRead(call)
  const id = parseInput(idSchema, spaceId, 'spaceId')
  return reads.run(async (sql) => withEmbedders(sql, await findAccessibleSpace(sql, principal, id, 'SPACE', 'GET')))
}

/** Name, publicRead and labels (replace or merge). A change of nothing leaves the audit fields as they were. */
export async function updateSpace(
  context: DomainContext,
  call: CallContext,
  spaceId: unknown,
  input: unknown,
): Promise<Space> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, spaceId, 'spaceId')
  const request = parseInput(updateSpaceSchema, input)
  try {
    return await writeSpace(context, principal, id, 'UPDATE', async (tx, current) => {
      const next = {
        name: request.name ?? current.name,
        public_read: request.publicRead ?? current.public_read,
        labels: nextLabels(current.labels, request),
        default_ocr: request.defaultOcr ?? current.default_ocr,
      }
      if (sameColumns(current as never, next, ['name', 'public_read', 'labels', 'default_ocr']))
        return withEmbedders(tx, current)
      const updated = await spacesSql.updateSpace(tx, id, {
        ...next,
        updated_at: nowMillis(),
        updated_by: principal.userId,
      })
      return withEmbedders(tx, updated)
    })
  } catch (error) {
    throw spaceConflict(error, id, request.name)
  }
}

/** Its memories, chunks and vectors go with it. */
export async function deleteSpace(context: DomainContext, call: CallContext, spaceId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, spaceId, 'spaceId')
  await writeSpace(context, principal, id, 'DELETE', async (tx) => {
    await spacesSql.deleteSpace(tx, id)
  })
}

/**
 * Adds an embedder to a space that may already hold memories: it starts BACKFILLING and
 * a job writes its vectors for them; it is READY at once when there is nothing to fill.
 */
export async function addSpaceEmbedder(
  context: DomainContext,
  call: CallContext,
  spaceId: unknown,
  input: unknown,
): Promise<Space> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, spaceId, 'spaceId')
  const request = parseInput(addEmbedderSchema, input)
  requireVectorStorage(context)
  try {
    const updated = await writeSpace(context, principal, id, 'UPDATE', async (tx, space) => {
      const role = await ownerRole(tx, principal, space.owner_id)
      const embedder = await usableEmbedder(tx, principal, role, space.owner_id, request.embedderId, 'embedderId')
      const position = await spacesSql.nextEmbedderPosition(tx, id)
      if (
        position >= MAX_SPACE_EMBEDDERS &&
        (await spacesSql.listSpaceEmbedders(tx, [id])).length >= MAX_SPACE_EMBEDDERS
      ) {
        throw invalidArgument('embedderId', `a space has at most ${MAX_SPACE_EMBEDDERS} embedders`)
      }
      if (await spacesSql.findSpaceEmbedder(tx, id, embedder.id))
        throw alreadyExists(`embedder ${embedder.id} is already in space ${id}`)
      const total = await chunksSql.countMemoriesMissingVectors(tx, id, embedder.id)
      await joinSpace(tx, id, embedder, position, request.defaultRetrievalWeight ?? DEFAULT_RETRIEVAL_WEIGHT, total)
      if (total > 0)
        await context.jobs.enqueue(tx, SPACE_BACKFILL_JOB, {
          spaceId: id,
          embedderId: embedder.id,
        } satisfies SpaceBackfillPayload as never)
      return withEmbedders(tx, space)
    })
    context.jobs.wake()
    return updated
  } catch (error) {
    throw spaceConflict(error, id, undefined)
  }
}

/** Drops the embedder and its vectors from the space; without its last one, the space searches by keywords only. */
export async function removeSpaceEmbedder(
  context: DomainContext,
  call: CallContext,
  spaceId: unknown,
  input: unknown,
): Promise<Space> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, spaceId, 'spaceId')
  const request = parseInput(removeEmbedderSchema, input)
  return writeSpace(context, principal, id, 'UPDATE', async (tx, space) => {
    const members = await spacesSql.listSpaceEmbedders(tx, [id])
    if (!members.some((member) => member.embedder_id === request.embedderId))
      throw notFound(`embedder ${request.embedderId} in space ${id}`)
    await spacesSql.removeSpaceEmbedder(tx, id, request.embedderId)
    return withEmbedders(tx, space)
  })
}
