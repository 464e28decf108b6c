import { status as GrpcStatus } from '@grpc/grpc-js'

/** google.rpc status codes used by the service, each with its HTTP and gRPC form. */
export const ERROR_CODES = {
  INVALID_ARGUMENT: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  UNAUTHENTICATED: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  PERMISSION_DENIED: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED },
  ALREADY_EXISTS: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  FAILED_PRECONDITION: { http: 412, grpc: GrpcStatus.FAILED_PRECONDITION },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT },
  RESOURCE_EXHAUSTED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export interface FieldViolation {
  field: string
  description: string
}

/** The one error type of the service. Transports turn it into an HTTP body or a gRPC status. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldViolation[] = [],
    /** When to try again, for a refusal that passes (REST Retry-After; gRPC retry-after and grpc-retry-pushback-ms trailers). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message)
    this.name = 'AppError'
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http
  }

  get grpcStatus(): number {
    return ERROR_CODES[this.code].grpc
  }
}

export const invalidArgument = (field: string, description: string): AppError =>
  new AppError('INVALID_ARGUMENT', `${field}: ${description}`, [{ field, description }])

export const unauthenticated = (message = 'missing or invalid API key'): AppError =>
  new AppError('UNAUTHENTICATED', message)

export const permissionDenied = (message: string): AppError => new AppError('PERMISSION_DENIED', message)

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)

export const alreadyExists = (message: string): AppError => new AppError('ALREADY_EXISTS', message)

export const unavailable = (message: string): AppError => new AppError('UNAVAILABLE', message)

export const databaseUnreachable = (): AppError => unavailable('the database is not reachable; try again shortly')

export const databaseDiskFull = (): AppError =>
  unavailable('the database has no disk space left; writes fail until space is freed')

/** Anything that is not an AppError is a bug or an outage: callers see INTERNAL with no internals. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error
  if (isDatabaseUnreachable(error)) return databaseUnreachable()
  if (isDatabaseDiskFull(error)) return databaseDiskFull()
  return new AppError('INTERNAL', 'internal error')
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01',
  '57P03',
])

export function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && UNREACHABLE_CODES.has(code)
}

/** PostgreSQL's disk_full; PGlite raises it as well when its data directory's file system fills up. */
const DISK_FULL_CODE = '53100'

export function isDatabaseDiskFull(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === DISK_FULL_CODE
}
