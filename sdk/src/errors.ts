// Every failure the client reports is ONE class, MemsvcError. Server errors carry the
// server's own status name and the fields at fault from its error trailer
// (x-error-status, x-error-field, x-request-id); failures on this side (no connection,
// a pinned certificate that does not match, an aborted call) use the gRPC status names.
import { type Metadata, type ServiceError, status } from '@grpc/grpc-js'

export interface MemsvcErrorInit {
  code: string
  grpcStatus: number
  message: string
  fields?: string[]
  requestId?: string
  cause?: unknown
}

export class MemsvcError extends Error {
  /** The server's status name (NOT_FOUND, INVALID_ARGUMENT, PAYLOAD_TOO_LARGE, …), finer than the gRPC code. */
  readonly code: string
  /** The numeric gRPC status (5 = NOT_FOUND, 3 = INVALID_ARGUMENT, …). */
  readonly grpcStatus: number
  /** The first field at fault (e.g. "name", "labels.env"), when the server named one. */
  readonly field: string | undefined
  /** Every field at fault, in the server's order. */
  readonly fields: readonly string[]
  /** The id the server logged the request under; quote it when reporting a problem. */
  readonly requestId: string | undefined

  constructor(init: MemsvcErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'MemsvcError'
    this.code = init.code
    this.grpcStatus = init.grpcStatus
    this.fields = init.fields ?? []
    this.field = this.fields[0]
    this.requestId = init.requestId
  }

  /** Same test across the ESM and CJS builds, where `instanceof` would see two classes. */
  static is(error: unknown): error is MemsvcError {
    return (
      error instanceof Error && error.name === 'MemsvcError' && typeof (error as MemsvcError).grpcStatus === 'number'
    )
  }
}

export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number' && 'details' in error
}

const firstText = (metadata: Metadata | undefined, key: string) => {
  const value = metadata?.get(key)[0]
  return typeof value === 'string' ? value : undefined
}

/** The server percent-encodes field names that are not printable ASCII (a label key such as "é"). */
function decodeField(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

export function statusName(code: number): string {
  return status[code] ?? `CODE_${code}`
}

/** A grpc-js error, with the server's trailer when there is one. */
export function fromServiceError(error: ServiceError): MemsvcError {
  const metadata = error.metadata
  return new MemsvcError({
    code: firstText(metadata, 'x-error-status') ?? statusName(error.code),
    grpcStatus: error.code,
    message: error.details || error.message,
    fields: (metadata?.get('x-error-field') ?? []).map((field) => decodeField(String(field))),
    requestId: firstText(metadata, 'x-request-id'),
    cause: error,
  })
}

export function toMemsvcError(error: unknown): MemsvcError {
  if (MemsvcError.is(error)) return error
  if (isServiceError(error)) return fromServiceError(error)
  return new MemsvcError({
    code: 'UNKNOWN',
    grpcStatus: status.UNKNOWN,
    message: error instanceof Error ? error.message : String(error),
    cause: error,
  })
}

export function clientError(grpcStatus: number, message: string, cause?: unknown): MemsvcError {
  return new MemsvcError({ code: statusName(grpcStatus), grpcStatus, message, cause })
}
