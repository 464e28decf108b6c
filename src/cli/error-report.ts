// Every failure of a client command ends here and becomes ONE line on stderr plus an
// exit code (exit-codes.ts). Stack traces are for bugs only, and only on request.
import { status } from '@grpc/grpc-js'
import { MemsvcError } from '../../sdk/src/index.js'
import { CliError, EXIT_FAILED } from './exit-codes.js'

export const DEBUG_ENV = 'MEMSVC_DEBUG'

/**
 * `INVALID_ARGUMENT: labels.Env: label keys are … (field labels.Env)`. The error's code is the
 * server's x-error-status trailer, finer than the gRPC code (PAYLOAD_TOO_LARGE and
 * RESOURCE_EXHAUSTED share one gRPC code).
 */
export function formatServiceError(error: MemsvcError): string {
  const fields = error.fields
  const fieldNote = fields.length === 0 ? '' : ` (field${fields.length > 1 ? 's' : ''} ${fields.join(', ')})`
  const message = error.message.replace(/\s*\n\s*/g, ' ')
  return `${error.code}: ${message}${fieldNote}`
}

/** Adds what to do next to errors whose message alone does not say it. */
function hintFor(error: MemsvcError): string {
  if (error.grpcStatus === status.UNAUTHENTICATED)
    return '; check --api-key / SERVICE_API_KEY (keys that are deleted, deactivated or expired stop working)'
  if (error.grpcStatus === status.PERMISSION_DENIED) return "; this needs an admin key or the owner's key"
  if (error.grpcStatus === status.UNIMPLEMENTED)
    return '; the server may be older than this client ("memsvc system info" shows its version)'
  return ''
}

/** Prints the error as one line and returns the exit code to use. */
export function reportError(error: unknown, stderr: NodeJS.WritableStream = process.stderr): number {
  if (error instanceof CliError) {
    stderr.write(`error: ${error.message}\n`)
    return error.exitCode
  }
  if (MemsvcError.is(error)) {
    stderr.write(`error: ${formatServiceError(error)}${hintFor(error)}\n`)
    return EXIT_FAILED
  }
  // A bug: still one line, with the stack only when asked for.
  const message = error instanceof Error ? error.message : String(error)
  if (process.env[DEBUG_ENV]) stderr.write(`${(error as Error)?.stack ?? message}\n`)
  stderr.write(`error: ${message}${process.env[DEBUG_ENV] ? '' : ` (set ${DEBUG_ENV}=1 for details)`}\n`)
  return EXIT_FAILED
}
