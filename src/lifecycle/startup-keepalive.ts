/**
 * Called every STARTUP_KEEPALIVE_MS while start-up does long work that is progress, not a
 * hang (rebuilding vector indexes before READY); `memsvc serve` moves systemd's start
 * deadline (TimeoutStartSec) on with it, so a long rebuild is not killed and restarted.
 */
export type StartupKeepalive = (status: string) => void

export const STARTUP_KEEPALIVE_MS = 30_000

/** Runs `work`, telling `keepalive` the status every `intervalMs` until it ends. */
export async function keepingStartupAlive<T>(
  keepalive: StartupKeepalive | undefined,
  status: string,
  work: () => Promise<T>,
  intervalMs = STARTUP_KEEPALIVE_MS,
): Promise<T> {
  const timer = keepalive ? setInterval(() => keepalive(status), intervalMs) : undefined
  try {
    return await work()
  } finally {
    clearInterval(timer)
  }
}
