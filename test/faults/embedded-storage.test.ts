// Embedded database faults (storage left by a crash, and the suite's embedded scenarios), on the
// built executable: a data directory left by a killed process, a second process on the
// same directory, and a full disk under it. The tests share one data directory, on a
// small tmpfs where the machine allows it (the first start's initdb is the slow part).
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiClient, TRANSPORTS } from '../support/api-client.js'
import { EXIT } from '../support/cli.js'
import { createSandbox, killAllProcesses, type Sandbox, ServerProcess, waitUntil } from '../support/executable.js'
import { startFakeProvider } from '../support/fake-provider.js'
import { recordFigures } from '../support/fault-figures.js'
import { httpRequest } from '../support/http-client.js'
import { startLoad } from '../support/load.js'
import { createKey, createKeyAttempt, initialize, START_TIMEOUT_MS, serveFlags, statusCounts } from './fault-server.js'

/** Room for initdb (about 40 MB) and a little more; the test fills the rest. */
const TMPFS_SIZE = '96m'
const CHANGE_TIMEOUT_MS = 10_000
const WRITES_AFTER_FULL = 40
const KILL_WRITERS = 3
const KILL_AFTER_MS = 1_500
const MAX_ATTEMPTS = 5_000
const PAGE_SIZE = 100
/** Well under the job lease (120 s): a re-run this soon can only come from the restart. */
const JOB_RERUN_TIMEOUT_MS = 20_000

let sandbox: Sandbox
/** Where the data directory lives: a small tmpfs, or a plain directory if none can be mounted. */
let mountPoint: string | undefined
let dataDir: string
/** The server the kill test restarts; the later tests use it. */
let server: ServerProcess | undefined
let rootKey: string
let provider: Awaited<ReturnType<typeof startFakeProvider>>

beforeAll(async () => {
  sandbox = createSandbox()
  provider = await startFakeProvider()
  if (canMountTmpfs()) {
    mountPoint = sandbox.makeDir('small-disk')
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'tmpfs', mountPoint])
    dataDir = path.join(mountPoint, 'data')
  } else {
    dataDir = sandbox.makeDir('data')
  }
})

afterAll(async () => {
  await server?.stop('SIGTERM')
  killAllProcesses()
  await provider?.close()
  if (mountPoint) spawnSync('umount', [mountPoint])
  sandbox?.remove()
}, 30_000)

/** Every API key id the server lists, following the page tokens. */
async function listKeyIds(server: ServerProcess, rootKey: string): Promise<Set<string>> {
  const ids = new Set<string>()
  let token: string | undefined
  do {
    const query = new URLSearchParams({ maxResults: String(PAGE_SIZE), ...(token ? { nextToken: token } : {}) })
    const page = await httpRequest(`${server.restBase}/v1/apikeys?${query}`, {
      headers: { authorization: `Bearer ${rootKey}` },
    })
    expect(page.status, page.body).toBe(200)
    const body = page.json()
    for (const key of body.keys) ids.add(key.apiKeyId)
    token = body.nextToken
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
  it(
    'kill -9 during writes: the data directory it left restarts, every acknowledged key is there, and the probe job it was running runs again at once',
    async () => {
      const began = performance.now()
      const first = ServerProcess.start(sandbox, serveFlags(dataDir))
      await first.waitForReady(START_TIMEOUT_MS)
      rootKey = await initialize(first)
      // A registration whose connectivity probe (a job) is running when the process dies.
      const hangingProbes = () => provider.requests.filter((request) => request.path.startsWith('/hang/')).length
      const registered = await httpRequest(`${first.restBase}/v1/embedders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          displayName: 'hanging',
          providerType: 'VENDORA',
          endpointUrl: `${provider.url}/hang/v1`,
          modelIdentifier: 'hang',
          dimensionality: 8,
        }),
      })
      expect(registered.status, registered.body).toBe(201)
      await waitUntil('the probe job to reach the provider', () => hangingProbes() === 1, JOB_RERUN_TIMEOUT_MS)
      const load = startLoad({
        workers: KILL_WRITERS,
        maxAttempts: MAX_ATTEMPTS,
        attempt: (worker, sequence) => createKeyAttempt(first, rootKey, `${worker}-${sequence}`),
      })
      await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_MS))
      first.child.kill('SIGKILL')
      expect((await first.exited).signal).toBe('SIGKILL')
      const attempts = await load.stop()
      expect(fs.existsSync(path.join(dataDir, 'memsvc.pid'))).toBe(true) // the lock it could not remove

      server = ServerProcess.start(sandbox, serveFlags(dataDir))
      await server.waitForReady(START_TIMEOUT_MS)
      // Its lease (120 s) has not expired: the restarted process knows it alone uses this queue.
      await waitUntil('the cut-off probe job to run again', () => hangingProbes() === 2, JOB_RERUN_TIMEOUT_MS)
      const stored = await listKeyIds(server, rootKey)
      const acknowledged = attempts.filter((attempt) => attempt.ackId !== undefined)
      const lost = acknowledged.filter((attempt) => !stored.has(attempt.ackId!))
      // Only the in-flight requests the kill cut off may have no answer.
      const failed = attempts.filter((attempt) => attempt.status !== 201 && attempt.status !== 0)
      recordFigures({
        scenario: 'embedded, kill -9 during key creates',
        tried: attempts.length,
        failed: failed.length,
        lost: lost.length,
        ms: performance.now() - began,
        notes: `${acknowledged.length} acknowledged, ${attempts.filter((attempt) => attempt.status === 0).length} cut off by the kill; restart READY in ${Math.round(server.readyAfterMs!)} ms; running probe job re-run after restart`,
      })
      expect(acknowledged.length).toBeGreaterThan(0)
      expect(lost.map((attempt) => attempt.ackId)).toEqual([])
      expect(failed).toEqual([])
    },
    START_TIMEOUT_MS * 3,
  )

  it(
    'a second process on the same data directory exits with code 2 naming the process that holds it, and the first keeps serving',
    async () => {
      const second = ServerProcess.start(sandbox, serveFlags(dataDir))
      const exit = await second.exited
      expect(exit.code, second.logs.join('\n')).toBe(EXIT.BAD_INPUT)
      expect(second.logs.join('\n')).toContain(
        `data directory ${dataDir} is in use by another memsvc process (pid ${server!.pid})`,
      )
      expect((await server!.get('/readyz')).status).toBe(200)
    },
    START_TIMEOUT_MS,
  )

  it(
    'a full disk under the data directory: writes get 503 naming the full disk (never 500), /readyz says so, and freeing space brings both back',
    async (context) => {
      if (!mountPoint) {
        context.skip('needs root and permission to mount a tmpfs (a container without CAP_SYS_ADMIN cannot)')
        return
      }
      const began = performance.now()
      expect((await createKey(server!, rootKey, 'before')).status).toBe(201)
      const filler = path.join(mountPoint, 'filler')
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' }) // stops at ENOSPC
      spawnSync('dd', ['if=/dev/zero', `of=${filler}-tail`, 'bs=4k'], { stdio: 'ignore' })
      const statuses: number[] = []
      const messages = new Set<string>()
      for (let attempt = 0; attempt < WRITES_AFTER_FULL; attempt++) {
        const response = await createKey(server!, rootKey, `full-${attempt}`)
        statuses.push(response.status)
        if (response.status !== 201) messages.add(response.json().error?.message ?? response.body)
      }
      const readyz = await waitUntil(
        '/readyz 503 for the full disk',
        async () => {
          const response = await server!.get('/readyz')
          return response.status === 503 ? JSON.parse(response.body) : undefined
        },
        CHANGE_TIMEOUT_MS,
      )
      const { grpcPort } = await server!.listening()
      const client = new ApiClient({ restUrl: server!.restBase, grpcAddress: `127.0.0.1:${grpcPort}` })
      const viaTransports = []
      for (const transport of TRANSPORTS)
        viaTransports.push(
          (await client.call(transport, 'createApiKey', { labels: { fault: transport } }, rootKey)).status,
        )
      // Reads still work on a full disk.
      const listed = (await client.call('rest', 'listApiKeys', {}, rootKey)).status
      client.close()

      fs.rmSync(filler, { force: true })
      fs.rmSync(`${filler}-tail`, { force: true })
      await waitUntil(
        '/readyz 200 once space is freed',
        async () => (await server!.get('/readyz')).status === 200,
        CHANGE_TIMEOUT_MS,
      )
      const afterFreeing = (await createKey(server!, rootKey, 'after')).status
      recordFigures({
        scenario: 'embedded, disk full (tmpfs)',
        tried: statuses.length + 2,
        failed: statuses.filter((status) => status !== 201 && status !== 503).length,
        lost: 0,
        ms: performance.now() - began,
        notes: `statuses ${JSON.stringify(statusCounts(statuses))}; readyz ${JSON.stringify(readyz)}`,
      })

      expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([])
      expect(statuses).toContain(503)
      expect([...messages]).toEqual(['the database has no disk space left; writes fail until space is freed'])
      expect(readyz).toEqual({ ready: false, state: 'READY', reason: 'database disk full' })
      expect(viaTransports).toEqual(['UNAVAILABLE', 'UNAVAILABLE'])
      expect(listed).toBe('OK')
      expect(afterFreeing).toBe(201)
      expect(server!.logs.filter((line) => / ERROR /.test(line))).toEqual([])
      expect(server!.hasLogged(/database disk full; readiness is off/)).toBe(true)
      expect(server!.hasLogged(/database disk has space again/)).toBe(true)
    },
    START_TIMEOUT_MS,
  )
})
