// Every failure of a client command ends here and becomes ONE line on stderr plus an
// exit code (exit-codes.ts). Stack traces are for bugs only, and only on request.
import { type ServiceError, status } from '@grpc/grpc-js'
import { CliError, EXIT_FAILED } from './exit-codes.js'

export const DEBUG_ENV = 'MEMSVC_DEBUG'

export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number' && 'details' in error
}

/**
 * `INVALID_ARGUMENT: labels.Env: label keys are … (field labels.Env)`. The server's
 * x-error-status trailer is preferred over the gRPC code because it is finer
 * (PAYLOAD_TOO_LARGE and RESOURCE_EXHAUSTED share one gRPC code).
 */
export function formatServiceError(error: ServiceError): string {
  const trailerStatus = error.metadata?.get('x-error-status')[0]
  const statusName = typeof trailerStatus === 'string' ? trailerStatus : (status[error.code] ?? `code ${error.code}`)
  const fields = (error.metadata?.get('x-error-field') ?? []).map(String)
  const fieldNote = fields.length === 0 ? '' : ` (field${fields.length > 1 ? 's' : ''} ${fields.join(', ')})`
  const message = (error.details || error.message).replace(/\s*\n\s*/g, ' ')
  return `${statusName}: ${message}${fieldNote}`
}

/** Adds what to do next to errors whose message alone does not say it. */
function hintFor(error: ServiceError): string {
  if (error.code === status.UNAUTHENTICATED) return '; check --api-key / SERVICE_API_KEY (keys that are deleted, deactivated or expired stop working)'
  if (error.code === status.PERMISSION_DENIED) return '; this needs an admin key or the owner\'s key'
  if (error.code === status.UNIMPLEMENTED) return '; the server may be older than this client ("memsvc system info" shows its version)'
  return ''
}

/** Prints the error as one line and returns the exit code to use. */
export function reportError(error: unknown, stderr: NodeJS.WritableStream = process.stderr): number {
  if (error instanceof CliError) {
    stderr.write(`error: ${error.message}\n`)
    return error.exitCode
  }
  if (isServiceError(error)) {
    stderr.write(`error: ${formatServiceError(error)}${hintFor(error)}\n`)
    return EXIT_FAILED
  }
  // A bug: still one line, with the stack only when asked for.
  const message = error instanceof Error ? error.message : String(error)
  if (process.env[DEBUG_ENV]) stderr.write(`${(error as Error)?.stack ?? message}\n`)
  stderr.write(`error: ${message}${process.env[DEBUG_ENV] ? '' : ` (set ${DEBUG_ENV}=1 for details)`}\n`)
  return EXIT_FAILED
}
