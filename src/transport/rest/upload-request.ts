import { once } from 'node:events'
import busboy from 'busboy'
import type { DocumentUpload } from '../../domain/documents.js'
import { AppError, invalidArgument } from '../../errors/app-error.js'
import type { RestRequest } from './rest-messages.js'

/**
 * An upload's REST forms, read into the domain's DocumentUpload:
 * - raw bytes as the body, with their Content-Type, the create request's fields as query
 *   parameters (metadata and chunkingConfig as JSON), the file name from the query or the
 *   Content-Disposition header;
 * - multipart/form-data: a `request` part (JSON, the create request without its content)
 *   first, then one file part, whose type and file name are used unless `request` names them.
 */

/** The JSON part and the parts around the file are small: larger is a mistake, not a document. */
const MAX_MULTIPART_FIELD_BYTES = 1024 * 1024
const MAX_MULTIPART_PARTS = 8

const JSON_FIELDS = new Set(['metadata', 'chunkingConfig'])
const BOOLEAN_FIELDS = new Set(['dedupe', 'extractPageImages'])
const NUMBER_FIELDS = new Set(['pageImageDpi'])
const LIST_FIELDS = new Set(['ocrLanguages'])
const TEXT_FIELDS = new Set(['memoryId', 'spaceId', 'contentType', 'fileName', 'ocr'])

export const isJsonBody = (contentType: string | undefined) =>
  contentType === undefined || /^application\/json\s*(;|$)/i.test(contentType)

/** A query parameter as the schema's type: JSON, boolean, number or list; unknown names are passed on to be refused. */
function queryValue(name: string, value: string): unknown {
  if (JSON_FIELDS.has(name)) {
    try {
      return JSON.parse(value)
    } catch {
      throw invalidArgument(name, 'must be JSON')
    }
  }
  if (BOOLEAN_FIELDS.has(name)) {
    if (value === 'true' || value === 'false') return value === 'true'
    throw invalidArgument(name, 'must be true or false')
  }
  if (NUMBER_FIELDS.has(name)) return /^\d+$/.test(value) ? Number(value) : value
  if (LIST_FIELDS.has(name)) return value.split(',').map((item) => item.trim())
  return value
}

/** `filename="…"` or `filename*=UTF-8''…` of a Content-Disposition header. */
function fileNameOfDisposition(disposition: string | undefined): string | undefined {
  if (!disposition) return undefined
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition)
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!.trim())
    } catch {
      return undefined
    }
  }
  return /filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)/i.exec(disposition)?.slice(1).find(Boolean)?.trim()
}

/** Raw bytes: the fields from the query, the type from Content-Type. */
function rawUpload(request: RestRequest, body: AsyncIterable<Buffer>): DocumentUpload {
  const fields: Record<string, unknown> = {}
  for (const [name, value] of request.query) {
    if (fields[name] !== undefined) throw invalidArgument(name, 'is given more than once')
    fields[name] = queryValue(name, value)
  }
  fields.contentType ??= request.headers['content-type']
  fields.fileName ??= fileNameOfDisposition(request.headers['content-disposition'])
  if (fields.fileName === undefined) delete fields.fileName
  return { fields, body }
}

/** Feeds the body to busboy at the pace its file part is read. */
async function pump(body: AsyncIterable<Buffer>, parser: busboy.Busboy): Promise<void> {
  for await (const chunk of body) if (!parser.write(chunk)) await once(parser, 'drain')
  parser.end()
}

/** multipart/form-data: resolves once the file part begins, with the fields before it and the file's bytes. */
function multipartUpload(request: RestRequest, body: AsyncIterable<Buffer>): Promise<DocumentUpload> {
  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: { 'content-type': request.headers['content-type']! },
      limits: { fieldSize: MAX_MULTIPART_FIELD_BYTES, files: 1, parts: MAX_MULTIPART_PARTS },
    })
  } catch (error) {
    return Promise.reject(invalidArgument('content-type', (error as Error).message))
  }
  return new Promise<DocumentUpload>((resolve, reject) => {
    let fields: Record<string, unknown> = {}
    let settled = false
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      outcome()
    }
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) {
        settle(() => reject(invalidArgument(name, `is larger than ${MAX_MULTIPART_FIELD_BYTES} bytes`)))
        return
      }
      if (name === 'request') {
        try {
          const parsed = JSON.parse(value) as unknown
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object')
          fields = { ...fields, ...(parsed as Record<string, unknown>) }
        } catch {
          settle(() => reject(invalidArgument('request', 'must be a JSON object (the create request without content)')))
        }
      } else if (TEXT_FIELDS.has(name) || JSON_FIELDS.has(name) || BOOLEAN_FIELDS.has(name)) {
        fields[name] = queryValue(name, value)
      } else {
        settle(() => reject(invalidArgument(name, 'is not a field of an upload; send the create request as `request`')))
      }
    })
    parser.on('file', (_name, stream, info) => {
      const file: Record<string, unknown> = {}
      if (info.mimeType && info.mimeType !== 'application/octet-stream') file.contentType = info.mimeType
      if (info.filename) file.fileName = info.filename
      settle(() => resolve({ fields: { ...file, ...fields }, body: stream as AsyncIterable<Buffer> }))
    })
    parser.on('error', (error: Error) => {
      settle(() => reject(invalidArgument('body', `is not valid multipart/form-data: ${error.message}`)))
    })
    parser.on('close', () => settle(() => reject(invalidArgument('file', 'the multipart body holds no file part'))))
    pump(body, parser).catch((error: unknown) => {
      settle(() => reject(error))
      parser.destroy(error instanceof Error ? error : new AppError('INTERNAL', String(error)))
    })
  })
}

/** The upload a request with a non-JSON body carries. */
export async function uploadOf(request: RestRequest): Promise<DocumentUpload> {
  const body = request.bodyStream!
  const contentType = request.headers['content-type'] ?? ''
  if (/^multipart\/form-data\s*;/i.test(contentType)) return multipartUpload(request, body)
  return rawUpload(request, body)
}
