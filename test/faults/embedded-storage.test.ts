// Embedded database faults (issue 13 item 7 and the suite's embedded scenarios), on the
// built executable: a full disk under the data directory, a data directory left by a
// killed process, and a second process on the same directory.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiClient, TRANSPORTS } from '../support/api-client.js'
import { EXIT } from '../support/cli.js'
import { createSandbox, killAllProcesses, type Sandbox, ServerProcess, waitUntil } from '../support/executable.js'
import { recordFigures } from '../support/fault-figures.js'
import { httpRequest } from '../support/http-client.js'
import { startLoad } from '../support/load.js'

const START_TIMEOUT_MS = 60_000
/** Room for initdb (about 40 MB) and a little more; the test fills the rest. */
const TMPFS_SIZE = '96m'
const CHANGE_TIMEOUT_MS = 10_000
const WRITES_AFTER_FULL = 40
const KILL_WRITERS = 3
const KILL_AFTER_MS = 1_500
const MAX_ATTEMPTS = 5_000
const REQUEST_TIMEOUT_MS = 10_000

const serveFlags = (dataDir: string) => ['--rest-port', '0', '--grpc-port', '0', '--bind-address', '127.0.0.1', '--tls-disabled', '--metrics-scrape-secret', 'faults', '--data-dir', dataDir]

let sandbox: Sandbox

beforeAll(() => {
  sandbox = createSandbox()
})

afterAll(() => {
  killAllProcesses()
  sandbox?.remove()
}, 30_000)

async function initialize(server: ServerProcess): Promise<string> {
  const init = await httpRequest(`${server.restBase}/v1/system/init`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  expect(init.status, init.body).toBe(200)
  return init.json().rootApiKey as string
}

function createKey(server: ServerProcess, rootKey: string, label: string) {
  return httpRequest(`${server.restBase}/v1/apikeys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ labels: { fault: label } }),
    timeoutMs: REQUEST_TIMEOUT_MS,
  })
}

/** Every API key id the server lists, following the page tokens. */
async function listKeyIds(server: ServerProcess, rootKey: string): Promise<Set<string>> {
  const ids = new Set<string>()
  let token: string | undefined
  do {
    const query = new URLSearchParams({ pageSize: '1000', ...(token ? { pageToken: token } : {}) })
    const page = await httpRequest(`${server.restBase}/v1/apikeys?${query}`, { headers: { authorization: `Bearer ${rootKey}` } })
    expect(page.status, page.body).toBe(200)
    const body = page.json()
    for (const key of body.keys) ids.add(key.apiKeyId)
    token = body.nextPageToken || undefined
  } while (token)
  return ids
}

function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false
  const probe = fs.mkdtempSync(path.join(sandbox.dir, 'tmpfs-probe-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).status === 0
  if (mounted) spawnSync('umount', [probe])
  fs.rmdirSync(probe)
  return mounted
}

describe('embedded database faults', () => {
  it('a full disk under the data directory: writes get 503 naming the full disk (never 500), /readyz says so, and freeing space brings both back', async (context) => {
    if (!canMountTmpfs()) {
      context.skip('needs root and permission to mount a tmpfs (a container without CAP_SYS_ADMIN cannot)')
      return
    }
    const mountPoint = sandbox.makeDir('small-disk')
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'tmpfs', mountPoint])
    const began = performance.now()
    const server = ServerProcess.start(sandbox, serveFlags(path.join(mountPoint, 'data')))
    try {
      await server.waitForReady(START_TIMEOUT_MS)
      const rootKey = await initialize(server)
      expect((await createKey(server, rootKey, 'before')).status).toBe(201)

      const filler = path.join(mountPoint, 'filler')
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' }) // stops at ENOSPC
      spawnSync('dd', ['if=/dev/zero', `of=${filler}-tail`, 'bs=4k'], { stdio: 'ignore' })
      const statuses: number[] = []
      const messages = new Set<string>()
      for (let attempt = 0; attempt < WRITES_AFTER_FULL; attempt++) {
        const response = await createKey(server, rootKey, `full-${attempt}`)
        statuses.push(response.status)
        if (response.status !== 201) messages.add(response.json().error?.message ?? response.body)
      }
      const readyz = await waitUntil('/readyz 503 for the full disk', async () => {
        const response = await server.get('/readyz')
        return response.status === 503 ? JSON.parse(response.body) : undefined
      }, CHANGE_TIMEOUT_MS)
      const { grpcPort } = await server.listening()
      const client = new ApiClient({ restUrl: server.restBase, grpcAddress: `127.0.0.1:${grpcPort}` })
      const viaTransports = []
      for (const transport of TRANSPORTS) viaTransports.push((await client.call(transport, 'createApiKey', { labels: { fault: transport } }, rootKey)).status)
      // Reads still work on a full disk.
      const listed = (await client.call('rest', 'listApiKeys', {}, rootKey)).status
      client.close()

      fs.rmSync(filler, { force: true })
      fs.rmSync(`${filler}-tail`, { force: true })
      await waitUntil('/readyz 200 once space is freed', async () => (await server.get('/readyz')).status === 200, CHANGE_TIMEOUT_MS)
      const afterFreeing = (await createKey(server, rootKey, 'after')).status
      recordFigures({
        scenario: 'embedded, disk full (tmpfs)',
        tried: statuses.length + 2,
        failed: statuses.filter((status) => status !== 201 && status !== 503).length,
        lost: 0,
        ms: performance.now() - began,
        notes: `statuses ${JSON.stringify(Object.fromEntries([...new Set(statuses)].map((status) => [status, statuses.filter((s) => s === status).length])))}; readyz ${JSON.stringify(readyz)}`,
      })

      expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([])
      expect(statuses).toContain(503)
      expect([...messages]).toEqual(['the database has no disk space left; writes fail until space is freed'])
      expect(readyz).toEqual({ ready: false, state: 'READY', reason: 'database disk full' })
      expect(viaTransports).toEqual(['UNAVAILABLE', 'UNAVAILABLE'])
      expect(listed).toBe('OK')
      expect(afterFreeing).toBe(201)
      expect(server.logs.filter((line) => / ERROR /.test(line))).toEqual([])
      expect(server.hasLogged(/database disk full; readiness is off/)).toBe(true)
      expect(server.hasLogged(/database disk has space again/)).toBe(true)
    } finally {
      await server.stop('SIGTERM')
      spawnSync('umount', [mountPoint])
    }
  }, START_TIMEOUT_MS * 2)
})
