// Every list and text field of the REST API grown to its limit, just past it and far past it
// (issue 30), against the built executable in its own process, so that /livez latency and RSS are the
// server's alone: never a 5xx, a 4xx past every limit naming the field (or a 413 for the body), RSS
// bounded and /livez answering within 1 s throughout. Before the limits, one 4 MB list cost the
// server 1.5 GB and blocked /livez for 3 s, and a 20 MB one ended the process.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_LABEL_VALUE_LENGTH, MAX_LABELS } from '../../src/validation/common.js'
import {
  MAX_BATCH_SIZE,
  MAX_CONTENT_BYTES,
  MAX_METADATA_BYTES,
  MAX_METADATA_PROPERTIES,
  MAX_SEPARATOR_LENGTH,
  MAX_SEPARATORS,
  MAX_SPACE_EMBEDDERS,
  MAX_SPACE_NAME_LENGTH,
} from '../../src/validation/memory.js'
import { MAX_STOP_SEQUENCES } from '../../src/validation/registry.js'
import {
  DEFAULT_REQUEST_BYTES,
  MEMORY_BATCH_REQUEST_BYTES,
  MEMORY_REQUEST_BYTES,
} from '../../src/validation/request-limits.js'
import { MAX_MESSAGE_LENGTH, MAX_SPACE_KEYS } from '../../src/validation/retrieval.js'
import { createTestDatabase, type TestDatabase } from '../support/databases.js'
import {
  createSandbox,
  killAllProcesses,
  type Sandbox,
  type ServerProcess,
  servePlaintextOnPostgres,
} from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { callJson } from '../support/http-client.js'
import { probeLivezFromChild } from '../support/livez-probe.js'

const MIB = 1024 * 1024
const KIB = 1024
const SOME_ID = '00000000-0000-4000-8000-000000000000'
/** The bound for /livez while the attacks run. */
const LIVEZ_BOUND_MS = 1_000
/** What the server's RSS may grow by over the whole run (it grew by gigabytes before). */
const RSS_GROWTH_BOUND_KB = 400 * KIB
const RUNS = 80

/** /livez from a child process (its times are the server's alone) and the server's RSS, sampled every 20 ms, until stopped. */
function watchServer(server: ServerProcess) {
  const livez = probeLivezFromChild(server.restBase)
  let peakKb = server.rssKb()
  const sampler = setInterval(() => {
    peakKb = Math.max(peakKb, server.rssKb())
  }, 20)
  return {
    async stop() {
      clearInterval(sampler)
      const { slowestMs, failed } = await livez.stop()
      return { slowestMs, failed, peakKb }
    },
  }
}

describe('every list and text field grown to its limit and past it', () => {
  let sandbox: Sandbox
  let database: TestDatabase
  let embedder: FakeEmbedder
  let server: ServerProcess
  let userKey: string
  let embedderId: string
  let spaceId: string

  const post = (path: string, body: string, key = userKey) => callJson('POST', `${server.restBase}${path}`, key, body)

  beforeAll(async () => {
    sandbox = createSandbox()
    database = await createTestDatabase()
    embedder = await startFakeEmbedder()
    server = await servePlaintextOnPostgres(sandbox, database.jdbcUrl)
    const rootKey = (await post('/v1/system/init', '{}', '')).json.rootApiKey
    const user = await post('/v1/users', JSON.stringify({ username: 'grower' }), rootKey)
    userKey = (await post('/v1/apikeys', JSON.stringify({ ownerId: user.json.userId }), rootKey)).json.rawApiKey
    embedderId = (
      await post(
        '/v1/embedders',
        JSON.stringify({
          displayName: 'fake',
          providerType: 'TEI',
          endpointUrl: embedder.url,
          modelIdentifier: 'm',
          dimensionality: embedder.dimensions,
        }),
      )
    ).json.embedderId
    spaceId = (await post('/v1/spaces', JSON.stringify({ name: 'grown', spaceEmbedders: [{ embedderId }] }))).json
      .spaceId
  })
  afterAll(async () => {
    await server?.stop()
    killAllProcesses()
    await embedder?.close()
    await database?.drop()
    sandbox?.remove()
  })

  interface GrownField {
    field: string
    limit: number
    /** The largest size worth sending: past it the body alone is over its route's limit. */
    largest: number
    path: string
    body: (size: number) => unknown
    /** A 413 (the body over its route's size limit) instead of a 400 naming the field. */
    tooLargeAbove?: number
  }
  const space = (extra: Record<string, unknown>) => ({
    name: `grown-${Math.random()}`,
    spaceEmbedders: [{ embedderId }],
    ...extra,
  })
  const FIELDS: GrownField[] = [
    {
      field: 'memoryIds',
      limit: MAX_BATCH_SIZE,
      largest: 100_000,
      path: '/v1/memories:batchDelete',
      body: (size) => ({ memoryIds: Array(size).fill(SOME_ID) }),
    },
    {
      field: 'spaceEmbedders',
      limit: MAX_SPACE_EMBEDDERS,
      largest: 20_000,
      path: '/v1/spaces',
      body: (size) => space({ spaceEmbedders: Array.from({ length: size }, () => ({ embedderId: SOME_ID })) }),
    },
    {
      field: 'defaultChunkingConfig.recursive.separators',
      limit: MAX_SEPARATORS,
      largest: 100_000,
      path: '/v1/spaces',
      body: (size) => space({ defaultChunkingConfig: { recursive: { separators: Array(size).fill('.') } } }),
    },
    {
      field: 'defaultChunkingConfig.recursive.separators.0',
      limit: MAX_SEPARATOR_LENGTH,
      largest: 2 * MIB,
      path: '/v1/spaces',
      body: (size) => space({ defaultChunkingConfig: { recursive: { separators: ['s'.repeat(size)] } } }),
    },
    {
      field: 'name',
      limit: MAX_SPACE_NAME_LENGTH,
      largest: 2 * MIB,
      path: '/v1/spaces',
      body: (size) => space({ name: 'n'.repeat(size) }),
    },
    {
      field: 'labels',
      limit: MAX_LABELS,
      largest: 9_000,
      path: '/v1/spaces',
      body: (size) => space({ labels: Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}`, 'v'])) }),
    },
    {
      field: 'labels.k',
      limit: MAX_LABEL_VALUE_LENGTH,
      largest: 2 * MIB,
      path: '/v1/spaces',
      body: (size) => space({ labels: { k: 'v'.repeat(size) } }),
    },
    {
      field: 'metadata',
      limit: MAX_METADATA_PROPERTIES,
      largest: 9_000,
      path: '/v1/memories',
      body: (size) => ({
        spaceId,
        originalContent: 'note',
        metadata: Object.fromEntries(Array.from({ length: size }, (_, i) => [`p${i}`, i])),
      }),
    },
    {
      field: 'metadata',
      // One property holding a string: its JSON is the string and 8 more bytes.
      limit: MAX_METADATA_BYTES - 8,
      largest: 40 * MIB,
      path: '/v1/memories',
      body: (size) => ({ spaceId, originalContent: 'note', metadata: { p: 'm'.repeat(size) } }),
      tooLargeAbove: MEMORY_REQUEST_BYTES,
    },
    {
      field: 'originalContent',
      limit: MAX_CONTENT_BYTES,
      largest: 40 * MIB,
      path: '/v1/memories',
      body: (size) => ({ spaceId, originalContent: 'c'.repeat(size) }),
      tooLargeAbove: MEMORY_REQUEST_BYTES,
    },
    {
      field: 'requests',
      limit: MAX_BATCH_SIZE,
      largest: 100_000,
      path: '/v1/memories:batchCreate',
      body: (size) => ({ requests: Array(size).fill(0) }),
    },
    {
      field: 'spaceKeys',
      limit: MAX_SPACE_KEYS,
      largest: 20_000,
      path: '/v1/memories:retrieve',
      body: (size) => ({ message: 'm', spaceKeys: Array.from({ length: size }, () => ({ spaceId })) }),
    },
    {
      field: 'message',
      limit: MAX_MESSAGE_LENGTH,
      largest: 2 * MIB,
      path: '/v1/memories:retrieve',
      body: (size) => ({ message: 'w'.repeat(size), spaceKeys: [{ spaceId }] }),
    },
    {
      field: 'defaultSamplingParams.stopSequences',
      limit: MAX_STOP_SEQUENCES,
      largest: 100_000,
      path: '/v1/llms',
      body: (size) => ({
        displayName: 'grown',
        providerType: 'OPENAI',
        endpointUrl: 'http://127.0.0.1:9',
        modelIdentifier: 'm',
        defaultSamplingParams: { stopSequences: Array(size).fill('x') },
      }),
    },
  ]
  const sizeLimitOf = (path: string) =>
    path === '/v1/memories'
      ? MEMORY_REQUEST_BYTES
      : path === '/v1/memories:batchCreate'
        ? MEMORY_BATCH_REQUEST_BYTES
        : DEFAULT_REQUEST_BYTES

  it('answers 4xx past every limit, never 5xx, with bounded memory and /livez within 1 s', async () => {
    const baselineKb = server.rssKb()
    const watch = watchServer(server)
    const sizes = (field: GrownField) =>
      fc.constantFrom(field.limit, field.limit + 1, field.limit * 10, field.limit * 1000, field.largest)
    const anyField = fc
      .constantFrom(...FIELDS)
      .chain((field) => sizes(field).map((size) => ({ field, size: Math.min(size, field.largest) })))
    const seen: string[] = []
    await fc.assert(
      fc.asyncProperty(anyField, async ({ field, size }) => {
        const body = JSON.stringify(field.body(size))
        const answer = await post(field.path, body)
        seen.push(`${field.field}×${size}: ${answer.status}`)
        expect(answer.status).toBeLessThan(500)
        if (size <= field.limit) return
        if (Buffer.byteLength(body) > sizeLimitOf(field.path)) {
          expect(answer.status).toBe(413)
          return
        }
        if (field.tooLargeAbove !== undefined && answer.status === 413) return
        expect(answer.status).toBe(400)
        const named = answer.json.error.details.map((detail: { field: string }) => detail.field)
        expect(named.some((name: string) => name === field.field || name === 'body')).toBe(true)
      }),
      { numRuns: RUNS, seed: 30 },
    )
    const { slowestMs, failed, peakKb } = await watch.stop()
    console.log(
      `grown fields: ${seen.length} requests, slowest /livez ${slowestMs.toFixed(0)} ms, server RSS ${(baselineKb / KIB).toFixed(0)} → peak ${(peakKb / KIB).toFixed(0)} MiB`,
    )
    if (process.env.MEMSVC_GROWTH_VERBOSE) console.log(seen.join('\n'))
    expect(failed).toBe(0)
    expect(slowestMs).toBeLessThan(LIVEZ_BOUND_MS)
    expect(peakKb - baselineKb).toBeLessThan(RSS_GROWTH_BOUND_KB)
  })
})
