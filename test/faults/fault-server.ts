// What the fault tests do to a built `memsvc serve`: start it plaintext on loopback,
// initialise it, and create API keys as a load would.
import { expect } from 'vitest'
import { httpRequest, type HttpResult } from '../support/http-client.js'
import type { ServerProcess } from '../support/executable.js'

export const START_TIMEOUT_MS = 60_000
/** Long enough that only a hang reaches it: the tests look for much faster answers. */
export const REQUEST_TIMEOUT_MS = 15_000

export function serveFlags(dataDir: string, extra: string[] = []): string[] {
  return ['--rest-port', '0', '--grpc-port', '0', '--bind-address', '127.0.0.1', '--tls-disabled', '--metrics-scrape-secret', 'faults', '--data-dir', dataDir, ...extra]
}

/** POST /v1/system/init; the root API key. */
export async function initialize(server: ServerProcess): Promise<string> {
  const init = await httpRequest(`${server.restBase}/v1/system/init`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
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
export async function createKeyAttempt(server: ServerProcess, rootKey: string, label: string): Promise<{ status: number; ackId?: string }> {
  const response = await createKey(server, rootKey, label)
  return { status: response.status, ackId: response.status === 201 ? (response.json().apiKeyMetadata.apiKeyId as string) : undefined }
}

/** Counts of each status, for the figures' notes. */
export function statusCounts(statuses: number[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}
