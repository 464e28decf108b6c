import crypto from 'node:crypto'
import * as documentsSql from '../db/sql/documents.js'
import * as memoriesSql from '../db/sql/memories.js'
import type { SpaceRow } from '../db/sql/spaces.js'
import {
  canonicalContentType,
  DOCUMENT_CONTENT_TYPES,
  DOCX_CONTENT_TYPE,
  documentKindOf,
  OCTET_STREAM_CONTENT_TYPE,
  PPTX_CONTENT_TYPE,
  TEXT_CONTENT_TYPES,
  XLSX_CONTENT_TYPE,
  ZIP_CONTENT_TYPE,
} from '../documents/document-types.js'
import { DEFAULT_PAGE_IMAGE_DPI } from '../documents/extracted-document.js'
import { imageDimensions } from '../documents/image-dimensions.js'
import { declaredMatchesSniffed, sniffContentType } from '../documents/sniff.js'
import { AppError, invalidArgument, notFound } from '../errors/app-error.js'
import { pageNumberSchema, type UploadMemoryRequest, uploadMemorySchema } from '../validation/documents.js'
import { idSchema } from '../validation/identity.js'
import { type ContentType, MAX_CONTENT_BYTES } from '../validation/memory.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { MEMORY_EXTRACT_JOB } from './job-kinds.js'
import {
  type CreateMemoryResult,
  createMemory,
  findAccessibleMemory,
  type MemoryContent,
  pendingMemoryRow,
  storeMemory,
} from './memories.js'
import { nowMillis } from './paging.js'
import type { Principal } from './permissions.js'
import { findAccessibleSpace, requireVectorStorage } from './space-access.js'

/**
 * Documents: uploads streamed into the database part by part, their type sniffed from their
 * first bytes, and the original bytes and rendered pages read back. Extraction itself is a
 * job (src/jobs/handlers/memory-extract.ts).
 */

const OOXML_TYPES = [DOCX_CONTENT_TYPE, PPTX_CONTENT_TYPE, XLSX_CONTENT_TYPE]

/** The bytes an upload is stored in, per row: one part is all an upload holds in memory at once. */
export const CONTENT_PART_BYTES = 2 * 1024 * 1024
/** Enough of the start of a file for every format's magic bytes and an image's dimensions (a JPEG's may follow its EXIF). */
const SNIFF_HEAD_BYTES = 64 * 1024
/** The end of a ZIP holds its directory, which says whether it is a Word, PowerPoint or Excel file. */
const SNIFF_TAIL_BYTES = 1024 * 1024

/** What the transports hand over: the fields of the create request, and the bytes as they arrive. */
export interface DocumentUpload {
  fields: unknown
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>
}

/** Reads an upload's body in order, with a look at its first bytes before any is stored. */
class UploadBody {
  readonly #iterator: AsyncIterator<Uint8Array>
  readonly #maxBytes: number
  #pending: Buffer[] = []
  #pendingBytes = 0
  #received = 0
  #done = false

  constructor(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number) {
    this.#iterator = Symbol.asyncIterator in body ? body[Symbol.asyncIterator]() : toAsync(body[Symbol.iterator]())
    this.#maxBytes = maxBytes
  }

  get received(): number {
    return this.#received
  }

  /** Up to `bytes` from the start (fewer only when the body is shorter), kept to be read again by parts(). */
  async head(bytes: number): Promise<Buffer> {
    while (this.#pendingBytes < bytes && (await this.#pull())) {}
    return Buffer.concat(this.#pending).subarray(0, bytes)
  }

  /** The rest of the body in parts of `partBytes` (the last may be shorter). */
  async *parts(partBytes: number): AsyncGenerator<Buffer> {
    for (;;) {
      while (this.#pendingBytes < partBytes && (await this.#pull())) {}
      if (this.#pendingBytes === 0) return
      const joined = Buffer.concat(this.#pending)
      const part = joined.subarray(0, partBytes)
      const rest = joined.subarray(partBytes)
      this.#pending = rest.length > 0 ? [Buffer.from(rest)] : []
      this.#pendingBytes = rest.length
      yield part
    }
  }

  async #pull(): Promise<boolean> {
    if (this.#done) return false
    const next = await this.#iterator.next()
    if (next.done) {
      this.#done = true
      return false
    }
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength)
    this.#received += chunk.length
    if (this.#received > this.#maxBytes) throw uploadTooLarge(this.#maxBytes)
    this.#pending.push(chunk)
    this.#pendingBytes += chunk.length
    return true
  }

  /** Stops reading (the transport then stops receiving). */
  async cancel(): Promise<void> {
    if (!this.#done) await this.#iterator.return?.()
  }
}

function toAsync(iterator: Iterator<Uint8Array>): AsyncIterator<Uint8Array> {
  return {
    next: async () => iterator.next(),
    return: async () => iterator.return?.() ?? { done: true, value: undefined },
  }
}

function uploadTooLarge(maxBytes: number): AppError {
  const description = `is larger than the upload limit of ${maxBytes} bytes (--max-upload-mb)`
  return new AppError('PAYLOAD_TOO_LARGE', `content: ${description}`, [{ field: 'content', description }])
}

function unsupportedType(message: string): AppError {
  return new AppError('UNSUPPORTED_MEDIA_TYPE', message, [{ field: 'contentType', description: message }])
}

/**
 * The type the bytes are taken as: the declared one when they agree with it, the sniffed one
 * when none is declared. A ZIP whose first bytes do not yet say which Office format it is
 * stays ZIP_CONTENT_TYPE until its end is read (storeDocument).
 */
function effectiveContentType(declared: string | undefined, sniffedHead: string | undefined): string {
  const sniffed = sniffedHead ?? OCTET_STREAM_CONTENT_TYPE
  const claimed = declared === undefined ? OCTET_STREAM_CONTENT_TYPE : canonicalContentType(declared)
  if (sniffed === ZIP_CONTENT_TYPE && (claimed === OCTET_STREAM_CONTENT_TYPE || OOXML_TYPES.includes(claimed)))
    return claimed === OCTET_STREAM_CONTENT_TYPE ? ZIP_CONTENT_TYPE : claimed
  if (!declaredMatchesSniffed(claimed, sniffed))
    throw unsupportedType(`the content was declared ${claimed}, but its bytes are ${sniffed}`)
  const effective = claimed === OCTET_STREAM_CONTENT_TYPE ? sniffed : claimed
  if (!TEXT_CONTENT_TYPES.includes(effective) && !documentKindOf(effective))
    throw unsupportedType(
      `${effective} is not a type memsvc reads; it reads ${[...TEXT_CONTENT_TYPES, ...DOCUMENT_CONTENT_TYPES].join(', ')}`,
    )
  return effective
}

/** A text upload is a text memory, created as POST /v1/memories creates one. */
async function createTextMemory(
  context: DomainContext,
  call: CallContext,
  request: UploadMemoryRequest,
  contentType: string,
  body: UploadBody,
): Promise<CreateMemoryResult> {
  const pieces: Buffer[] = []
  for await (const part of body.parts(CONTENT_PART_BYTES)) {
    if (body.received > MAX_CONTENT_BYTES) {
      const description = `is larger than ${MAX_CONTENT_BYTES} bytes, the limit for ${contentType}`
      throw new AppError('PAYLOAD_TOO_LARGE', `content: ${description}`, [{ field: 'content', description }])
    }
    pieces.push(Buffer.from(part))
  }
  return createMemory(context, call, {
    ...request,
    contentType,
    originalContentB64: Buffer.concat(pieces).toString('base64'),
  })
}

/** OCR in a language this server has no model for would fail the document later: refused at once instead. */
function requireOcrLanguages(context: DomainContext, wanted: string[] | undefined): void {
  if (!wanted) return
  const available = context.documentLimits.ocrLanguages()
  const missing = wanted.filter((language) => !available.includes(language))
  if (missing.length === 0) return
  throw invalidArgument(
    'ocrLanguages',
    `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed on this server (it reads ` +
      `${available.join(', ')}); add a language with memsvc model add-ocr-language`,
  )
}

/** The image's size is known from its header: a huge one is refused before its bytes are stored. */
function checkImageSize(head: Buffer, maxPixels: number): void {
  const size = imageDimensions(head)
  if (!size || size.width * size.height <= maxPixels) return
  const description =
    `is an image of ${size.width} × ${size.height} pixels (${Math.round((size.width * size.height) / 1e6)} MP); ` +
    `the limit is ${Math.round(maxPixels / 1e6)} MP`
  throw new AppError('PAYLOAD_TOO_LARGE', `content: ${description}`, [{ field: 'content', description }])
}

interface StoredBytes {
  sha256: Buffer
  bytes: number
  /** The last SNIFF_TAIL_BYTES, for a ZIP's directory. */
  tail: Buffer
}

/** Streams the body into content parts under `contentId`, hashing it as it goes. */
async function storeParts(context: DomainContext, contentId: string, body: UploadBody): Promise<StoredBytes> {
  const hash = crypto.createHash('sha256')
  let tail = Buffer.alloc(0)
  let index = 0
  let bytes = 0
  for await (const part of body.parts(CONTENT_PART_BYTES)) {
    hash.update(part)
    bytes += part.length
    tail = Buffer.concat([tail, part]).subarray(-SNIFF_TAIL_BYTES)
    await documentsSql.insertContentPart(context.sql, contentId, index++, part)
  }
  return { sha256: hash.digest(), bytes, tail: Buffer.from(tail) }
}

/** How the document is extracted: the request's options over the space's OCR mode. */
function documentOptionsOf(request: UploadMemoryRequest, space: SpaceRow): Record<string, unknown> {
  return {
    ocr: request.ocr ?? space.default_ocr ?? 'AUTO',
    extractPageImages: request.extractPageImages ?? false,
    pageImageDpi: request.pageImageDpi ?? DEFAULT_PAGE_IMAGE_DPI,
    ocrLanguages: request.ocrLanguages ?? ['eng'],
  }
}

/**
 * POST /v1/memories and gRPC CreateMemory: a text memory as ever, or, when the base64 content
 * is a document (its contentType says so, or application/octet-stream and its bytes do), the
 * same as an upload of those bytes.
 */
export async function createMemoryOrDocument(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<CreateMemoryResult> {
  const fields = input as { contentType?: unknown; originalContentB64?: unknown } | null
  const declared = typeof fields?.contentType === 'string' ? canonicalContentType(fields.contentType) : undefined
  const isDocument =
    declared !== undefined && (documentKindOf(declared) !== undefined || declared === OCTET_STREAM_CONTENT_TYPE)
  if (!isDocument || typeof fields?.originalContentB64 !== 'string') return createMemory(context, call, input)
  const { originalContentB64, ...uploadFields } = fields as Record<string, unknown>
  const bytes = Buffer.from(originalContentB64 as string, 'base64')
  return uploadMemory(context, call, { fields: uploadFields, body: oneChunk(bytes) })
}

async function* oneChunk(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes
}

/**
 * POST /v1/memories with a document body (raw or multipart), gRPC UploadMemory, or a create
 * whose base64 content is a document: the bytes are sniffed, streamed into the database,
 * and the memory is stored PENDING with its extraction job. Nothing is left behind by an
 * upload refused or cut off: its parts are removed (and swept, should the process die).
 */
export async function uploadMemory(
  context: DomainContext,
  call: CallContext,
  upload: DocumentUpload,
): Promise<CreateMemoryResult> {
  const principal = await context.authenticate(call)
  const request = parseInput(uploadMemorySchema, upload.fields)
  requireVectorStorage(context)
  const space = await findAccessibleSpace(context.sql, principal, request.spaceId, 'MEMORY', 'CREATE')
  requireOcrLanguages(context, request.ocrLanguages)
  const body = new UploadBody(upload.body, context.documentLimits.maxUploadBytes)
  try {
    const head = await body.head(SNIFF_HEAD_BYTES)
    if (head.length === 0) throw invalidArgument('content', 'must not be empty')
    const contentType = effectiveContentType(request.contentType, sniffContentType(head))
    if (TEXT_CONTENT_TYPES.includes(contentType))
      return await createTextMemory(context, call, request, contentType, body)
    if (documentKindOf(contentType) === 'image') checkImageSize(head, context.documentLimits.maxImagePixels)
    return await storeDocument(context, call, principal, request, space, { contentType, head }, body)
  } finally {
    await body.cancel()
  }
}

async function storeDocument(
  context: DomainContext,
  call: CallContext,
  principal: Principal,
  request: UploadMemoryRequest,
  space: SpaceRow,
  sniffed: { contentType: string; head: Buffer },
  body: UploadBody,
): Promise<CreateMemoryResult> {
  const head = sniffed.head
  let contentType = sniffed.contentType
  const contentId = crypto.randomUUID()
  let keepParts = false
  try {
    const stored = await storeParts(context, contentId, body)
    // Only the directory at a ZIP's end tells a Word file from a PowerPoint or Excel one.
    if (contentType === ZIP_CONTENT_TYPE || OOXML_TYPES.includes(contentType)) {
      const sniffedWhole = sniffContentType(head, stored.tail) ?? ZIP_CONTENT_TYPE
      if (!OOXML_TYPES.includes(sniffedWhole))
        throw unsupportedType(
          `${sniffedWhole} is not a type memsvc reads, unless it is a Word, PowerPoint or Excel file`,
        )
      if (contentType !== ZIP_CONTENT_TYPE && sniffedWhole !== contentType)
        throw unsupportedType(`the content was declared ${contentType}, but its bytes are ${sniffedWhole}`)
      contentType = sniffedWhole
    }
    // A client that went away before its upload ended (a cancelled gRPC stream ends like a finished one) stores nothing.
    if (call.signal?.aborted) throw new AppError('UNAVAILABLE', 'the client cancelled the upload before it ended')
    const now = nowMillis()
    const row = pendingMemoryRow(principal, space, request, now, {
      content: '',
      content_id: contentId,
      content_type: contentType,
      content_sha256: stored.sha256,
      file_name: request.fileName ?? null,
      content_bytes: stored.bytes,
      document_options: documentOptionsOf(request, space),
    })
    const result = await context.sql.begin((tx) =>
      storeMemory(context, tx, row, { dedupe: request.dedupe === true, firstJob: MEMORY_EXTRACT_JOB }),
    )
    keepParts = result.created
    context.jobs.wake()
    return result
  } finally {
    if (!keepParts) await documentsSql.deleteContentParts(context.sql, contentId).catch(() => {})
  }
}

/** The original bytes of a memory, as stored: a document's parts in order, or a text memory's UTF-8. */
export interface OriginalContent {
  contentType: string
  fileName?: string
  bytes: number
  parts: AsyncIterable<Buffer> | Iterable<Buffer>
  /** Uploaded as a document (its bytes are the file), not stored as text. */
  document: boolean
  /** A text memory's content as GET …/content has always answered it (JSON); absent for a document. */
  asText?: MemoryContent
}

/** A memory's original bytes: a document's as they were uploaded, a text memory's as UTF-8. */
export async function getOriginalContent(
  context: DomainContext,
  call: CallContext,
  memoryId: unknown,
): Promise<OriginalContent> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, memoryId, 'memoryId')
  requireVectorStorage(context)
  const memory = await findAccessibleMemory(context, principal, id, 'GET')
  const location = await documentsSql.findContentLocation(context.sql, id)
  if (!location) throw notFound(`memory ${id}`)
  if (location.content_id === null) {
    const stored = await memoriesSql.findMemoryContent(context.sql, id)
    if (!stored) throw notFound(`memory ${id}`)
    const bytes = Buffer.from(stored.content)
    const asText: MemoryContent = {
      memoryId: id,
      contentType: memory.content_type as ContentType,
      originalContent: stored.content,
    }
    return { contentType: memory.content_type, bytes: bytes.length, parts: [bytes], document: false, asText }
  }
  return {
    contentType: memory.content_type,
    fileName: location.file_name ?? undefined,
    bytes: location.content_bytes ?? 0,
    parts: documentsSql.contentParts(context.sql, location.content_id),
    document: true,
  }
}

/** GET /v1/memories/{id}/pages/{n}/image: a page rendered when the document was stored with extractPageImages. */
export async function getPageImage(
  context: DomainContext,
  call: CallContext,
  memoryId: unknown,
  pageNumber: unknown,
): Promise<Buffer> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, memoryId, 'memoryId')
  const page = parseInput(pageNumberSchema, pageNumber, 'pageNumber')
  requireVectorStorage(context)
  await findAccessibleMemory(context, principal, id, 'GET')
  const png = await documentsSql.findPageImage(context.sql, id, page)
  if (!png) throw notFound(`page ${page} image of memory ${id} (stored only with extractPageImages)`)
  return png
}
