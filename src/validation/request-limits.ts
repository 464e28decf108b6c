/**
 * How large a request may be, by the kind of operation: a REST body or a gRPC message, checked
 * before it is read whole (REST, from Content-Length or as it streams) or decoded (gRPC). The
 * server's --grpc-max-message-size-mb caps every one of them. Import-free, so that the console and
 * the README's table can name the same numbers.
 */

const MIB = 1024 * 1024

/** Requests that carry no memory content: far above any of them (the largest, a 20,000-character system prompt). */
export const DEFAULT_REQUEST_BYTES = 1 * MIB

/**
 * One memory: 4 MiB of content (MAX_CONTENT_BYTES) written as JSON text, where a control character
 * takes six bytes (\u0001), or as base64, with 64 KiB of metadata beside it.
 */
export const MEMORY_REQUEST_BYTES = 32 * MIB

/** A batch of memories: larger contents go one memory at a time. */
export const MEMORY_BATCH_REQUEST_BYTES = 64 * MIB

/** Array elements in one JSON body, all arrays together: 500 batch items or ids need a few thousand. */
export const MAX_JSON_ARRAY_ELEMENTS = 100_000

/**
 * Field errors one answer lists (REST `details`, gRPC `x-error-field` trailers); the message counts the
 * rest. Ten million bad array elements once made ten million errors, a 131 MB answer from a 4 MB body.
 */
export const MAX_ERROR_DETAILS = 20
