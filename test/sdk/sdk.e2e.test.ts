// The SDK as a user gets it, against the built executable (dist/memsvc) serving TLS with its
// self-signed certificate: a project outside the repository with @memsvc/client in its
// node_modules runs the README's example scripts (sdk/examples) under plain node, ESM and
// CommonJS, with the certificate pinned by its SHA-256 fingerprint.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certificateFingerprint, cleanUp, type RunningServer, startServer } from '../support/cli.js'
import { createSandbox, type Sandbox } from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { loadSdk } from '../support/sdk.js'
import { waitFor } from '../support/wait.js'

const TEST_TIMEOUT_MS = 90_000
const SCRIPT_TIMEOUT_MS = 60_000
const EXAMPLES = path.resolve('sdk', 'examples')
const run = promisify(execFile)

let sandbox: Sandbox
let server: RunningServer
let embedder: FakeEmbedder
let consumer: string
let env: NodeJS.ProcessEnv

beforeAll(async () => {
  sandbox = createSandbox()
  embedder = await startFakeEmbedder({ dimensions: 32 })
  server = await startServer(sandbox, { tls: true, dataDir: sandbox.makeDir('data') })
  // A project of its own, outside the repository: the package is linked in as npm link would.
  consumer = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-sdk-consumer-'))
  fs.mkdirSync(path.join(consumer, 'node_modules', '@memsvc'), { recursive: true })
  fs.symlinkSync(path.resolve('sdk'), path.join(consumer, 'node_modules', '@memsvc', 'client'))
  fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true }))
  for (const file of fs.readdirSync(EXAMPLES)) fs.copyFileSync(path.join(EXAMPLES, file), path.join(consumer, file))
}, 150_000)

afterAll(async () => {
  await embedder?.close()
  await cleanUp([server], sandbox)
  if (consumer) fs.rmSync(consumer, { recursive: true, force: true })
}, 30_000)

describe('@memsvc/client against dist/memsvc over TLS', { timeout: TEST_TIMEOUT_MS }, () => {
  it('set-up through the SDK, then the README examples run as a user would run them', async () => {
    const sdk = await loadSdk('esm')
    const pin = certificateFingerprint(server.dataDir)
    const tls = { pinnedCertificateSha256: pin }
    const anonymous = new sdk.MemsvcClient({ address: server.address, tls })
    const { rootApiKey } = await anonymous.system.initialize()
    anonymous.close()
    const client = new sdk.MemsvcClient({ address: server.address, apiKey: rootApiKey, tls })
    const registered = await client.embedders.create({
      displayName: 'local',
      providerType: 'TEI',
      endpointUrl: embedder.url,
      modelIdentifier: 'hashed-bow',
      dimensionality: 32,
    })
    const space = await client.spaces.create({ name: 'e2e', spaceEmbedders: [{ embedderId: registered.embedderId }] })
    const texts = ['The Eiffel tower in Paris was finished in 1889.', 'Kyoto gardens are famous for maple leaves.']
    for (const text of texts) {
      const { memory } = await client.memories.create({ spaceId: space.spaceId, originalContent: text })
      await waitFor(
        'the memory to be COMPLETED',
        async () =>
          (await client.memories.get({ memoryId: memory!.memoryId })).processingStatus ===
          sdk.ProcessingStatus.COMPLETED,
      )
    }
    client.close()
    env = {
      PATH: process.env.PATH,
      MEMSVC_ADDRESS: server.address,
      MEMSVC_PIN: pin,
      MEMSVC_API_KEY: rootApiKey,
      SPACE_ID: space.spaceId,
    }

    const esm = await run(process.execPath, ['retrieve.mjs'], { cwd: consumer, env, timeout: SCRIPT_TIMEOUT_MS })
    const lines = esm.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^created key \S+; keys now: 2$/)
    expect(lines.slice(1)).toHaveLength(texts.length)
    expect(lines[1]).toMatch(/^[\d.]+ The Eiffel tower in Paris/)
    console.log(`$ node retrieve.mjs\n${esm.stdout}`)

    const cjs = await run(process.execPath, ['list-keys.cjs'], { cwd: consumer, env, timeout: SCRIPT_TIMEOUT_MS })
    expect(cjs.stdout).toMatch(/^keys: \S+, \S+\nMemsvcError NOT_FOUND 5 requestId=true\n$/)
  })

  it('a wrong pin fails before any call reaches the server', async () => {
    const wrong = { ...env, MEMSVC_PIN: 'AB'.repeat(32) }
    const result = await run(process.execPath, ['list-keys.cjs'], {
      cwd: consumer,
      env: wrong,
      timeout: SCRIPT_TIMEOUT_MS,
    })
    expect(result.stdout).toBe('MemsvcError UNAVAILABLE 14 requestId=false\n')
  })
})
