// Time from spawn to READY (first 200 from /readyz), for the cases users meet:
// external PostgreSQL with a fresh database (migrations run) and with an existing one,
// and the embedded database with an existing data dir (its first start, which runs
// initdb, is reported too but is a one-off).
import path from 'node:path'
import { createSandbox, type RunningServer, startMemsvc } from '../lib/memsvc.js'

export interface StartupTimes {
  externalFreshMs: number
  externalExistingMs?: number
  embeddedFirstMs?: number
  embeddedExistingMs?: number
}

const COMMON_ARGS = ['--tls-disabled', '--rest-port', '0', '--grpc-port', '0', '--bind-address', '127.0.0.1']

export const serverArgs = (extra: string[]) => [...COMMON_ARGS, ...extra]

/** Stops `server`, starts the same configuration again, returns the second start's READY time. */
export async function restartTime(
  executable: string,
  args: string[],
  sandbox: ReturnType<typeof createSandbox>,
): Promise<number> {
  const again: RunningServer = await startMemsvc({ executable, args, sandbox })
  await again.stop()
  return again.readyMs
}

export async function embeddedStartup(executable: string): Promise<{ firstMs: number; existingMs: number }> {
  const sandbox = createSandbox()
  try {
    const args = serverArgs(['--data-dir', path.join(sandbox.dir, 'data')])
    const first = await startMemsvc({ executable, args, sandbox })
    await first.stop()
    const second = await startMemsvc({ executable, args, sandbox })
    await second.stop()
    return { firstMs: first.readyMs, existingMs: second.readyMs }
  } finally {
    sandbox.remove()
  }
}
