import crypto from 'node:crypto'
import { DEFAULT_CHUNKING } from '../chunking/chunking-config.js'
import { conflictOf } from '../db/conflicts.js'
import type { ChunkVector, MemoryChunks, NewChunk } from '../db/sql/chunks.js'
import * as chunksSql from '../db/sql/chunks.js'
import type { EmbedderRow } from '../db/sql/embedders.js'
import type { NewMemoryRow } from '../db/sql/memories.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { SpaceImportRow } from '../db/sql/space-transfer.js'
import * as transferSql from '../db/sql/space-transfer.js'
import type { SpaceEmbedderRow, SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import { MAX_HALFVEC_INDEX_DIMENSIONS, MAX_INDEXED_VECTOR_VALUE } from '../db/vector-storage.js'
import { TEXT_CONTENT_TYPES } from '../documents/document-types.js'
import { AppError, alreadyExists, notFound, toAppError } from '../errors/app-error.js'
import { idSchema } from '../validation/identity.js'
import { DEFAULT_RETRIEVAL_WEIGHT, MAX_CONTENT_BYTES } from '../validation/memory.js'
import { parseInput } from '../validation/parse.js'
import {
  type ExportedEmbedder,
  endLineSchema,
  type HeaderLine,
  headerLineSchema,
  type ImportSpaceRequest,
  importSpaceSchema,
  MAX_IMPORT_LINE_BYTES,
  type MemoryLine,
  memoryLineSchema,
} from '../validation/space-transfer.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { MEMORY_INGEST_JOB, type MemoryIngestPayload } from './job-kinds.js'
import { nowMillis } from './paging.js'
import { hasPermission, type Principal, requireOwnership } from './permissions.js'
import { findAccessibleSpace, requireSpaceAccess, requireVectorStorage } from './space-access.js'
import { type StreamLine, streamLines } from './space-import-lines.js'
import { joinSpace, usableEmbedder } from './spaces.js'

/**
 * POST /v1/spaces:import and SpaceService/ImportSpace: an export (docs/export-format.md) read
 * into a new or an existing space as it streams in. Lines are applied in batches, each in one
 * transaction that also advances the import's row (space_imports), so that a memory is
 * stored whole or not at all and a cut stream is resumed (importId) after its last applied
 * line. A memory keeps its chunks and vectors when every embedder of the space has one of the
 * same fingerprint in the export; otherwise it is stored PENDING and chunked and embedded again.
 */

/** An import and its progress, as GET /v1/imports/{id} answers it. */
export interface SpaceImport {
  importId: string
  spaceId: string
  /** RECEIVING (being applied, or cut: resume it), COMPLETED, FAILED (a line was refused: `error` says which). */
  state: transferSql.SpaceImportState
  linesApplied: number
  memoriesExpected: number
  memoriesImported: number
  memoriesSkipped: number
  memoriesReembedding: number
  chunksImported: number
  vectorsImported: number
  error?: string
  createdAt: number
  updatedAt: number
  createdById: string
}

export function toSpaceImport(row: SpaceImportRow): SpaceImport {
  return {
    importId: row.id,
    spaceId: row.space_id,
    state: row.state,
    linesApplied: row.lines_applied,
    memoriesExpected: row.memories_expected,
    memoriesImported: row.memories_imported,
    memoriesSkipped: row.memories_skipped,
    memoriesReembedding: row.memories_reembedding,
    chunksImported: row.chunks_imported,
    vectorsImported: row.vectors_imported,
    ...(row.error === null ? {} : { error: row.error }),
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
  }
}

/** Only its creator sees an import, or an administrator; anyone else finds none. */
function requireVisibleImport(principal: Principal, row: SpaceImportRow | undefined, id: string): SpaceImportRow {
  if (!row || (row.created_by !== principal.userId && !hasPermission(principal, 'GET_SPACE_ANY')))
    throw notFound(`import ${id}`)
  return row
}

export async function getSpaceImport(
  context: DomainContext,
  call: CallContext,
  importId: unknown,
): Promise<SpaceImport> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, importId, 'importId')
  return toSpaceImport(requireVisibleImport(principal, await transferSql.findImport(context.sql, id), id))
}

/**
 * Chunks (with their vectors) applied in one transaction at most; a larger memory goes alone.
 * The embedded database serves every other request on its one connection, which waits while
 * a transaction holds it: its vectors' HNSW inserts took about 50 ms each there (a 10k-chunk
 * import of 384 dimensions ran at 19 chunks/s), so its batches are small enough to hold the
 * connection for a few seconds, not a minute.
 */
const BATCH_CHUNKS = { postgresql: 1_000, embedded: 64 } as const
const BATCH_MEMORIES = 1_000
const BATCH_CONTENT_BYTES = 16 * 1024 * 1024
/** New ids tried for a memory whose id another writer took between the check and the insert. */
const ID_ATTEMPTS = 3
const MAX_QUOTED_ERROR_LENGTH = 200

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })
/** What a document's text is stored as: its bytes and page images are not in an export. */
const DOCUMENT_TEXT_TYPE = 'text/plain'

/** An error about one line of the stream: its number before the field, in the message and the details. */
function atLine(line: number, error: AppError): AppError {
  return new AppError(
    error.code,
    `line ${line}: ${error.message}`,
    error.details.map((detail) => ({ field: `line ${line}: ${detail.field}`, description: detail.description })),
  )
}

const lineError = (
  line: number,
  field: string,
  description: string,
  code: 'INVALID_ARGUMENT' | 'PAYLOAD_TOO_LARGE' = 'INVALID_ARGUMENT',
) => atLine(line, new AppError(code, `${field}: ${description}`, [{ field, description }]))

function lineInput<Output>(parse: () => Output, line: number): Output {
  try {
    return parse()
  } catch (error) {
    throw error instanceof AppError ? atLine(line, error) : error
  }
}

/** A line as JSON; undefined for an unterminated last line that is not (the stream was cut inside it). */
function parseLine(line: StreamLine): Record<string, unknown> | undefined {
  let text: string
  try {
    text = STRICT_UTF8.decode(line.bytes)
  } catch {
    if (line.unterminated) return undefined
    throw lineError(line.number, 'line', 'is not UTF-8 text')
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    if (line.unterminated) return undefined
    throw lineError(line.number, 'line', `is not JSON (${(error as Error).message.slice(0, MAX_QUOTED_ERROR_LENGTH)})`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw lineError(line.number, 'line', 'must be a JSON object with a kind')
  return value as Record<string, unknown>
}

const fingerprintOf = (embedder: { providerType: string; modelIdentifier: string; dimensionality: number }) =>
  JSON.stringify([embedder.providerType, embedder.modelIdentifier, embedder.dimensionality])

const describeEmbedder = (embedder: ExportedEmbedder) =>
  `${embedder.providerType} "${embedder.modelIdentifier}" with ${embedder.dimensionality} dimensions`

/** Which export vectors the target space keeps: by each of its embedders, the export ref of the same fingerprint. */
interface VectorPlan {
  kept: Array<{ embedderId: string; ref: string }>
  /** Every embedder of the space has its match: a memory with those vectors for every chunk needs no embedding. */
  complete: boolean
}

function vectorPlan(
  header: HeaderLine,
  targets: Array<{ embedder_id: string; provider_type: string; model_identifier: string; dimensionality: number }>,
): VectorPlan {
  const byFingerprint = new Map<string, ExportedEmbedder>()
  for (const embedder of header.embedders) {
    const key = fingerprintOf(embedder)
    if (!byFingerprint.has(key)) byFingerprint.set(key, embedder)
  }
  const kept: VectorPlan['kept'] = []
  for (const target of targets) {
    const match = byFingerprint.get(
      fingerprintOf({
        providerType: target.provider_type,
        modelIdentifier: target.model_identifier,
        dimensionality: target.dimensionality,
      }),
    )
    if (match) kept.push({ embedderId: target.embedder_id, ref: String(match.ref) })
  }
  return { kept, complete: kept.length === targets.length }
}

/** The import's stream as it is applied: where it begins, and the embedders its vectors go to. */
interface Applying {
  row: SpaceImportRow
  space: SpaceRow
  header: HeaderLine
  plan: VectorPlan
}

export async function importSpace(
  context: DomainContext,
  call: CallContext,
  input: unknown,
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<SpaceImport> {
  const principal = await context.authenticate(call)
  const request = parseInput(importSpaceSchema, input)
  requireVectorStorage(context)
  const sql = context.sql
  let resumed: SpaceImportRow | undefined
  let space: SpaceRow | undefined
  if (request.importId !== undefined) {
    resumed = requireVisibleImport(principal, await transferSql.findImport(sql, request.importId), request.importId)
    // Nothing is left to apply: the stream is not read again.
    if (resumed.state === 'COMPLETED') return toSpaceImport(resumed)
    space = requireSpaceAccess(
      principal,
      await spacesSql.findSpace(sql, resumed.space_id),
      'MEMORY',
      'CREATE',
      `space ${resumed.space_id}`,
    )
  } else if (request.spaceId !== undefined) {
    space = await findAccessibleSpace(sql, principal, request.spaceId, 'MEMORY', 'CREATE')
  } else {
    requireOwnership(principal, 'SPACE', 'CREATE', principal.userId)
  }
  // Refused before a byte of the stream is read: the new space's named embedders.
  const named = await Promise.all(
    (request.embedderIds ?? []).map((id, index) =>
      usableEmbedder(sql, principal, principal.role, principal.userId, id, `embedderIds.${index}`),
    ),
  )
  const lines = streamLines(receivedBody(body), MAX_IMPORT_LINE_BYTES)
  // Before the header there is no import to keep: a body that stops is only the transport's error.
  const { header, sha256 } = await readHeader(lines).catch((error: unknown) => {
    throw error instanceof BodyFailure ? error.cause : error
  })
  let applying: Applying
  if (resumed) {
    if (!resumed.header_sha256.equals(sha256))
      throw atLine(
        1,
        new AppError(
          'FAILED_PRECONDITION',
          `this header is not the one import ${resumed.id} began with: resume it with the same export, ` +
            'or start a new import',
        ),
      )
    applying = { row: resumed, space: space!, header, plan: await planFor(context, space!, header) }
  } else if (space) {
    const row = importRow(principal, space.id, header, sha256)
    await transferSql.insertImport(sql, row)
    applying = { row, space, header, plan: await planFor(context, space, header) }
  } else {
    applying = await createSpaceWithImport(context, principal, request, named, header, sha256)
  }
  return new ImportRun(context, principal, applying).run(lines)
}

/** A transport's failure to deliver the body (the client went away, or past the server's body limit). */
class BodyFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('the request body ended early')
  }
}

async function* receivedBody(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* body
  } catch (error) {
    throw new BodyFailure(error)
  }
}

async function readHeader(lines: AsyncGenerator<StreamLine>): Promise<{ header: HeaderLine; sha256: Buffer }> {
  const first = await lines.next()
  if (first.done)
    throw lineError(1, 'line', 'the stream is empty: an export begins with its header line (kind "header")')
  const parsed = parseLine(first.value)
  if (!parsed) throw lineError(1, 'line', 'the stream ended inside its header line')
  if (parsed.kind !== 'header')
    throw lineError(
      1,
      'kind',
      `must be "header": an export begins with its header line, not ${JSON.stringify(parsed.kind)}`,
    )
  const header = lineInput(() => parseInput(headerLineSchema, parsed), 1)
  return { header, sha256: crypto.createHash('sha256').update(first.value.bytes).digest() }
}

async function planFor(context: DomainContext, space: SpaceRow, header: HeaderLine): Promise<VectorPlan> {
  return vectorPlan(header, await spacesSql.listSpaceEmbedderTargets(context.sql, [space.id]))
}

function importRow(principal: Principal, spaceId: string, header: HeaderLine, sha256: Buffer): SpaceImportRow {
  const now = nowMillis()
  return {
    id: crypto.randomUUID(),
    space_id: spaceId,
    state: 'RECEIVING',
    header_sha256: sha256,
    // The header is applied with the row.
    lines_applied: 1,
    chunks_read: 0,
    memories_expected: header.memoryCount,
    memories_imported: 0,
    memories_skipped: 0,
    memories_reembedding: 0,
    chunks_imported: 0,
    vectors_imported: 0,
    error: null,
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
    updated_by: principal.userId,
  }
}

/**
 * The new space, with the export's settings and labels, owned by the caller, and the import's
 * row, in one transaction. Its embedders are those named, or for each embedder of the export
 * one the caller may use with the same fingerprint (its own first).
 */
async function createSpaceWithImport(
  context: DomainContext,
  principal: Principal,
  request: ImportSpaceRequest,
  named: EmbedderRow[],
  header: HeaderLine,
  sha256: Buffer,
): Promise<Applying> {
  const sql = context.sql
  const language = header.space.textSearchLanguage ?? 'english'
  const languages = await spacesSql.textSearchLanguages(sql)
  if (!languages.includes(language))
    throw lineError(
      1,
      'space.textSearchLanguage',
      `this database has no text search configuration "${language}"; it has ${languages.join(', ')}`,
    )
  const weightOf = (fingerprint: string) =>
    header.embedders.find((embedder) => fingerprintOf(embedder) === fingerprint)?.defaultRetrievalWeight ??
    DEFAULT_RETRIEVAL_WEIGHT
  const chosen: Array<{ embedder: EmbedderRow; weight: number }> = []
  if (request.embedderIds !== undefined) {
    for (const embedder of named)
      chosen.push({
        embedder,
        weight: weightOf(
          fingerprintOf({
            providerType: embedder.provider_type,
            modelIdentifier: embedder.model_identifier,
            dimensionality: embedder.dimensionality,
          }),
        ),
      })
  } else {
    const mayUseAny = hasPermission(principal, 'GET_EMBEDDER_ANY')
    for (const [index, exported] of header.embedders.entries()) {
      const match = await transferSql.findEmbedderByFingerprint(sql, {
        ownerId: principal.userId,
        ownerMayUseAny: mayUseAny,
        providerType: exported.providerType,
        modelIdentifier: exported.modelIdentifier,
        dimensionality: exported.dimensionality,
      })
      if (!match)
        throw lineError(
          1,
          `embedders.${index}`,
          `no embedder you may use is ${describeEmbedder(exported)}: register one (POST /v1/embedders), ` +
            "or name the new space's embedders with embedderIds (its memories are then embedded again)",
        )
      if (!chosen.some((entry) => entry.embedder.id === match.id))
        chosen.push({ embedder: match, weight: exported.defaultRetrievalWeight ?? DEFAULT_RETRIEVAL_WEIGHT })
    }
  }
  const now = nowMillis()
  const space: SpaceRow = {
    id: crypto.randomUUID(),
    owner_id: principal.userId,
    name: request.newSpaceName!,
    labels: header.space.labels,
    default_chunking: (header.space.defaultChunkingConfig ?? DEFAULT_CHUNKING) as Record<string, unknown>,
    public_read: header.space.publicRead ?? false,
    text_search_language: language,
    default_ocr: header.space.defaultOcr ?? 'AUTO',
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
    updated_by: principal.userId,
  }
  const row = importRow(principal, space.id, header, sha256)
  let members: SpaceEmbedderRow[]
  try {
    members = (await sql.begin(async (tx) => {
      await spacesSql.insertSpace(tx, space)
      const joined: SpaceEmbedderRow[] = []
      for (const [position, { embedder, weight }] of chosen.entries())
        joined.push(await joinSpace(tx, space.id, embedder, position, weight, 0))
      await transferSql.insertImport(tx, row)
      return joined
    })) as SpaceEmbedderRow[]
  } catch (error) {
    if (conflictOf(error) === 'duplicate-space-name')
      throw alreadyExists(`you already have a space named "${space.name}": choose another newSpaceName`)
    if (conflictOf(error) === 'missing-reference') throw notFound('embedder (deleted meanwhile)')
    throw error
  }
  const targets = members.map((member) => {
    const { embedder } = chosen.find((entry) => entry.embedder.id === member.embedder_id)!
    return { ...embedder, embedder_id: embedder.id }
  })
  return { row, space, header, plan: vectorPlan(header, targets) }
}

/** A memory line ready to store: its row, and its chunks and vectors unless it is embedded again. */
interface PreparedMemory {
  row: NewMemoryRow
  sha256Hex: string
  /** Empty when the memory is stored PENDING and embedded again. */
  chunks: NewChunk[]
  vectors: ChunkVector[]
}

/** Consecutive lines applied in one transaction. */
interface Batch {
  memories: PreparedMemory[]
  lines: number
  /** The chunks of its memory lines, stored or not: what the end line's chunkCount counts. */
  chunksRead: number
  chunks: number
  contentBytes: number
  /** It holds the end line. */
  completes: boolean
}

const emptyBatch = (): Batch => ({
  memories: [],
  lines: 0,
  chunksRead: 0,
  chunks: 0,
  contentBytes: 0,
  completes: false,
})

/** Thrown while reading when the stream ended without its end line. */
class StreamCut extends Error {
  constructor(readonly lastLine: number) {
    super('the stream ended without its end line')
  }
}

class ImportRun {
  readonly #context: DomainContext
  readonly #principal: Principal
  readonly #applying: Applying
  readonly #byRef: Map<string, ExportedEmbedder>
  readonly #batchChunks: number
  /** The import as its last applied batch left it. */
  #row: SpaceImportRow
  /** Lines of the batches handed to the database so far. */
  #linesQueued: number
  /** The chunks of every memory line so far, from the stream's first line. */
  #chunksSeen: number
  #batch = emptyBatch()
  /** The batch being applied; the next waits for it. */
  #inFlight: Promise<void> | undefined

  constructor(context: DomainContext, principal: Principal, applying: Applying) {
    this.#context = context
    this.#principal = principal
    this.#applying = applying
    this.#row = applying.row
    this.#linesQueued = applying.row.lines_applied
    this.#chunksSeen = applying.row.chunks_read
    this.#byRef = new Map(applying.header.embedders.map((embedder) => [String(embedder.ref), embedder]))
    this.#batchChunks = BATCH_CHUNKS[context.database.engine]
  }

  async run(lines: AsyncGenerator<StreamLine>): Promise<SpaceImport> {
    try {
      await this.#read(lines)
      await this.#submit()
      await this.#settle()
      return toSpaceImport(this.#row)
    } catch (error) {
      throw await this.#stopped(error)
    } finally {
      void lines.return(undefined).catch(() => {})
    }
  }

  /** Records why the import stopped and answers the error to give the client. */
  async #stopped(error: unknown): Promise<unknown> {
    const cut = error instanceof StreamCut || error instanceof BodyFailure
    try {
      // A cut stream's complete lines are applied: the resume starts after them.
      if (cut) await this.#submit()
      await this.#settle()
    } catch (applyError) {
      error = applyError
    }
    const id = this.#row.id
    const resume = `send the whole stream again with importId=${id} to resume it`
    const progress = () => `import ${id} has ${this.#row.lines_applied} lines applied`
    if (error instanceof StreamCut) {
      const description = `the stream ended after line ${error.lastLine} without its end line (it was cut)`
      const message = `${description}: ${progress()} and stays RECEIVING; ${resume}`
      await this.#record('RECEIVING', message)
      return atLine(
        error.lastLine + 1,
        new AppError('INVALID_ARGUMENT', `line: ${message}`, [{ field: 'line', description }]),
      )
    }
    if (error instanceof BodyFailure) {
      const cause = toAppError(error.cause)
      const message = `${cause.message}: ${progress()} and stays RECEIVING; ${resume}`
      await this.#record('RECEIVING', message)
      return new AppError(cause.code, message, cause.details)
    }
    if (error instanceof ConcurrentResume) return error.appError
    const appError = toAppError(error)
    if (appError.code === 'INTERNAL' || appError.code === 'UNAVAILABLE') {
      await this.#record('RECEIVING', `the import stopped on a server error (${appError.message}); ${resume}`)
      return error
    }
    await this.#record('FAILED', appError.message)
    return new AppError(
      appError.code,
      `${appError.message} (nothing of its batch was applied; ${progress()} and is FAILED: once the stream is ` +
        `corrected, ${resume})`,
      appError.details,
    )
  }

  async #record(state: 'RECEIVING' | 'FAILED', message: string): Promise<void> {
    try {
      const row = await transferSql.recordImportStop(
        this.#context.sql,
        this.#row.id,
        state,
        message,
        this.#principal.userId,
      )
      if (row) this.#row = row
    } catch (error) {
      this.#context.log.warn('an import could not record why it stopped', {
        importId: this.#row.id,
        error: error as Error,
      })
    }
  }

  async #read(lines: AsyncGenerator<StreamLine>): Promise<void> {
    const skipThrough = this.#row.lines_applied
    let endLine: number | undefined
    let lastLine = 1
    for await (const line of lines) {
      lastLine = line.number
      // A resumed stream's lines applied before.
      if (line.number <= skipThrough) continue
      if (endLine !== undefined)
        throw lineError(line.number, 'line', `nothing may follow the end line (line ${endLine})`)
      const parsed = parseLine(line)
      if (!parsed) throw new StreamCut(line.number - 1)
      switch (parsed.kind) {
        case 'memory':
          await this.#add(this.#prepare(parsed, line.number))
          break
        case 'end':
          this.#checkEnd(parsed, line.number)
          this.#batch.lines++
          this.#batch.completes = true
          endLine = line.number
          break
        case 'header':
          throw lineError(line.number, 'kind', 'a second header: a stream holds one export')
        case 'error': {
          const reported = (parsed.error as { message?: unknown } | undefined)?.message
          throw lineError(
            line.number,
            'kind',
            `the export failed here (${String(reported).slice(0, MAX_QUOTED_ERROR_LENGTH)}) and is incomplete: export the space again`,
          )
        }
        default:
          throw lineError(
            line.number,
            'kind',
            `must be "memory" or "end" (or "header" on line 1), not ${JSON.stringify(parsed.kind)?.slice(0, MAX_QUOTED_ERROR_LENGTH)}`,
          )
      }
    }
    if (endLine === undefined) throw new StreamCut(lastLine)
  }

  #checkEnd(parsed: Record<string, unknown>, line: number): void {
    const end = lineInput(() => parseInput(endLineSchema, parsed), line)
    // Every line between the header and this one is a memory line.
    const memoryLines = line - 2
    if (end.memoryCount !== memoryLines)
      throw lineError(line, 'memoryCount', `is ${end.memoryCount}, but the stream holds ${memoryLines} memory lines`)
    if (end.chunkCount !== this.#chunksSeen)
      throw lineError(
        line,
        'chunkCount',
        `is ${end.chunkCount}, but the stream's memory lines hold ${this.#chunksSeen} chunks`,
      )
  }

  /** Adds a memory line to the open batch, handing the batch over first when the line would overflow it. */
  async #add(prepared: { memory: PreparedMemory; chunksInLine: number }): Promise<void> {
    const { memory, chunksInLine } = prepared
    const batch = this.#batch
    const bytes = Buffer.byteLength(memory.row.content)
    if (
      batch.memories.length > 0 &&
      (batch.chunks + memory.chunks.length > this.#batchChunks ||
        batch.memories.length >= BATCH_MEMORIES ||
        batch.contentBytes + bytes > BATCH_CONTENT_BYTES)
    )
      await this.#submit()
    const open = this.#batch
    open.memories.push(memory)
    open.lines++
    open.chunksRead += chunksInLine
    open.chunks += memory.chunks.length
    open.contentBytes += bytes
    this.#chunksSeen += chunksInLine
  }

  /** Hands the open batch to the database once the one before is applied (its failure is thrown here). */
  async #submit(): Promise<void> {
    const batch = this.#batch
    if (batch.lines === 0) return
    this.#batch = emptyBatch()
    await this.#settle()
    const linesBefore = this.#linesQueued
    this.#linesQueued += batch.lines
    const applying = this.#apply(batch, linesBefore)
    // Observed by the next submit or settle; meanwhile its failure is not unhandled.
    applying.catch(() => {})
    this.#inFlight = applying
  }

  async #settle(): Promise<void> {
    const inFlight = this.#inFlight
    this.#inFlight = undefined
    await inFlight
  }

  /** The memory line checked and turned into rows; refused as a whole, naming the line and the field. */
  #prepare(parsed: Record<string, unknown>, line: number): { memory: PreparedMemory; chunksInLine: number } {
    const input = lineInput(() => parseInput(memoryLineSchema, parsed), line)
    const { memory, chunks } = input
    const content = memory.originalContent
    if (Buffer.byteLength(content) > MAX_CONTENT_BYTES)
      throw lineError(line, 'memory.originalContent', `is larger than ${MAX_CONTENT_BYTES} bytes`, 'PAYLOAD_TOO_LARGE')
    if (content.trim().length === 0) throw lineError(line, 'memory.originalContent', 'must not be empty')
    const isText = TEXT_CONTENT_TYPES.includes(memory.contentType)
    const sha256 = crypto.createHash('sha256').update(content).digest()
    const sha256Hex = sha256.toString('hex')
    // A document's hash is of its original bytes, which an export does not carry: only a text's can be checked.
    if (isText && sha256Hex !== memory.originalContentSha256)
      throw lineError(
        line,
        'memory.originalContentSha256',
        'is not the SHA-256 of originalContent: the line was changed or corrupted',
      )
    if (memory.contentType === 'application/json') {
      try {
        JSON.parse(content)
      } catch {
        throw lineError(line, 'memory.originalContent', 'is not valid JSON, yet contentType is application/json')
      }
    }
    this.#checkChunks(input, line)
    const plan = this.#applying.plan
    const keep =
      plan.complete &&
      chunks.length > 0 &&
      chunks.every((chunk) => plan.kept.every(({ ref }) => chunk.vectors?.[ref] !== undefined))
    const newChunks: NewChunk[] = []
    const vectors: ChunkVector[] = []
    if (keep) {
      for (const chunk of chunks) {
        const chunkId = crypto.randomUUID()
        newChunks.push({
          id: chunkId,
          chunk_index: chunk.chunkIndex,
          text: chunk.text,
          start_offset: chunk.startOffset,
          end_offset: chunk.endOffset,
          source: chunk.source ?? null,
          embedding_truncation: null,
        })
        for (const { embedderId, ref } of plan.kept)
          vectors.push({ chunkId, embedderId, embedding: chunk.vectors![ref] as number[] })
      }
    }
    const row: NewMemoryRow = {
      id: memory.memoryId,
      space_id: this.#applying.space.id,
      content,
      content_type: isText ? memory.contentType : DOCUMENT_TEXT_TYPE,
      content_sha256: sha256,
      metadata: memory.metadata,
      chunking: memory.chunkingConfig as Record<string, unknown>,
      status: keep ? 'COMPLETED' : 'PENDING',
      processing_error: null,
      chunk_count: newChunks.length,
      created_at: new Date(memory.createdAt),
      updated_at: new Date(memory.updatedAt),
      created_by: this.#principal.userId,
      updated_by: this.#principal.userId,
      content_id: null,
      file_name: memory.fileName ?? null,
      content_bytes: null,
      document_options: null,
      extraction: null,
      version: memory.version,
      valid_until: memory.validUntil === undefined ? null : new Date(memory.validUntil),
      pending_content_sha256: null,
    }
    return { memory: { row, sha256Hex, chunks: newChunks, vectors }, chunksInLine: chunks.length }
  }

  /** Chunks in order within the content; every vector of an embedder the header names, of its dimensions. */
  #checkChunks({ memory, chunks }: MemoryLine, line: number): void {
    const length = memory.originalContent.length
    for (const [index, chunk] of chunks.entries()) {
      const field = `chunks.${index}`
      if (chunk.chunkIndex !== index)
        throw lineError(line, `${field}.chunkIndex`, `must be ${index}: chunks are listed in order, from 0`)
      if (chunk.startOffset > chunk.endOffset || chunk.endOffset > length)
        throw lineError(
          line,
          `${field}.endOffset`,
          `must be from startOffset (${chunk.startOffset}) to the content's length (${length})`,
        )
      if (!chunk.vectors) continue
      for (const [ref, vector] of Object.entries(chunk.vectors))
        this.#checkVector(line, `${field}.vectors.${ref}`, ref, vector)
    }
  }

  /** By hand, value by value: a schema per value cost more than storing the vector. */
  #checkVector(line: number, field: string, ref: string, vector: unknown): void {
    const embedder = this.#byRef.get(ref)
    if (!embedder)
      throw lineError(
        line,
        field,
        `names no embedder of the header (its refs: ${[...this.#byRef.keys()].join(', ') || 'none'})`,
      )
    if (!Array.isArray(vector)) throw lineError(line, field, 'must be an array of numbers')
    if (vector.length !== embedder.dimensionality)
      throw lineError(
        line,
        field,
        `has ${vector.length} values, but embedder ref ${ref} (${describeEmbedder(embedder)}) has ${embedder.dimensionality}`,
      )
    // Half precision holds up to MAX_INDEXED_VECTOR_VALUE: the vector could not enter its embedder's index.
    const bound = embedder.dimensionality <= MAX_HALFVEC_INDEX_DIMENSIONS ? MAX_INDEXED_VECTOR_VALUE : Number.MAX_VALUE
    for (let index = 0; index < vector.length; index++) {
      const value = vector[index]
      if (typeof value !== 'number' || !(Math.abs(value) <= bound))
        throw lineError(line, `${field}.${index}`, `must be a number from -${bound} to ${bound}`)
    }
  }

  /**
   * One batch in one transaction: the import's row locked first (a second stream resuming it
   * waits, then finds the lines applied), the memories of a content already in the space
   * skipped, those whose id is taken given a new one, then the memories, their chunks and
   * vectors, the ingest jobs of those embedded again, and the import's progress.
   */
  async #apply(batch: Batch, linesBefore: number): Promise<void> {
    const context = this.#context
    const spaceId = this.#applying.space.id
    const by = this.#principal.userId
    const counts = { imported: 0, skipped: 0, reembedding: 0, chunks: 0, vectors: 0 }
    const row = await context.sql.begin(async (tx) => {
      const [locked, existing, taken] = await Promise.all([
        transferSql.lockImport(tx, this.#row.id),
        transferSql.contentsInSpace(tx, spaceId, [...new Set(batch.memories.map((memory) => memory.sha256Hex))]),
        transferSql.takenMemoryIds(tx, [...new Set(batch.memories.map((memory) => memory.row.id))]),
      ])
      if (!locked || locked.state === 'COMPLETED' || locked.lines_applied !== linesBefore)
        throw new ConcurrentResume(this.#row.id, locked?.lines_applied ?? 0)
      const seen = new Set(existing)
      const usedIds = new Set(taken)
      const stored: PreparedMemory[] = []
      for (const memory of batch.memories) {
        if (seen.has(memory.sha256Hex)) {
          counts.skipped++
          continue
        }
        seen.add(memory.sha256Hex)
        // The exported id when it is free in this database, else a new one.
        if (usedIds.has(memory.row.id)) memory.row.id = crypto.randomUUID()
        usedIds.add(memory.row.id)
        stored.push(memory)
      }
      await insertAll(
        tx,
        stored.map((memory) => memory.row),
      )
      const completed: MemoryChunks[] = []
      const reembedded: MemoryIngestPayload[] = []
      for (const memory of stored) {
        if (memory.row.status === 'COMPLETED')
          completed.push({ memoryId: memory.row.id, spaceId, chunks: memory.chunks, vectors: memory.vectors })
        else reembedded.push({ memoryId: memory.row.id, spaceId })
        counts.chunks += memory.chunks.length
        counts.vectors += memory.vectors.length
      }
      counts.imported = stored.length
      counts.reembedding = reembedded.length
      await chunksSql.replaceChunks(tx, completed)
      if (reembedded.length > 0) await context.jobs.enqueueMany(tx, MEMORY_INGEST_JOB, reembedded)
      return transferSql.advanceImport(
        tx,
        this.#row.id,
        linesBefore,
        {
          lines: batch.lines,
          chunksRead: batch.chunksRead,
          memoriesImported: counts.imported,
          memoriesSkipped: counts.skipped,
          memoriesReembedding: counts.reembedding,
          chunksImported: counts.chunks,
          vectorsImported: counts.vectors,
          completes: batch.completes,
        },
        by,
      )
    })
    if (!row) throw new ConcurrentResume(this.#row.id, linesBefore)
    this.#row = row as SpaceImportRow
    // Their ingest starts while the rest of the stream is applied.
    if (counts.reembedding > 0) context.jobs.wake()
  }
}

/** Another request is applying the same import (a resume sent twice). */
class ConcurrentResume extends Error {
  readonly appError: AppError
  constructor(importId: string, linesApplied: number) {
    super('concurrent resume')
    this.appError = new AppError(
      'FAILED_PRECONDITION',
      `import ${importId} is being applied by another request (${linesApplied} lines applied): ` +
        'wait for it, then look at GET /v1/imports/' +
        importId,
    )
  }
}

/** The memories, each under its own id: one whose id another writer took meanwhile gets a new one. */
async function insertAll(tx: Parameters<typeof memoriesSql.insertMemoriesSkippingTakenIds>[0], rows: NewMemoryRow[]) {
  let pending = rows
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === ID_ATTEMPTS)
      throw new Error(`memory ids kept being taken: ${pending.map((row) => row.id).join(', ')}`)
    const stored = await memoriesSql.insertMemoriesSkippingTakenIds(tx, pending)
    pending = pending.filter((row) => !stored.has(row.id))
    for (const row of pending) row.id = crypto.randomUUID()
  }
}
