import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_INDEXED_VECTOR_VALUE } from '../../src/db/vector-storage.js'
import {
  CHARS_PER_TOKEN_ESTIMATE,
  DEFAULT_EMBEDDING_POLICY,
  type EmbeddingCall,
  EmbeddingError,
  embedTexts,
  retryDelay,
  truncateForEmbedder,
} from '../../src/providers/embed.js'
import { parseRetryAfter } from '../../src/providers/http.js'
import { allEmbeddings } from '../../src/providers/protocol.js'
import { ProviderCalls } from '../../src/providers/provider-calls.js'
import { type FakeEmbedder, hashedBagOfWords, startFakeEmbedder } from '../support/fake-embedder.js'

const SECRET = 'sk-embedding-client-secret-42'

describe('embedding client', () => {
  let server: FakeEmbedder
  beforeAll(async () => {
    server = await startFakeEmbedder({ dimensions: 8 })
  })
  afterAll(() => server.close())

  const waits: number[] = []
  const call = (
    providerType: string,
    apiPath: string,
    overrides: Partial<EmbeddingCall['policy']> = {},
  ): EmbeddingCall => ({
    embedder: {
      id: 'e1',
      providerType,
      endpointUrl: server.url,
      apiPath,
      modelIdentifier: 'bow',
      dimensionality: 8,
      maxSequenceLength: 4,
    },
    access: {
      credential: { kind: 'API_KEY', headerName: 'Authorization', prefix: 'Bearer', secret: SECRET },
      redact: (text) => text.split(SECRET).join('[redacted]'),
    },
    policy: { ...DEFAULT_EMBEDDING_POLICY, batchSize: 2, retryBaseMs: 100, maxRetryDelayMs: 5_000, ...overrides },
    maxVectorValue: MAX_INDEXED_VECTOR_VALUE,
    sleep: async (ms) => void waits.push(ms),
  })

  it.each([
    ['VENDORA', '/v1/embeddings'],
    ['TEI', '/embed'],
    ['VENDORD', '/v2/embed'],
  ])(
    '%s: one vector per text, in order, in batches of batchSize, inputs cut to the sequence budget',
    async (providerType, apiPath) => {
      const before = server.requests.length
      const texts = ['alpha beta', 'gamma', 'delta epsilon zeta eta theta', 'iota']
      const vectors = await embedTexts(call(providerType, apiPath), texts)
      const sent = server.requests.slice(before)
      expect(sent.map((request) => request.inputs.length)).toEqual([2, 2])
      expect(sent.every((request) => request.authorization === `Bearer ${SECRET}`)).toBe(true)
      const budget = 4 * CHARS_PER_TOKEN_ESTIMATE
      expect(sent.flatMap((request) => request.inputs)).toEqual(texts.map((text) => text.slice(0, budget)))
      expect(vectors).toEqual(texts.map((text) => hashedBagOfWords(text.slice(0, budget), 8)))
    },
  )

  it('waits what Retry-After asks on a 429, backs off exponentially on 5xx, and fails transient when attempts run out', async () => {
    waits.length = 0
    server.plan(
      { kind: 'status', status: 429, retryAfterSeconds: 2 },
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503 },
    )
    await embedTexts(call('TEI', '/embed'), ['one'])
    expect(waits[0]).toBe(2_000)
    expect(waits[1]).toBeGreaterThanOrEqual(160) // 200 ± 20 % for the second failed attempt
    expect(waits[2]).toBeGreaterThanOrEqual(320)
    server.plan(...Array.from({ length: 3 }, () => ({ kind: 'status' as const, status: 502 })))
    const error = await embedTexts(call('TEI', '/embed', { attemptsPerBatch: 3 }), ['two']).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(EmbeddingError)
    expect(error).toMatchObject({ permanent: false, message: expect.stringContaining('(after 3 attempts)') })
  })

  it('a Retry-After beyond the longest wait hands the retry to the job queue', async () => {
    waits.length = 0
    server.plan({ kind: 'status', status: 429, retryAfterSeconds: 60 })
    const error = await embedTexts(call('TEI', '/embed'), ['three']).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ permanent: false })
    expect(waits).toEqual([])
  })

  it('a request without an answer in time is not tried again in the run: the error names the embedder and asks for the cool-down', async () => {
    waits.length = 0
    const before = server.requests.length
    server.plan({ kind: 'stall' })
    const providerCalls = new ProviderCalls(60_000)
    const stalled = { ...call('TEI', '/embed', { requestTimeoutMs: 200, stallCooldownMs: 60_000 }), providerCalls }
    stalled.embedder = { ...stalled.embedder, displayName: 'local TEI' }
    const error = await embedTexts(stalled, ['four']).catch((caught: unknown) => caught)
    expect(error).toMatchObject({
      permanent: false,
      retryAfterMs: 60_000,
      message: 'embedder "local TEI" (e1): no answer within 200 ms',
    })
    expect(server.requests.length - before).toBe(1)
    expect(waits).toEqual([])
    // Stalled now: the next call is refused without a request, naming the embedder and the timeout.
    const refused = await embedTexts(stalled, ['five']).catch((caught: unknown) => caught)
    expect(refused).toMatchObject({
      permanent: false,
      message: expect.stringContaining('embedder "local TEI" (e1) stalled'),
    })
    expect((refused as EmbeddingError).message).toContain('no answer within 200 ms')
    expect(server.requests.length - before).toBe(1)
  })

  it('4xx and wrong dimensionality are permanent; the secret never reaches the message', async () => {
    server.plan({ kind: 'status', status: 401, message: `bad key ${SECRET}` })
    const unauthorised = (await embedTexts(call('VENDORA', '/v1/embeddings'), ['x']).catch(
      (caught: unknown) => caught,
    )) as EmbeddingError
    expect(unauthorised).toMatchObject({ permanent: true })
    expect(unauthorised.message).toContain('bad key [redacted]')
    expect(unauthorised.message).not.toContain(SECRET)
    server.plan({ kind: 'dimensions', dimensions: 3 })
    await expect(embedTexts(call('VENDORA', '/v1/embeddings'), ['x'])).rejects.toMatchObject({
      permanent: true,
      message: expect.stringContaining('returned 3 dimensions'),
    })
  })

  it('reads every response shape, and Retry-After as seconds or a date', () => {
    expect(
      allEmbeddings({
        data: [
          { index: 1, embedding: [2] },
          { index: 0, embedding: [1] },
        ],
      }),
    ).toEqual([[1], [2]])
    expect(allEmbeddings({ embeddings: { float: [[1], [2]] } })).toEqual([[1], [2]])
    expect(allEmbeddings({ embeddings: [{ values: [3] }] })).toEqual([[3]])
    expect(allEmbeddings({ embedding: [4, 5] })).toEqual([[4, 5]])
    expect(allEmbeddings({ nothing: true })).toBeUndefined()
    expect(parseRetryAfter('3')).toBe(3_000)
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000)
    expect(parseRetryAfter('soon')).toBeUndefined()
    expect(
      retryDelay({ ...DEFAULT_EMBEDDING_POLICY, retryBaseMs: 100, maxRetryDelayMs: 1_000 }, 10, undefined, () => 0.5),
    ).toBe(1_000)
    expect(truncateForEmbedder('abcdef', undefined)).toBe('abcdef')
  })
})
