import * as v from 'valibot'
import { textSchema } from './common.js'
import { memoryFields } from './memory.js'

/** Documents: what an upload names besides its bytes. */

const MAX_CONTENT_TYPE_LENGTH = 255

/**
 * An upload's fields: the create request without its content, which arrives as the body
 * (REST raw or multipart) or as the stream's data messages (gRPC UploadMemory).
 */
export const uploadMemorySchema = v.strictObject({
  ...memoryFields,
  // Any type: the bytes are sniffed, and a type memsvc does not read is a 415 (domain/documents.ts).
  contentType: v.optional(
    v.pipe(textSchema(), v.maxLength(MAX_CONTENT_TYPE_LENGTH, `at most ${MAX_CONTENT_TYPE_LENGTH} characters`)),
  ),
})
export type UploadMemoryRequest = v.InferOutput<typeof uploadMemorySchema>

/** A page of a document, from 1. */
export const pageNumberSchema = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,6}$/), v.transform(Number))], 'must be a page number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'pages are numbered from 1'),
)
