import { expect } from 'vitest'
import { MAX_REQUESTED_SIZE } from '../../src/validation/retrieval.js'
import type { ApiResult } from '../support/api-client.js'
import { expectedAnswer } from '../support/fake-reranker-llm.js'
import type { IdentityFixture } from '../support/identity-fixture.js'
import { CORPUS, QUESTIONS } from '../support/retrieval-corpus.js'
import type { RetrievalFixture } from '../support/retrieval-fixture.js'
import type { ApiCase } from './identity-cases.js'

/**
 * POST /v1/memories:retrieve and MemoryService/RetrieveMemory as a table, in the shape of
 * memory-cases: every case runs over REST (NDJSON, read whole) and gRPC (the stream,
 * collected), on PostgreSQL and PGlite, against the corpus and the local rerank and chat
 * server of test/support/retrieval-fixture.ts. A case's body is `{events}` on both
 * transports, each event `{<kind>: value}` as REST writes it.
 */

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const the = (fixture: IdentityFixture) => fixture as RetrievalFixture

type Event = Record<string, any>
const eventsOf = (result: ApiResult): Event[] => result.body.events
const kinds = (result: ApiResult) => eventsOf(result).map((event) => Object.keys(event)[0])
const itemsOf = (result: ApiResult) =>
  eventsOf(result).flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk] : []))
const memoriesOf = (result: ApiResult) =>
  eventsOf(result).flatMap((event) => (event.memoryDefinition ? [event.memoryDefinition.memory] : []))
const notices = (result: ApiResult) => eventsOf(result)[0]!.resultSetBoundary.notices
const textOf = (key: string) => CORPUS.find((entry) => entry.key === key)!.text

/** BEGIN, then each memory's definition before its first item, then END: what every finished stream looks like. */
function expectWellFormed(result: ApiResult): void {
  const events = eventsOf(result)
  const end = events.findIndex((event) => event.resultSetBoundary?.kind === 'END')
  expect(events[0]).toMatchObject({
    resultSetBoundary: { kind: 'BEGIN', stageName: 'retrieval', resultSetId: expect.any(String) },
  })
  expect(end).toBeGreaterThan(0)
  expect(events[0]!.resultSetBoundary.expectedItems ?? 0).toBe(itemsOf(result).length)
  expect(events[end]!.resultSetBoundary.resultSetId).toBe(events[0]!.resultSetBoundary.resultSetId)
  const defined = new Set<string>()
  for (const event of events.slice(1, end)) {
    if (event.memoryDefinition) defined.add(event.memoryDefinition.memory.memoryId)
    else {
      expect(Object.keys(event)).toEqual(['retrievedItem'])
      const chunk = event.retrievedItem.chunk
      expect(defined.has(chunk.memoryId), 'a memory is defined before its first chunk').toBe(true)
      expect(chunk.relevanceScore).toBeGreaterThanOrEqual(0)
      expect(chunk.relevanceScore).toBeLessThanOrEqual(1)
      expect(chunk.endOffset).toBeGreaterThan(chunk.startOffset)
    }
  }
  for (const item of itemsOf(result)) expect(memoriesOf(result)[item.memoryIndex].memoryId).toBe(item.memoryId)
}

const ask = (message: string, spaceKeys: unknown[], extra: Record<string, unknown> = {}) => ({
  message,
  spaceKeys,
  ...extra,
})

/**
 * Scores keep their meaning (src/domain/retrieval.ts fuseScores): with the fixture's hashed
 * bag-of-words embedder, a passage that answers its question scores above RELATED_FLOOR in
 * every mode (HYBRID 0.65 to 0.78, VECTOR 0.40 to 0.62, KEYWORD 0.91 to 1), and a message no
 * memory is about below UNRELATED_CEILING (HYBRID 0.11, VECTOR 0.21 at most; KEYWORD finds
 * nothing), so a relevanceThreshold between them keeps the one and cuts the other.
 */
const RELATED_FLOOR = 0.35
const UNRELATED_CEILING = 0.3
const UNRELATED = 'How should I prune my roses before the frost?'
const ROSES = 'Prune roses in late winter, just above an outward-facing bud, and cut out dead or crossing canes.'
const MODES = ['HYBRID', 'VECTOR', 'KEYWORD'] as const

export const HAPPY_CASES: ApiCase[] = [
  ...QUESTIONS.map(
    ({ message, answer }): ApiCase => ({
      name: `ranks the passage that answers "${message}" first, in a well-formed stream`,
      operation: 'retrieveMemories',
      as: 'alice',
      expect: 'OK',
      input: (_p, fixture) => ask(message, [{ spaceId: the(fixture).alices.spaceId }], { requestedSize: 3 }),
      verify: (result, _p, fixture) => {
        expectWellFormed(result)
        const items = itemsOf(result)
        expect(the(fixture).alices.keyOf.get(items[0].memoryId)).toBe(answer)
        expect(items[0].relevanceScore).toBeGreaterThan(RELATED_FLOOR)
        expect(items.length).toBeLessThanOrEqual(3)
        expect(kinds(result).at(-1)).toBe('resultSetBoundary')
      },
    }),
  ),
  ...(['VECTOR', 'KEYWORD'] as const).map(
    (mode): ApiCase => ({
      name: `mode ${mode} finds the Eiffel passage`,
      operation: 'retrieveMemories',
      as: 'alice',
      expect: 'OK',
      input: (_p, fixture) =>
        ask('Which tower stands in Paris?', [{ spaceId: the(fixture).alices.spaceId }], { mode, requestedSize: 2 }),
      verify: (result, _p, fixture) => {
        expectWellFormed(result)
        expect(the(fixture).alices.keyOf.get(itemsOf(result)[0].memoryId)).toBe('eiffel')
      },
    }),
  ),
  ...MODES.map(
    (mode): ApiCase => ({
      name: `mode ${mode}: a message no memory is about scores low, so relevanceThreshold cuts it and keeps a related answer`,
      operation: 'retrieveMemories',
      as: 'alice',
      expect: 'OK',
      input: (_p, fixture) => ask(UNRELATED, [{ spaceId: the(fixture).alices.spaceId }], { mode, requestedSize: 5 }),
      verify: async (result, _p, fixture, transport) => {
        expectWellFormed(result)
        for (const item of itemsOf(result)) expect(item.relevanceScore).toBeLessThan(UNRELATED_CEILING)
        const postProcessor = { relevanceThreshold: UNRELATED_CEILING }
        const spaceKeys = [{ spaceId: the(fixture).alices.spaceId }]
        const cut = await fixture.call(
          transport,
          'retrieveMemories',
          ask(UNRELATED, spaceKeys, { mode, postProcessor }),
          fixture.alice.apiKey,
        )
        expect(itemsOf(cut)).toEqual([])
        const kept = await fixture.call(
          transport,
          'retrieveMemories',
          ask('Which tower stands in Paris?', spaceKeys, { mode, postProcessor }),
          fixture.alice.apiKey,
        )
        expect(itemsOf(kept).map((item) => the(fixture).alices.keyOf.get(item.memoryId))).toEqual(['eiffel'])
      },
    }),
  ),
  {
    name: 'the issue\'s example: "which tower is in Paris" against a space holding only a note on pruning roses scores low in every mode',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const space = await fixture.call(
        'rest',
        'createSpace',
        { name: `roses-${crypto.randomUUID()}`, spaceEmbedders: [{ embedderId: the(fixture).aliceEmbedder }] },
        fixture.alice.apiKey,
      )
      const memory = await fixture.call(
        'rest',
        'createMemory',
        { spaceId: space.body.spaceId, originalContent: ROSES },
        fixture.alice.apiKey,
      )
      await the(fixture).settled(memory.body.memoryId)
      return { spaceId: space.body.spaceId }
    },
    input: (prepared) => ask('which tower is in Paris', [{ spaceId: prepared.spaceId }]),
    verify: async (result, prepared, fixture, transport) => {
      const [hybrid] = itemsOf(result)
      expect(hybrid.relevanceScore).toBeLessThan(UNRELATED_CEILING)
      for (const mode of ['VECTOR', 'KEYWORD']) {
        const other = await fixture.call(
          transport,
          'retrieveMemories',
          ask('which tower is in Paris', [{ spaceId: prepared.spaceId }], { mode }),
          fixture.alice.apiKey,
        )
        for (const item of itemsOf(other)) expect(item.relevanceScore, mode).toBeLessThan(UNRELATED_CEILING)
      }
    },
  },
  {
    name: 'two spaces, one filtered: items come from both, and the filtered one only where the filter holds',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask(
        'landmark tower wall',
        [
          { spaceId: the(fixture).alices.spaceId, filter: "val('$.topic') = 'travel'" },
          { spaceId: the(fixture).alicesSecond.spaceId },
        ],
        { requestedSize: 20 },
      ),
    verify: (result, _p, fixture) => {
      expectWellFormed(result)
      const { alices, alicesSecond } = the(fixture)
      const items = itemsOf(result)
      const fromFirst = items
        .filter((item) => alices.keyOf.has(item.memoryId))
        .map((item) => alices.keyOf.get(item.memoryId))
      expect(new Set(fromFirst)).toEqual(new Set(['eiffel', 'wall']))
      expect(items.some((item) => alicesSecond.keyOf.has(item.memoryId))).toBe(true)
    },
  },
  {
    name: 'a filter with CAST and IN keeps requestedSize items when that many match',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask(
        'the',
        [
          {
            spaceId: the(fixture).alices.spaceId,
            filter: "val('$.topic') IN ('biology', 'programming') AND NOT val('$.topic') = 'x'",
          },
        ],
        { requestedSize: 4, mode: 'VECTOR' },
      ),
    verify: (result, _p, fixture) => {
      const keys = itemsOf(result).map((item) => the(fixture).alices.keyOf.get(item.memoryId))
      expect(keys).toHaveLength(4)
      expect(new Set(keys)).toEqual(new Set(['photosynthesis', 'mitochondria', 'rust', 'postgres']))
    },
  },
  {
    name: 'fetchMemoryContent puts the original content in each memory definition; fetchMemory false leaves them out',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('Which tower stands in Paris?', [{ spaceId: the(fixture).alices.spaceId }], {
        requestedSize: 2,
        fetchMemoryContent: true,
      }),
    verify: async (result, _p, fixture, transport) => {
      const [first] = memoriesOf(result)
      expect(first).toMatchObject({
        memoryId: expect.any(String),
        spaceId: the(fixture).alices.spaceId,
        processingStatus: 'COMPLETED',
        originalContent: textOf('eiffel'),
      })
      const bare = await fixture.call(
        transport,
        'retrieveMemories',
        ask('Which tower stands in Paris?', [{ spaceId: the(fixture).alices.spaceId }], { fetchMemory: false }),
        fixture.alice.apiKey,
      )
      expect(memoriesOf(bare)).toEqual([])
      expect(itemsOf(bare).length).toBeGreaterThan(0)
    },
  },
  {
    name: 'a reranker and an LLM: items carry the reranker scores, then END, then the answer',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('How do plant leaves turn sunlight into glucose?', [{ spaceId: the(fixture).alices.spaceId }], {
        requestedSize: 3,
        postProcessor: { rerankerId: the(fixture).aliceReranker, llmId: the(fixture).aliceLlm, llmTemperature: 0.1 },
      }),
    verify: (result, _p, fixture) => {
      expectWellFormed(result)
      expect(kinds(result).slice(-2)).toEqual(['resultSetBoundary', 'abstractReply'])
      const items = itemsOf(result)
      expect(the(fixture).alices.keyOf.get(items[0].memoryId)).toBe('photosynthesis')
      expect(eventsOf(result).at(-1)!.abstractReply.text).toBe(expectedAnswer(`[1] ${items[0].chunkText}`))
    },
  },
  {
    name: 'relevanceThreshold and maxResults cut the items after the rerank',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('Which tower stands in Paris?', [{ spaceId: the(fixture).alices.spaceId }], {
        postProcessor: { rerankerId: the(fixture).aliceReranker, relevanceThreshold: 0.5, maxResults: 1 },
      }),
    verify: (result) => {
      const items = itemsOf(result)
      expect(items).toHaveLength(1)
      expect(items[0].relevanceScore).toBeGreaterThanOrEqual(0.5)
    },
  },
  {
    name: 'an LLM that fails after the items went out ends the stream with a status event, not an error',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('Which tower stands in Paris?', [{ spaceId: the(fixture).alices.spaceId }], {
        postProcessor: { llmId: the(fixture).deadLlm },
      }),
    verify: (result) => {
      expectWellFormed(result)
      expect(itemsOf(result).length).toBeGreaterThan(0)
      expect(eventsOf(result).at(-1)).toEqual({
        status: {
          code: 'UNAVAILABLE',
          message: expect.stringMatching(
            /^the LLM did not answer: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED$/,
          ),
        },
      })
    },
  },
  {
    name: 'embedderWeights choose the embedders of a space',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask(
        'memory safety without a garbage collector',
        [
          {
            spaceId: the(fixture).alicesSecond.spaceId,
            embedderWeights: [{ embedderId: the(fixture).aliceEmbedder, weight: 0 }],
          },
        ],
        { mode: 'VECTOR' },
      ),
    verify: (result, _p, fixture) => {
      expectWellFormed(result)
      expect(the(fixture).alicesSecond.keyOf.get(itemsOf(result)[0].memoryId)).toBe('rust')
    },
  },
  {
    name: 'every embedder weighted 0: HYBRID answers the keyword results with a notice naming the space, VECTOR none',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('Which tower stands in Paris?', [
        {
          spaceId: the(fixture).alices.spaceId,
          embedderWeights: [{ embedderId: the(fixture).aliceEmbedder, weight: 0 }],
        },
      ]),
    verify: async (result, _p, fixture, transport) => {
      const spaceId = the(fixture).alices.spaceId
      expect(notices(result)).toEqual([
        {
          code: 'VECTOR_SEARCH_SKIPPED',
          spaceId,
          message: `no vector search ran for space ${spaceId}: it has no embedder READY with a weight above 0; its items come from keyword search only`,
        },
      ])
      const keyword = await fixture.call(
        transport,
        'retrieveMemories',
        ask('Which tower stands in Paris?', [{ spaceId }], { mode: 'KEYWORD' }),
        fixture.alice.apiKey,
      )
      expect(itemsOf(result)).toEqual(itemsOf(keyword))
      const vector = await fixture.call(
        transport,
        'retrieveMemories',
        ask(
          'Which tower stands in Paris?',
          [{ spaceId, embedderWeights: [{ embedderId: the(fixture).aliceEmbedder, weight: 0 }] }],
          {
            mode: 'VECTOR',
          },
        ),
        fixture.alice.apiKey,
      )
      expect(itemsOf(vector)).toEqual([])
      expect(notices(vector)[0].message).toMatch(/it answers no items$/)
    },
  },
  {
    name: 'a space with a READY embedder answers HYBRID without notices',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ask('Which tower stands in Paris?', [{ spaceId: the(fixture).alices.spaceId }]),
    verify: (result) => expect(notices(result)).toBeUndefined(),
  },
]

const HOSTILE_FILTERS = [
  "val('$.topic') = 'travel''; drop table memories; --'",
  "val('$.topic') = '1) or pg_sleep(5) is not null or (1'",
  "val('$.topic') LIKE '%'' or 1=1 --'",
  "val('$.topic') IN ('x''); delete from chunks; --')",
  "val('$.a'); select 1",
  "val('$.a') = 1 /* comment */",
  `${'('.repeat(200)}val('$.a') = 1${')'.repeat(200)}`,
  `val('$.a') = '${'x'.repeat(20_000)}'`,
]

const refused = (
  name: string,
  input: (fixture: RetrievalFixture) => unknown,
  field: string,
  only?: 'rest' | 'grpc',
): ApiCase => ({
  name,
  operation: 'retrieveMemories',
  as: 'alice',
  expect: 'INVALID_ARGUMENT',
  field,
  only,
  input: (_p, fixture) => input(the(fixture)),
})
const alicesKeys = (fixture: RetrievalFixture, extra: Record<string, unknown> = {}) => [
  { spaceId: fixture.alices.spaceId, ...extra },
]

export const ERROR_CASES: ApiCase[] = [
  refused('an empty message', (fixture) => ask('   ', alicesKeys(fixture)), 'message'),
  refused('no spaces', () => ask('tower', []), 'spaceKeys'),
  refused('requestedSize 0', (fixture) => ask('tower', alicesKeys(fixture), { requestedSize: 0 }), 'requestedSize'),
  refused(
    `requestedSize ${MAX_REQUESTED_SIZE + 1}`,
    (fixture) => ask('tower', alicesKeys(fixture), { requestedSize: MAX_REQUESTED_SIZE + 1 }),
    'requestedSize',
  ),
  refused('an unknown mode', (fixture) => ask('tower', alicesKeys(fixture), { mode: 'FUZZY' }), 'mode', 'rest'),
  refused('a space id that is not a UUID', () => ask('tower', [{ spaceId: 'not-a-uuid' }]), 'spaceKeys.0.spaceId'),
  refused(
    'the same space twice',
    (fixture) => ask('tower', [...alicesKeys(fixture), ...alicesKeys(fixture)]),
    'spaceKeys',
  ),
  refused(
    'an embedder in the weights that is not in the space',
    (fixture) => ask('tower', alicesKeys(fixture, { embedderWeights: [{ embedderId: UNKNOWN_ID, weight: 1 }] })),
    'spaceKeys.0.embedderWeights.0.embedderId',
  ),
  refused(
    'a negative embedder weight',
    (fixture) =>
      ask('tower', alicesKeys(fixture, { embedderWeights: [{ embedderId: fixture.aliceEmbedder, weight: -1 }] })),
    'spaceKeys.0.embedderWeights.0.weight',
  ),
  refused(
    "a reranker of another user's",
    (fixture) => ask('tower', alicesKeys(fixture), { postProcessor: { rerankerId: fixture.bobReranker } }),
    'postProcessor.rerankerId',
  ),
  refused(
    'a reranker that does not exist',
    (fixture) => ask('tower', alicesKeys(fixture), { postProcessor: { rerankerId: UNKNOWN_ID } }),
    'postProcessor.rerankerId',
  ),
  refused(
    "an LLM of another user's",
    (fixture) => ask('tower', alicesKeys(fixture), { postProcessor: { llmId: fixture.bobLlm } }),
    'postProcessor.llmId',
  ),
  refused(
    'an LLM that does not exist',
    (fixture) => ask('tower', alicesKeys(fixture), { postProcessor: { llmId: UNKNOWN_ID } }),
    'postProcessor.llmId',
  ),
  refused(
    'a relevanceThreshold above 1',
    (fixture) => ask('tower', alicesKeys(fixture), { postProcessor: { relevanceThreshold: 1.5 } }),
    'postProcessor.relevanceThreshold',
  ),
  refused('efSearch 0', (fixture) => ask('tower', alicesKeys(fixture), { hnsw: { efSearch: 0 } }), 'hnsw.efSearch'),
  {
    ...refused(
      'a filter syntax error names its position',
      (fixture) => ask('tower', alicesKeys(fixture, { filter: "val('$.a') = 'x' AND" })),
      'spaceKeys.0.filter',
    ),
    verify: (result) => expect(result.message).toMatch(/at position 21/),
  },
  refused(
    'a filter comparing a number with LIKE',
    (fixture) => ask('tower', alicesKeys(fixture, { filter: "val('$.a') LIKE 3" })),
    'spaceKeys.0.filter',
  ),
  {
    name: 'a space that does not exist is NOT_FOUND before the stream starts',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: () => ask('tower', [{ spaceId: UNKNOWN_ID }]),
    verify: (result) => expect(result.message).toBe(`space ${UNKNOWN_ID} not found`),
  },
  {
    name: 'no API key is UNAUTHENTICATED',
    operation: 'retrieveMemories',
    as: 'none',
    expect: 'UNAUTHENTICATED',
    input: (_p, fixture) => ask('tower', alicesKeys(the(fixture))),
  },
  {
    name: 'hostile filters are refused or run as plain comparisons that match nothing; the tables are intact',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ask('tower Paris', alicesKeys(the(fixture))),
    verify: async (result, _p, fixture, transport) => {
      for (const filter of HOSTILE_FILTERS) {
        for (const mode of ['VECTOR', 'KEYWORD']) {
          const hostile = await fixture.call(
            transport,
            'retrieveMemories',
            ask('tower Paris', alicesKeys(the(fixture), { filter }), { mode }),
            fixture.alice.apiKey,
          )
          if (hostile.status === 'OK') expect(itemsOf(hostile), filter.slice(0, 80)).toEqual([])
          else {
            expect(hostile.status, filter.slice(0, 80)).toBe('INVALID_ARGUMENT')
            expect(hostile.fields).toContain('spaceKeys.0.filter')
          }
        }
      }
      const again = await fixture.call(
        transport,
        'retrieveMemories',
        ask('tower Paris', alicesKeys(the(fixture))),
        fixture.alice.apiKey,
      )
      expect(itemsOf(again)).toEqual(itemsOf(result))
    },
  },
]

export const SECURITY_CASES: ApiCase[] = [
  {
    name: "another user's private space answers 404 like a missing one",
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: (_p, fixture) => ask('tower', [{ spaceId: the(fixture).bobs.spaceId }]),
    verify: (result, _p, fixture) => expect(result.message).toBe(`space ${the(fixture).bobs.spaceId} not found`),
  },
  {
    name: "a private space of another user's among the caller's own still answers 404, with no items",
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: (_p, fixture) =>
      ask('tower', [{ spaceId: the(fixture).alices.spaceId }, { spaceId: the(fixture).bobs.spaceId }]),
  },
  {
    name: "a publicRead space of another user's is readable, with its memories",
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('Which tower stands in Paris?', [{ spaceId: the(fixture).bobsPublic.spaceId }], { fetchMemoryContent: true }),
    verify: (result, _p, fixture) => {
      expectWellFormed(result)
      const items = itemsOf(result)
      expect(the(fixture).bobsPublic.keyOf.get(items[0].memoryId)).toBe('eiffel')
      expect(memoriesOf(result)[0]).toMatchObject({
        spaceId: the(fixture).bobsPublic.spaceId,
        createdById: fixture.bob.userId,
        originalContent: textOf('eiffel'),
      })
    },
  },
  {
    name: "the owner's own reranker and LLM over another user's publicRead space",
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask('Which tower stands in Paris?', [{ spaceId: the(fixture).bobsPublic.spaceId }], {
        postProcessor: { rerankerId: the(fixture).aliceReranker, llmId: the(fixture).aliceLlm },
      }),
    verify: (result) => expect(kinds(result).at(-1)).toBe('abstractReply'),
  },
  {
    name: "bob's LLM over bob's public space is still not alice's to use",
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'postProcessor.llmId',
    input: (_p, fixture) =>
      ask('tower', [{ spaceId: the(fixture).bobsPublic.spaceId }], { postProcessor: { llmId: the(fixture).bobLlm } }),
  },
  {
    name: "a revoked-looking key (well-formed, unknown) is UNAUTHENTICATED, whoever's space it names",
    operation: 'retrieveMemories',
    as: () => 'msk_0000000000000000000000000000000000000000',
    expect: 'UNAUTHENTICATED',
    input: (_p, fixture) => ask('tower', [{ spaceId: the(fixture).bobsPublic.spaceId }]),
  },
]
