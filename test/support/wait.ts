/** Thrown by a check to give up at once (e.g. the process it watches died) instead of retrying. */
export class StopWaiting extends Error {}

/**
 * Polls `check` until it returns a value other than undefined/false, or fails after
 * `timeoutMs` naming what it waited for. The timeout only bounds the test; nothing
 * asserts how fast the condition became true.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 20_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const result = await check()
      if (result !== undefined && result !== false) return result
    } catch (error) {
      if (error instanceof StopWaiting) throw error
      lastError = error
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

/** Rejects with a clear message if `promise` does not settle within `timeoutMs`. */
export function within<T>(what: string, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms: ${what}`)), timeoutMs)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
