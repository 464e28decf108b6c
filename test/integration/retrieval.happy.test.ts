import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { updateEmbedder } from '../../src/domain/embedders.js'
import { createReranker } from '../../src/domain/rerankers.js'
import { retrieveMemories } from '../../src/domain/retrieval.js'
import { ENGINES } from '../support/databases.js'
import {
  expectedAnswer,
  type FakeRerankerLlm,
  rerankScore,
  startFakeRerankerLlm,
} from '../support/fake-reranker-llm.js'
import { httpRequest } from '../support/http-client.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { CORPUS, collect, itemsOf, type LoadedCorpus, loadCorpus, QUESTIONS } from '../support/retrieval-corpus.js'

const MODES = ['VECTOR', 'KEYWORD', 'HYBRID'] as const
/** The least score of a passage that answers its question, in every mode (test/api/retrieval-cases.ts RELATED_FLOOR). */
const RELATED_FLOOR = 0.35

describe.each(ENGINES)('retrieval (%s)', (engine) => {
  let fixture: MemoryFixture
  let chat: FakeRerankerLlm
  let corpus: LoadedCorpus
  let second: LoadedCorpus
  let embedderId: string
  let llmId: string
  let rerankerIds: string[]
  const context = () => fixture.server.server.context
  const retrieve = (input: Record<string, unknown>, actor = fixture.alice) =>
    retrieveMemories(context(), fixture.as(actor), input)

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 64 })
    chat = await startFakeRerankerLlm()
    embedderId = await fixture.registerEmbedder(fixture.alice)
    const otherEmbedder = await fixture.registerEmbedder(fixture.alice, { modelIdentifier: 'second-model' })
    corpus = await loadCorpus(fixture, fixture.alice, [embedderId], { name: `corpus-${engine}` })
    second = await loadCorpus(fixture, fixture.alice, [embedderId, otherEmbedder], {
      name: `corpus-two-${engine}`,
      publicRead: true,
    })
    const llm = await fixture.call(
      'rest',
      'createLlm',
      {
        displayName: 'fake chat',
        providerType: 'VLLM',
        endpointUrl: chat.url,
        modelIdentifier: 'fake-chat',
        defaultSamplingParams: { temperature: 0.2, maxTokens: 200 },
      },
      fixture.alice.apiKey,
    )
    llmId = llm.body.llmId
    rerankerIds = []
    for (const providerType of ['TEI', 'VENDORA'] as const) {
      const reranker = await createReranker(context(), fixture.as(fixture.alice), {
        displayName: `rerank ${providerType}`,
        providerType,
        endpointUrl: chat.url,
        modelIdentifier: 'fake-rerank',
      })
      rerankerIds.push(reranker.rerankerId)
    }
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
    await chat?.close()
  })

  describe.each(MODES)('mode %s', (mode) => {
    it.each(QUESTIONS)('ranks the passage that answers "$message" first', async ({ message, answer }) => {
      const events = await collect(
        await retrieve({ message, mode, spaceKeys: [{ spaceId: corpus.spaceId }], requestedSize: 3 }),
      )
      const items = itemsOf(events)
      expect(items.length).toBeGreaterThan(0)
      expect(corpus.keyOf.get(items[0]!.memoryId)).toBe(answer)
      expect(items[0]!.relevanceScore).toBeGreaterThan(RELATED_FLOOR)
      for (const item of items) {
        expect(item.relevanceScore).toBeGreaterThanOrEqual(0)
        expect(item.relevanceScore).toBeLessThanOrEqual(1)
      }
      expect(items.map((item) => item.relevanceScore)).toEqual(
        [...items.map((item) => item.relevanceScore)].sort((a, b) => b - a),
      )
    })
  })

  describe.each(MODES)('mode %s, then reranked', (mode) => {
    it.each(QUESTIONS)(
      'ranks the passage that answers "$message" first, with the reranker\'s scores',
      async ({ message, answer }) => {
        for (const [index, rerankerId] of rerankerIds.entries()) {
          const before = chat.requests.length
          const events = await collect(
            await retrieve({
              message,
              mode,
              spaceKeys: [{ spaceId: corpus.spaceId }],
              requestedSize: 3,
              postProcessor: { rerankerId },
            }),
          )
          const items = itemsOf(events)
          expect(corpus.keyOf.get(items[0]!.memoryId)).toBe(answer)
          for (const item of items) expect(item.relevanceScore).toBeCloseTo(rerankScore(message, item.chunkText), 10)
          // The provider's own API: TEI {query, texts} at /rerank, the Cohere style {model, query, documents, top_n} at /v1/rerank.
          const sent = chat.requests.slice(before)
          expect(sent).toHaveLength(1)
          if (index === 0)
            expect(sent[0]).toMatchObject({ path: '/rerank', body: { query: message, texts: expect.any(Array) } })
          else
            expect(sent[0]).toMatchObject({
              path: '/v1/rerank',
              body: {
                model: 'fake-rerank',
                query: message,
                documents: expect.any(Array),
                top_n: sent[0]!.body.documents.length,
              },
            })
        }
      },
    )
  })

  it('streams BEGIN, each memory before its first chunk, the chunks with offsets into the content, END', async () => {
    const events = await collect(
      await retrieve({
        message: QUESTIONS[0]!.message,
        spaceKeys: [{ spaceId: corpus.spaceId }],
        requestedSize: 4,
        fetchMemoryContent: true,
      }),
    )
    expect(events[0]).toMatchObject({ resultSetBoundary: { kind: 'BEGIN', stageName: 'retrieval', expectedItems: 4 } })
    expect(events.at(-1)).toMatchObject({
      resultSetBoundary: { kind: 'END', resultSetId: (events[0] as any).resultSetBoundary.resultSetId },
    })
    const defined: string[] = []
    for (const event of events) {
      if ('memoryDefinition' in event) {
        const memory = event.memoryDefinition.memory
        expect(defined).not.toContain(memory.memoryId)
        defined.push(memory.memoryId)
        expect(memory.originalContent).toBe(
          CORPUS.find((entry) => entry.key === corpus.keyOf.get(memory.memoryId))!.text,
        )
      }
      if ('retrievedItem' in event) {
        const chunk = event.retrievedItem.chunk
        expect(defined[chunk.memoryIndex]).toBe(chunk.memoryId)
        const content = CORPUS.find((entry) => entry.key === corpus.keyOf.get(chunk.memoryId))!.text
        expect(content.slice(chunk.startOffset, chunk.endOffset)).toBe(chunk.chunkText)
      }
    }
    expect(itemsOf(events)).toHaveLength(4)
    const without = await collect(
      await retrieve({ message: 'Paris', spaceKeys: [{ spaceId: corpus.spaceId }], fetchMemory: false }),
    )
    expect(without.some((event) => 'memoryDefinition' in event)).toBe(false)
  })

  it('fuses two spaces and two embedders; an embedder weighted 0 is left out', async () => {
    const message = QUESTIONS[1]!.message
    const events = await collect(
      await retrieve({
        message,
        mode: 'VECTOR',
        spaceKeys: [{ spaceId: corpus.spaceId }, { spaceId: second.spaceId }],
        requestedSize: 4,
      }),
    )
    const top = itemsOf(events)
      .slice(0, 2)
      .map((item) => item.memoryId)
    expect(new Set(top)).toEqual(new Set([corpus.idOf.get('eiffel'), second.idOf.get('eiffel')]))
    const weighted = await collect(
      await retrieve({
        message,
        mode: 'VECTOR',
        spaceKeys: [{ spaceId: second.spaceId, embedderWeights: [{ embedderId, weight: 0 }] }],
        requestedSize: 2,
      }),
    )
    expect(second.keyOf.get(itemsOf(weighted)[0]!.memoryId)).toBe('eiffel')
  })

  const filterCases: Array<[string, string[]]> = [
    ["val('$.topic') = 'travel'", ['eiffel', 'wall']],
    ["val('$.topic') != 'travel'", ['mitochondria', 'photosynthesis', 'postgres', 'rust']],
    ["val('$.year') < 1800", ['photosynthesis', 'wall']],
    ["val('$.year') >= 1889", ['eiffel']],
    [
      "val('$.topic') IN ('biology', 'programming') AND NOT val('$.tags') CONTAINS 'rust'",
      ['mitochondria', 'photosynthesis', 'postgres'],
    ],
    ["val('$.tags') OVERLAPS ('china', 'cells')", ['mitochondria', 'wall']],
    ["val('$.tags') CONTAINS ('france', 'landmark')", ['eiffel']],
    ["val('$.author.name') LIKE 'O''%'", ['rust']],
    ["val('$.author.name') ILIKE 'ada'", ['postgres']],
    ["val('$.year') IS NULL", ['mitochondria', 'postgres', 'rust']],
    ["val('$.author') IS NOT NULL", ['postgres', 'rust']],
    ["CAST(val('$.rating') AS NUMBER) > 4", ['eiffel', 'photosynthesis']],
    ["CAST(val('$.reviewed') AS BOOLEAN) = FALSE", ['postgres']],
    ["CAST(val('$.published') AS TIMESTAMP) >= '2022-01-01'", ['photosynthesis']],
    [
      "CAST(val('$.year') AS TEXT) = '1889' OR (val('$.topic') = 'programming' AND val('$.tags[0]') = 'databases')",
      ['eiffel', 'postgres'],
    ],
    ["val('$.topic') = 'x''; drop table memories; --'", []],
  ]
  it.each(filterCases)('filter %s keeps exactly the matching memories in every mode', async (filter, expected) => {
    for (const mode of MODES) {
      // A message sharing words with every passage, so KEYWORD finds each one the filter lets through.
      const message = CORPUS.map((entry) => entry.text).join(' ')
      const events = await collect(
        await retrieve({ message, mode, spaceKeys: [{ spaceId: corpus.spaceId, filter }], requestedSize: 10 }),
      )
      expect(
        itemsOf(events)
          .map((item) => corpus.keyOf.get(item.memoryId))
          .sort(),
        `${mode}`,
      ).toEqual(expected)
    }
  })

  it('applies the same filter language to listing and batch-deleting memories', async () => {
    const { listMemories, batchDeleteMemories } = await import('../../src/domain/memories.js')
    const listed = await listMemories(context(), fixture.as(fixture.alice), {
      spaceId: second.spaceId,
      filter: "val('$.topic') = 'biology'",
    })
    expect(listed.memories.map((memory) => second.keyOf.get(memory.memoryId)).sort()).toEqual([
      'mitochondria',
      'photosynthesis',
    ])
    const scratch = await loadCorpus(fixture, fixture.alice, [embedderId], { name: `scratch-${engine}` })
    const deleted = await batchDeleteMemories(context(), fixture.as(fixture.alice), {
      spaceId: scratch.spaceId,
      filter: "val('$.tags') CONTAINS 'landmark'",
      expectedCount: 2,
    })
    expect(deleted.deletedCount).toBe(2)
    const rest = await listMemories(context(), fixture.as(fixture.alice), { spaceId: scratch.spaceId })
    expect(rest.memories.map((memory) => scratch.keyOf.get(memory.memoryId)).sort()).toEqual([
      'mitochondria',
      'photosynthesis',
      'postgres',
      'rust',
    ])
  })

  it('a filtered query still returns requestedSize items when that many match', async () => {
    const { createMemory } = await import('../../src/domain/memories.js')
    const filler = await loadCorpus(fixture, fixture.alice, [embedderId], { name: `filler-${engine}` })
    const ids: string[] = []
    for (let i = 0; i < 40; i++) {
      const { memory } = await createMemory(context(), fixture.as(fixture.alice), {
        spaceId: filler.spaceId,
        originalContent: `Filler note ${i} about towers, Paris, leaves and glucose, number ${i}.`,
        metadata: { topic: 'filler', n: i },
      })
      ids.push(memory.memoryId)
    }
    for (const id of ids) await fixture.settled(id)
    const events = await collect(
      await retrieve({
        message: 'Which tower stands in Paris?',
        mode: 'VECTOR',
        hnsw: { efSearch: 10 },
        spaceKeys: [{ spaceId: filler.spaceId, filter: "val('$.topic') = 'travel'" }],
        requestedSize: 2,
      }),
    )
    expect(
      itemsOf(events)
        .map((item) => filler.keyOf.get(item.memoryId))
        .sort(),
    ).toEqual(['eiffel', 'wall'])
    const many = await collect(
      await retrieve({
        message: 'tower',
        mode: 'VECTOR',
        hnsw: { efSearch: 5 },
        spaceKeys: [{ spaceId: filler.spaceId, filter: "CAST(val('$.n') AS NUMBER) >= 5" }],
        requestedSize: 30,
      }),
    )
    expect(itemsOf(many)).toHaveLength(30)
  })

  it('applies relevanceThreshold, maxResults and chronologicalResort', async () => {
    const base = { message: QUESTIONS[0]!.message, spaceKeys: [{ spaceId: corpus.spaceId }], requestedSize: 6 }
    const all = itemsOf(await collect(await retrieve(base)))
    // Between the best and the second best, whose scores are far apart: only the answer stays.
    const threshold = (all[0]!.relevanceScore + all[1]!.relevanceScore) / 2
    const kept = itemsOf(await collect(await retrieve({ ...base, postProcessor: { relevanceThreshold: threshold } })))
    expect(kept.every((item) => item.relevanceScore >= threshold)).toBe(true)
    expect(kept.map((item) => item.memoryId)).toEqual([all[0]!.memoryId])
    expect(itemsOf(await collect(await retrieve({ ...base, postProcessor: { maxResults: 2 } })))).toHaveLength(2)
    const resorted = itemsOf(await collect(await retrieve({ ...base, postProcessor: { chronologicalResort: true } })))
    const order = CORPUS.map((entry) => corpus.idOf.get(entry.key))
    expect(resorted.map((item) => order.indexOf(item.memoryId))).toEqual(
      [...resorted.map((item) => order.indexOf(item.memoryId))].sort((a, b) => a - b),
    )
  })

  it('answers from the retrieved chunks with the registered LLM, its sampling defaults and the request overrides', async () => {
    const events = await collect(
      await retrieve({
        message: QUESTIONS[0]!.message,
        spaceKeys: [{ spaceId: corpus.spaceId }],
        requestedSize: 3,
        postProcessor: { llmId, llmTemperature: 0.9, systemPrompt: 'Answer briefly.' },
      }),
    )
    const reply = events.at(-1) as { abstractReply: { text: string } }
    expect(reply.abstractReply.text).toBe(`According to the context: ${CORPUS[1].text}`)
    const sent = chat.requests.at(-1)!.body
    expect(sent).toMatchObject({
      model: 'fake-chat',
      temperature: 0.9,
      max_tokens: 200,
      messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user' }],
    })
    expect(expectedAnswer(sent.messages[1].content)).toBe(reply.abstractReply.text)
    const defaults = await collect(
      await retrieve({ message: 'Paris', spaceKeys: [{ spaceId: corpus.spaceId }], postProcessor: { llmId } }),
    )
    expect(defaults.at(-1)).toHaveProperty('abstractReply')
    expect(chat.requests.at(-1)!.body.temperature).toBe(0.2)
  })

  it('yields the first item before the LLM answer exists, and the answer after the items', async () => {
    const release = chat.hold()
    const requestsBefore = chat.requests.length
    const iterator = (
      await retrieve({
        message: QUESTIONS[1]!.message,
        spaceKeys: [{ spaceId: corpus.spaceId }],
        postProcessor: { llmId },
      })
    )[Symbol.asyncIterator]()
    const seen = []
    for (;;) {
      const { value } = await iterator.next()
      seen.push(value)
      if ('retrievedItem' in value) break
    }
    // The item is out while the LLM holds its answer.
    expect(seen.some((event) => 'abstractReply' in event)).toBe(false)
    release()
    const rest = []
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value)
    expect(chat.requests.length).toBe(requestsBefore + 1)
    expect(rest.at(-2)).toMatchObject({ resultSetBoundary: { kind: 'END' } })
    expect(rest.at(-1)).toMatchObject({ abstractReply: { text: expect.stringContaining('Eiffel') } })
  })

  it('another user retrieves from a publicRead space', async () => {
    const events = await collect(
      await retrieve({ message: QUESTIONS[2]!.message, spaceKeys: [{ spaceId: second.spaceId }] }, fixture.bob),
    )
    expect(second.keyOf.get(itemsOf(events)[0]!.memoryId)).toBe('rust')
  })

  it('embeds a repeated message once, and again once its embedder is updated', async () => {
    const message = `where was the tower built, asked only here (${engine})`
    const asked = () => fixture.embedder.requests.filter((request) => request.inputs.includes(message)).length
    const ask = async () =>
      itemsOf(await collect(await retrieve({ message, mode: 'VECTOR', spaceKeys: [{ spaceId: corpus.spaceId }] })))
    const first = await ask()
    expect(await ask()).toEqual(first)
    expect(asked()).toBe(1)
    await updateEmbedder(context(), fixture.as(fixture.alice), embedderId, { description: `touched (${engine})` })
    expect(await ask()).toEqual(first)
    expect(asked()).toBe(2)
    const metrics = await httpRequest(`${fixture.server.restUrl}/metrics`, {
      headers: { 'x-service-metrics-key': 'test-metrics-secret' },
    })
    expect(metrics.body).toMatch(/^memsvc_query_embedding_cache_total\{outcome="hit"\} [1-9]/m)
    expect(metrics.body).toMatch(/^memsvc_query_embedding_cache_total\{outcome="miss"\} [1-9]/m)
  })
})
