// The built SDK (sdk/dist, ESM and CommonJS) against a real in-process server: initialise,
// create and list keys, register the local fake embedder, a space and memories, wait for
// them to be embedded, then retrieve with `for await`. Also: retries on UNAVAILABLE through
// a proxy that starts refusing, and the version it carries.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { collect, ENTRY_POINTS, loadSdk, type Sdk } from '../support/sdk.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { waitFor } from '../support/wait.js'

const DIMENSIONS = 32
const MEMORIES = [
  { key: 'paris', text: 'The Eiffel tower in Paris was finished in 1889 for the world fair.' },
  { key: 'kyoto', text: 'Kyoto temples and gardens are famous for autumn maple leaves.' },
  { key: 'mitosis', text: 'During mitosis a cell divides its chromosomes into two nuclei.' },
]

describe.each(ENGINES)('SDK against an in-process server (%s)', (engine) => {
  let server: TestServer
  let embedder: FakeEmbedder
  let rootKey: string
  let rootUserId: string

  beforeAll(async () => {
    embedder = await startFakeEmbedder({ dimensions: DIMENSIONS })
    server = await startTestServer({ engine })
    const sdk = await loadSdk('esm')
    const anonymous = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}` })
    const init = await anonymous.system.initialize()
    anonymous.close()
    rootKey = init.rootApiKey!
    rootUserId = init.userId!
  })

  afterAll(async () => {
    await server?.stop()
    await embedder?.close()
  })

  describe.each(ENTRY_POINTS)('entry point %s', (entry) => {
    let sdk: Sdk
    beforeAll(async () => {
      sdk = await loadSdk(entry)
    })

    it('creates a key, lists keys, registers an embedder, a space and memories, and retrieves them as an async iterable', async () => {
      const admin = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}`, apiKey: rootKey })
      const created = await admin.apiKeys.create({ labels: { purpose: `sdk-${entry}` } })
      expect(created.rawApiKey).toMatch(/^msk_/)
      const listed = await admin.apiKeys.list()
      expect(listed.keys.map((key) => key.apiKeyId)).toContain(created.apiKeyMetadata!.apiKeyId)
      admin.close()

      const client = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}`, apiKey: created.rawApiKey })
      try {
        expect((await client.users.me()).userId).toBe(rootUserId)
        expect((await client.health.check()).status).toBe(sdk.ServingStatus.SERVING)
        const registered = await client.embedders.create({
          displayName: `fake ${entry}`,
          providerType: 'TEI',
          endpointUrl: embedder.url,
          modelIdentifier: `hashed-bow-${entry}`,
          dimensionality: DIMENSIONS,
        })
        const space = await client.spaces.create({
          name: `sdk ${entry}`,
          spaceEmbedders: [{ embedderId: registered.embedderId }],
        })
        const ids = new Map<string, string>()
        for (const memory of MEMORIES) {
          const made = await client.memories.create({
            spaceId: space.spaceId,
            originalContent: memory.text,
            metadata: { key: memory.key },
          })
          ids.set(made.memory!.memoryId, memory.key)
        }
        for (const memoryId of ids.keys()) {
          await waitFor(`memory ${memoryId} COMPLETED`, async () => {
            const memory = await client.memories.get({ memoryId })
            expect(memory.processingStatus).not.toBe(sdk.ProcessingStatus.FAILED)
            return memory.processingStatus === sdk.ProcessingStatus.COMPLETED
          })
        }

        const kinds: string[] = []
        const retrieved: string[] = []
        for await (const event of client.memories.retrieve({
          message: 'which tower is in Paris',
          spaceKeys: [{ spaceId: space.spaceId, embedderWeights: [] }],
          mode: sdk.RetrievalMode.VECTOR,
        })) {
          kinds.push(event.event?.$case ?? 'none')
          if (event.event?.$case === 'retrievedItem') retrieved.push(ids.get(event.event.value.chunk!.memoryId)!)
        }
        expect(kinds[0]).toBe('resultSetBoundary')
        expect(kinds.at(-1)).toBe('resultSetBoundary')
        expect(retrieved[0]).toBe('paris')
        expect(new Set(retrieved)).toEqual(new Set(MEMORIES.map((memory) => memory.key)))
      } finally {
        client.close()
      }
    })

    it('leaving the loop early or aborting ends the stream; an abort rejects with CANCELLED', async () => {
      const client = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}`, apiKey: rootKey })
      try {
        const space = (await client.spaces.list()).spaces.find((candidate) => candidate.name === `sdk ${entry}`)!
        const request = { message: 'Kyoto maple leaves', spaceKeys: [{ spaceId: space.spaceId, embedderWeights: [] }] }
        let seen = 0
        for await (const _event of client.memories.retrieve(request)) {
          seen++
          break
        }
        expect(seen).toBe(1)

        const controller = new AbortController()
        const stream = client.memories.retrieve(request, { signal: controller.signal })
        const first = await stream.next()
        expect(first.done).toBe(false)
        controller.abort()
        const failure = await collect(stream).catch((error: unknown) => error)
        expect(sdk.MemsvcError.is(failure)).toBe(true)
        expect(failure).toMatchObject({ code: 'CANCELLED', grpcStatus: 1 })

        const aborted = AbortSignal.abort()
        await expect(client.users.me({}, { signal: aborted })).rejects.toMatchObject({
          name: 'MemsvcError',
          code: 'CANCELLED',
        })
      } finally {
        client.close()
      }
    })
  })

  describe.each(ENTRY_POINTS)('memory lifecycle, entry point %s', (entry) => {
    it('updates with a version precondition, gets in a batch, reads the history, exports and imports a space', async () => {
      const sdk = await loadSdk(entry)
      const client = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}`, apiKey: rootKey })
      try {
        const space = (await client.spaces.list()).spaces.find((candidate) => candidate.name === `sdk ${entry}`)!
        const { memories } = await client.memories.list({ spaceId: space.spaceId })
        const memoryId = memories[0]!.memoryId
        const updated = await client.memories.update({ memoryId, expectedVersion: 1, mergeMetadata: { checked: true } })
        expect(updated).toMatchObject({ memoryId, version: 2, metadata: { checked: true } })
        await expect(
          client.memories.update({ memoryId, expectedVersion: 1, mergeMetadata: { checked: false } }),
        ).rejects.toMatchObject({ name: 'MemsvcError', code: 'FAILED_PRECONDITION', grpcStatus: 9 })

        const missing = '7f4f1c2e-3b7a-4d47-9a55-2f1f0f5b9c11'
        const batch = await client.memories.batchGet({ memoryIds: [memoryId, missing] })
        expect(batch.results.map((result) => [result.memoryId, result.result?.$case])).toEqual([
          [memoryId, 'memory'],
          [missing, 'error'],
        ])
        const history = await client.memories.history({ memoryId })
        expect(history.changes).toEqual([
          expect.objectContaining({ action: 'UPDATE', version: 2, fields: ['metadata'], changedById: rootUserId }),
        ])

        const exported = Buffer.concat(
          (await collect(client.spaces.export({ spaceId: space.spaceId }))).map((chunk) => chunk.data),
        )
        const lines = exported.toString('utf8').trimEnd().split('\n')
        expect(JSON.parse(lines[0]!)).toMatchObject({ kind: 'header' })
        expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: 'end', memoryCount: MEMORIES.length })
        const headers: Array<Record<string, string>> = []
        const imported = await client.spaces.import(
          [
            { part: { $case: 'header', value: { newSpaceName: `sdk ${entry} copy`, embedderIds: [] } } },
            { part: { $case: 'data', value: exported } },
          ],
          { onHeaders: (received) => headers.push(received) },
        )
        expect(imported).toMatchObject({ state: 'COMPLETED', memoriesImported: MEMORIES.length })
        expect(headers.length).toBeGreaterThan(0)
        expect(await client.spaces.getImport({ importId: imported.importId })).toMatchObject({
          importId: imported.importId,
          state: 'COMPLETED',
        })
        const copied = await client.memories.list({ spaceId: imported.spaceId })
        expect(copied.memories).toHaveLength(MEMORIES.length)
      } finally {
        client.close()
      }
    })
  })

  describe('retries', () => {
    let proxy: TcpProxy
    beforeAll(async () => {
      const [host, port] = server.grpcAddress.split(':')
      proxy = await startTcpProxy(host!, Number(port), { enabled: false })
    })
    afterAll(async () => {
      await proxy?.close()
    })

    it('an idempotent call retries UNAVAILABLE until the server is reachable; a create does not retry', async () => {
      const sdk = await loadSdk('esm')
      const client = new sdk.MemsvcClient({
        address: `http://127.0.0.1:${proxy.port}`,
        apiKey: rootKey,
        retry: { maxAttempts: 60, initialBackoffMs: 50, maxBackoffMs: 500 },
      })
      try {
        await expect(client.apiKeys.create({}, { retry: { maxAttempts: 60 } })).rejects.toMatchObject({
          name: 'MemsvcError',
          code: 'UNAVAILABLE',
          grpcStatus: 14,
        })
        await expect(client.system.info({}, { retry: false })).rejects.toMatchObject({ code: 'UNAVAILABLE' })
        const answer = client.system.info({}, { deadlineMs: 60_000 })
        // Switched on while the call is retrying (its first attempts were refused).
        setTimeout(() => proxy.enable(), 300)
        expect((await answer).version).toBeTruthy()
      } finally {
        client.close()
      }
    })
  })

  it('carries the server version (from the root package.json)', async () => {
    const version = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version
    const sdkManifest = JSON.parse(fs.readFileSync('sdk/package.json', 'utf8')) as { name: string; version: string }
    expect(sdkManifest).toMatchObject({ name: '@memsvc/client', version })
    for (const entry of ENTRY_POINTS) expect((await loadSdk(entry)).VERSION).toBe(version)
  })
})
