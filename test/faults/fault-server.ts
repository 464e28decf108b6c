// What the fault tests do to a built `memsvc serve`: start it plaintext on loopback
// (behind a TCP proxy to PostgreSQL when the test cuts the database off), initialise
// it, and create API keys as a load would.
import { expect } from 'vitest'
import { createTestDatabase, POSTGRES_ADMIN_URL, type TestDatabase } from '../support/databases.js'
import { createSandbox, killAllProcesses, type Sandbox, ServerProcess } from '../support/executable.js'
import { type HttpResult, httpRequest } from '../support/http-client.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/** An embedded first start (initdb) or a crash recovery on a loaded two-core machine took over a minute. */
export const START_TIMEOUT_MS = 120_000
/** Long enough that only a hang reaches it: the tests look for much faster answers. */
export const REQUEST_TIMEOUT_MS = 15_000

export function serveFlags(dataDir: string, extra: string[] = []): string[] {
  return [
    '--rest-port',
    '0',
    '--grpc-port',
    '0',
    '--bind-address',
    '127.0.0.1',
    '--tls-disabled',
    '--metrics-scrape-secret',
    'faults',
    '--data-dir',
    dataDir,
    ...extra,
  ]
}

export interface ProxiedServer {
  sandbox: Sandbox
  database: TestDatabase
  /** Between the server and PostgreSQL: disable() cuts every connection. */
  proxy: TcpProxy
  server: ServerProcess
  stop(): Promise<void>
}

/** The executable on a fresh PostgreSQL database, reached through a proxy the test controls. */
export async function startBehindProxy(extraFlags: string[] = []): Promise<ProxiedServer> {
  const sandbox = createSandbox()
  const database = await createTestDatabase()
  const proxy = await startTcpProxy('127.0.0.1', Number(new URL(POSTGRES_ADMIN_URL).port || 5432))
  const dbUrl = `jdbc:postgresql://127.0.0.1:${proxy.port}/${database.name}?user=postgres`
  const server = ServerProcess.start(sandbox, serveFlags(sandbox.makeDir('data'), [...extraFlags, '--db-url', dbUrl]))
  const stop = async () => {
    await server.stop('SIGTERM')
    killAllProcesses()
    await proxy.close()
    await database.drop()
    sandbox.remove()
  }
  try {
    await server.waitForReady(START_TIMEOUT_MS)
  } catch (error) {
    await stop()
    throw error
  }
  return { sandbox, database, proxy, server, stop }
}

/** POST /v1/system/init; the root API key. */
export async function initialize(server: ServerProcess): Promise<string> {
  const init = await httpRequest(`${server.restBase}/v1/system/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(init.status, init.body).toBe(200)
  return init.json().rootApiKey as string
}

export function createKey(server: ServerProcess, rootKey: string, label: string): Promise<HttpResult> {
  return httpRequest(`${server.restBase}/v1/apikeys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ labels: { fault: label } }),
    timeoutMs: REQUEST_TIMEOUT_MS,
  })
}

/** A create as one load attempt: the status, and the key's id when it was acknowledged. */
export async function createKeyAttempt(
  server: ServerProcess,
  rootKey: string,
  label: string,
): Promise<{ status: number; ackId?: string }> {
  const response = await createKey(server, rootKey, label)
  return {
    status: response.status,
    ackId: response.status === 201 ? (response.json().apiKeyMetadata.apiKeyId as string) : undefined,
  }
}

/** Counts of each status, for the figures' notes. */
export function statusCounts(statuses: number[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}
