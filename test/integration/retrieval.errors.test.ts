import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReranker } from '../../src/domain/rerankers.js'
import { retrieveMemories } from '../../src/domain/retrieval.js'
import { ENGINES } from '../support/databases.js'
import { type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { collect, itemsOf, type LoadedCorpus, loadCorpus } from '../support/retrieval-corpus.js'

describe.each(ENGINES)('retrieval refusals and failures (%s)', (engine) => {
  let fixture: MemoryFixture
  let chat: FakeRerankerLlm
  let alices: LoadedCorpus
  let bobs: LoadedCorpus
  let aliceLlm: string
  let bobLlm: string
  let aliceReranker: string
  let bobReranker: string
  const context = () => fixture.server.server.context
  const retrieve = (input: Record<string, unknown>, actor = fixture.alice) =>
    retrieveMemories(context(), fixture.as(actor), input)
  const registerLlm = async (owner: typeof fixture.alice) =>
    (
      await fixture.call(
        'rest',
        'createLlm',
        { displayName: 'chat', providerType: 'VLLM', endpointUrl: chat.url, modelIdentifier: 'fake-chat' },
        owner.apiKey,
      )
    ).body.llmId as string

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 32 })
    chat = await startFakeRerankerLlm()
    alices = await loadCorpus(fixture, fixture.alice, [await fixture.registerEmbedder(fixture.alice)], {
      name: `alice-${engine}`,
    })
    bobs = await loadCorpus(fixture, fixture.bob, [await fixture.registerEmbedder(fixture.bob)], {
      name: `bob-${engine}`,
    })
    aliceLlm = await registerLlm(fixture.alice)
    bobLlm = await registerLlm(fixture.bob)
    aliceReranker = (
      await createReranker(context(), fixture.as(fixture.alice), {
        displayName: 'rr',
        providerType: 'TEI',
        endpointUrl: chat.url,
        modelIdentifier: 'rr',
      })
    ).rerankerId
    bobReranker = (
      await createReranker(context(), fixture.as(fixture.bob), {
        displayName: 'rr',
        providerType: 'TEI',
        endpointUrl: chat.url,
        modelIdentifier: 'rr',
      })
    ).rerankerId
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
    await chat?.close()
  })

  const spaceKeys = () => [{ spaceId: alices.spaceId }]
  const badInputs: Array<[string, () => Record<string, unknown>, string]> = [
    ['an empty message', () => ({ message: '  ', spaceKeys: spaceKeys() }), 'message'],
    ['no spaces', () => ({ message: 'x', spaceKeys: [] }), 'spaceKeys'],
    ['requestedSize 0', () => ({ message: 'x', spaceKeys: spaceKeys(), requestedSize: 0 }), 'requestedSize'],
    ['requestedSize 101', () => ({ message: 'x', spaceKeys: spaceKeys(), requestedSize: 101 }), 'requestedSize'],
    ['an unknown mode', () => ({ message: 'x', spaceKeys: spaceKeys(), mode: 'FUZZY' }), 'mode'],
    ['efSearch 0', () => ({ message: 'x', spaceKeys: spaceKeys(), hnsw: { efSearch: 0 } }), 'hnsw.efSearch'],
    [
      'an embedder that is not in the space',
      () => ({
        message: 'x',
        spaceKeys: [{ spaceId: alices.spaceId, embedderWeights: [{ embedderId: crypto.randomUUID(), weight: 1 }] }],
      }),
      'spaceKeys.0.embedderWeights.0.embedderId',
    ],
    [
      'a filter syntax error',
      () => ({ message: 'x', spaceKeys: [{ spaceId: alices.spaceId, filter: "val('$.a') = = 1" }] }),
      'spaceKeys.0.filter',
    ],
    [
      'a filter with a comment',
      () => ({ message: 'x', spaceKeys: [{ spaceId: alices.spaceId, filter: "val('$.a') = 1 -- and more" }] }),
      'spaceKeys.0.filter',
    ],
    [
      'an LLM of another user',
      () => ({ message: 'x', spaceKeys: spaceKeys(), postProcessor: { llmId: bobLlm } }),
      'postProcessor.llmId',
    ],
    [
      'an LLM that does not exist',
      () => ({ message: 'x', spaceKeys: spaceKeys(), postProcessor: { llmId: crypto.randomUUID() } }),
      'postProcessor.llmId',
    ],
    [
      'a reranker that does not exist',
      () => ({ message: 'x', spaceKeys: spaceKeys(), postProcessor: { rerankerId: crypto.randomUUID() } }),
      'postProcessor.rerankerId',
    ],
    [
      'a reranker of another user',
      () => ({ message: 'x', spaceKeys: spaceKeys(), postProcessor: { rerankerId: bobReranker } }),
      'postProcessor.rerankerId',
    ],
    [
      'a relevanceThreshold above 1',
      () => ({ message: 'x', spaceKeys: spaceKeys(), postProcessor: { relevanceThreshold: 1.5 } }),
      'postProcessor.relevanceThreshold',
    ],
  ]
  it.each(badInputs)(
    '%s is INVALID_ARGUMENT naming the field, before the stream starts',
    async (_name, input, field) => {
      await expect(retrieve(input())).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: [expect.objectContaining({ field })],
      })
    },
  )

  it('names the position of a filter error', async () => {
    await expect(
      retrieve({ message: 'x', spaceKeys: [{ spaceId: alices.spaceId, filter: "val('$.a') = 'x' AND" }] }),
    ).rejects.toMatchObject({
      details: [{ field: 'spaceKeys.0.filter', description: expect.stringContaining('at position 21') }],
    })
  })

  it("another user's private space and a space that does not exist answer the same NOT_FOUND", async () => {
    const missing = crypto.randomUUID()
    const privateError = await retrieve({ message: 'tower', spaceKeys: [{ spaceId: bobs.spaceId }] }).catch(
      (error) => error,
    )
    const missingError = await retrieve({ message: 'tower', spaceKeys: [{ spaceId: missing }] }).catch((error) => error)
    expect(privateError).toMatchObject({ code: 'NOT_FOUND', message: `space ${bobs.spaceId} not found` })
    expect(missingError).toMatchObject({ code: 'NOT_FOUND', message: `space ${missing} not found` })
    // Mixed with a space the caller may read, the whole request is refused.
    await expect(
      retrieve({ message: 'tower', spaceKeys: [{ spaceId: alices.spaceId }, { spaceId: bobs.spaceId }] }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('hostile filters run as plain comparisons: nothing matches and every table is still there', async () => {
    const hostile = [
      "val('$.topic') = 'travel''; drop table memories; --'",
      "val('$.topic') = '1) or pg_sleep(5) is not null or (1'",
      "val('$.topic') LIKE '%'' or 1=1 --'",
      "val('$.topic') IN ('x''); delete from chunks; --')",
    ]
    for (const filter of hostile) {
      for (const mode of ['VECTOR', 'KEYWORD'] as const) {
        const events = await collect(
          await retrieve({ message: 'tower Paris', mode, spaceKeys: [{ spaceId: alices.spaceId, filter }] }),
        )
        expect(itemsOf(events), filter).toEqual([])
      }
    }
    const intact = await collect(await retrieve({ message: 'tower Paris', spaceKeys: spaceKeys() }))
    expect(itemsOf(intact).length).toBeGreaterThan(0)
  })

  it('a failing LLM gives a status event at the end, after the items went out', async () => {
    chat.plan({ kind: 'status', status: 500, message: 'model crashed' })
    const events = await collect(
      await retrieve({ message: 'tower Paris', spaceKeys: spaceKeys(), postProcessor: { llmId: aliceLlm } }),
    )
    expect(itemsOf(events).length).toBeGreaterThan(0)
    expect(events.at(-2)).toMatchObject({ resultSetBoundary: { kind: 'END' } })
    expect(events.at(-1)).toEqual({
      status: { code: 'UNAVAILABLE', message: expect.stringContaining('model crashed') },
    })
    expect(events.some((event) => 'abstractReply' in event)).toBe(false)
  })

  it('a failing reranker is UNAVAILABLE before the stream, with the provider message', async () => {
    chat.plan({ kind: 'status', status: 400, message: 'bad rerank input' })
    await expect(
      retrieve({ message: 'tower', spaceKeys: spaceKeys(), postProcessor: { rerankerId: aliceReranker } }),
    ).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('bad rerank input'),
    })
  })

  it('an embedder that keeps failing is UNAVAILABLE before the stream; KEYWORD mode needs no embedder', async () => {
    fixture.embedder.plan({ kind: 'status', status: 503 }, { kind: 'status', status: 503 })
    // A message not asked before: a repeated one comes from the query embedding cache, without a provider call.
    await expect(
      retrieve({ message: 'tower never asked before', mode: 'VECTOR', spaceKeys: spaceKeys() }),
    ).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('HTTP 503'),
    })
    fixture.embedder.plan({ kind: 'status', status: 503 }, { kind: 'status', status: 503 })
    const keyword = await collect(await retrieve({ message: 'tower Paris', mode: 'KEYWORD', spaceKeys: spaceKeys() }))
    expect(alices.keyOf.get(itemsOf(keyword)[0]!.memoryId)).toBe('eiffel')
  })

  it('runs on pgvector 0.8 or newer, so filtered HNSW scans iterate', () => {
    const support = context().vectorSupport
    expect(support.available).toBe(true)
    const [major, minor] = (support as { version: string }).version.split('.').map(Number)
    expect(major! > 0 || minor! >= 8).toBe(true)
  })
})
