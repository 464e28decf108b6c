import type { Logger } from '../observability/logger.js'

const EXIT_UNCAUGHT_EXCEPTION = 1

/** Kind, message and stack as log fields: the logger masks raw keys in them; no source excerpt of the bundle. */
function describe(error: unknown): { error: string; stack?: string } {
  if (error instanceof Error) return { error: `${error.name}: ${error.message}`, stack: error.stack }
  return { error: `non-error value of type ${typeof error}` }
}

/**
 * Last resorts for `memsvc serve`, outside any request (both transports turn what a request
 * throws into a 500 / INTERNAL themselves).
 *
 * A rejected promise nobody awaited is logged and the server keeps serving: such a promise
 * belongs to background work (a notification, a usage flush) that had already handed control
 * back, so no synchronous step was left half done, and ending the process would drop every
 * in-flight request of every client for it.
 *
 * An uncaught exception is logged as one line and the process exits 1, as Node would have:
 * it interrupted synchronous code at an unknown point, so the server's state can no longer be
 * trusted, and a supervisor's restart is the safe way on.
 */
export function installProcessGuards(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    log.error('unhandled promise rejection outside any request; serving on', describe(reason))
  })
  process.on('uncaughtException', (error) => {
    log.error('uncaught exception; exiting', describe(error))
    process.exit(EXIT_UNCAUGHT_EXCEPTION)
  })
}
