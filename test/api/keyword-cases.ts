import crypto from 'node:crypto'
import { expect } from 'vitest'
import type { ApiResult, Transport } from '../support/api-client.js'
import type { IdentityFixture } from '../support/identity-fixture.js'
import type { KeywordFixture, NoteKey, WrittenNotes } from '../support/keyword-fixture.js'
import { waitFor } from '../support/wait.js'
import type { ApiCase } from './identity-cases.js'
import { settled } from './memory-cases.js'

/**
 * Keyword search and keyword-only spaces as a table, in the shape of retrieval-cases: every
 * case runs over REST and gRPC, on PostgreSQL and PGlite, against the notes of
 * test/support/keyword-fixture.ts (two keyword-only spaces of alice's, english and simple).
 * Cases that change a space make their own through REST.
 */

const the = (fixture: IdentityFixture) => fixture as KeywordFixture
let counter = 0
const unique = () => `${++counter}-${crypto.randomUUID().slice(0, 8)}`

type Event = Record<string, any>
const eventsOf = (result: ApiResult): Event[] => result.body.events
const itemsOf = (result: ApiResult) =>
  eventsOf(result).flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk] : []))
const beginOf = (result: ApiResult) => eventsOf(result)[0]!.resultSetBoundary
const keysOf = (result: ApiResult, notes: WrittenNotes) => itemsOf(result).map((item) => notes.keyOf.get(item.memoryId))
const scoreOf = (result: ApiResult, notes: WrittenNotes, key: NoteKey) =>
  itemsOf(result).find((item) => item.memoryId === notes.idOf.get(key))?.relevanceScore

const ask = (message: string, spaceId: string, extra: Record<string, unknown> = {}) => ({
  message,
  spaceKeys: [{ spaceId }],
  requestedSize: 20,
  ...extra,
})

const retrieval = (
  name: string,
  input: (fixture: KeywordFixture) => unknown,
  verify: (result: ApiResult, fixture: KeywordFixture, transport: Transport) => Promise<void> | void,
): ApiCase => ({
  name,
  operation: 'retrieveMemories',
  as: 'alice',
  expect: 'OK',
  input: (_p, fixture) => input(the(fixture)),
  verify: (result, _p, fixture, transport) => verify(result, the(fixture), transport),
})

/** A REST call that must succeed: a case's own set-up. */
async function must(fixture: IdentityFixture, operation: Parameters<IdentityFixture['call']>[1], input: unknown) {
  const result = await fixture.call('rest', operation, input, fixture.alice.apiKey)
  if (result.status !== 'OK') throw new Error(`${operation} failed in set-up: ${result.message}`)
  return result.body
}

/** A keyword-only space of alice's holding the given texts, each memory COMPLETED. */
async function keywordOnlySpace(fixture: IdentityFixture, texts: string[], overrides: Record<string, unknown> = {}) {
  const space = await must(fixture, 'createSpace', { name: `keywords-${unique()}`, ...overrides })
  const memoryIds: string[] = []
  for (const originalContent of texts) {
    const memory = await must(fixture, 'createMemory', { spaceId: space.spaceId, originalContent })
    memoryIds.push(memory.memoryId)
  }
  for (const id of memoryIds) expect((await settled(fixture, 'rest', id)).processingStatus).toBe('COMPLETED')
  return { space, memoryIds }
}

const retrieveAs = (fixture: IdentityFixture, transport: Transport, input: unknown) =>
  fixture.call(transport, 'retrieveMemories', input, fixture.alice.apiKey)

const JUPITER = 'Europa, a moon of Jupiter, may hide liquid water under its ice.'
const GARDEN = 'Snails ate half of the lettuce in the garden again.'

export const HAPPY_CASES: ApiCase[] = [
  retrieval(
    'a rare word outranks a common one: the Europa note leads "garden Europa", every garden note far behind',
    (fixture) => ask('garden Europa', fixture.english.spaceId, { mode: 'KEYWORD' }),
    (result, fixture) => {
      const keys = keysOf(result, fixture.english)
      expect(keys[0]).toBe('europa')
      expect(new Set(keys.slice(1))).toEqual(
        new Set(['garden-1', 'garden-2', 'garden-3', 'garden-4', 'garden-5', 'garden-6']),
      )
      const europa = scoreOf(result, fixture.english, 'europa')!
      const gardens = itemsOf(result).slice(1)
      for (const garden of gardens) expect(garden.relevanceScore).toBeLessThan(europa / 2)
      // Each note holds one of the two words, once: a rarer word is worth more of the message.
      expect(europa).toBeGreaterThan(0.6)
      expect(europa).toBeLessThan(1)
    },
  ),
  retrieval(
    'scores say how much of the message a chunk holds: the Europa note alone scores higher for "Europa" than for "garden Europa"',
    (fixture) => ask('Europa', fixture.english.spaceId, { mode: 'KEYWORD' }),
    async (result, fixture, transport) => {
      expect(keysOf(result, fixture.english)).toEqual(['europa'])
      const alone = itemsOf(result)[0].relevanceScore
      const both = await retrieveAs(
        fixture,
        transport,
        ask('garden Europa', fixture.english.spaceId, { mode: 'KEYWORD' }),
      )
      expect(alone).toBeGreaterThan(scoreOf(both, fixture.english, 'europa')!)
      // Below 1 only because the note is longer than the space's average.
      expect(alone).toBeGreaterThan(0.8)
    },
  ),
  retrieval(
    'english stems: "ocean" finds the note about oceans, "gardens" every garden note',
    (fixture) => ask('ocean', fixture.english.spaceId, { mode: 'KEYWORD' }),
    async (result, fixture, transport) => {
      expect(keysOf(result, fixture.english)).toEqual(['oceans'])
      const gardens = await retrieveAs(fixture, transport, ask('gardens', fixture.english.spaceId, { mode: 'KEYWORD' }))
      expect(keysOf(gardens, fixture.english).sort()).toEqual([
        'garden-1',
        'garden-2',
        'garden-3',
        'garden-4',
        'garden-5',
        'garden-6',
      ])
    },
  ),
  retrieval(
    'simple neither stems nor drops stop words: "ocean" finds nothing there, "oceans" the note, "the" most notes',
    (fixture) => ask('ocean', fixture.simple.spaceId, { mode: 'KEYWORD' }),
    async (result, fixture, transport) => {
      expect(itemsOf(result)).toEqual([])
      const exact = await retrieveAs(fixture, transport, ask('oceans', fixture.simple.spaceId, { mode: 'KEYWORD' }))
      expect(keysOf(exact, fixture.simple)).toEqual(['oceans'])
      const the = await retrieveAs(fixture, transport, ask('the', fixture.simple.spaceId, { mode: 'KEYWORD' }))
      expect(itemsOf(the).length).toBeGreaterThanOrEqual(8)
    },
  ),
  ...(['KEYWORD', 'HYBRID'] as const).map((mode) =>
    retrieval(
      `a message of stop words only answers no items (${mode})`,
      (fixture) => ask('What is it, and is that all there is?', fixture.english.spaceId, { mode }),
      (result) => {
        expect(itemsOf(result)).toEqual([])
        expect(beginOf(result).expectedItems ?? 0).toBe(0)
      },
    ),
  ),
  retrieval(
    'a chunk holding only stop words of the message is not returned: "Where is the tower?" finds the tower alone',
    (fixture) => ask('Where is the tower?', fixture.english.spaceId, { mode: 'KEYWORD' }),
    (result, fixture) => expect(keysOf(result, fixture.english)).toEqual(['tower']),
  ),
  retrieval(
    'a keyword-only space: KEYWORD answers without notices; HYBRID answers the same items with a notice that no vector search ran',
    (fixture) => ask('Europa garden water', fixture.english.spaceId, { mode: 'KEYWORD' }),
    async (keyword, fixture, transport) => {
      expect(beginOf(keyword).notices).toBeUndefined()
      const spaceId = fixture.english.spaceId
      const hybrid = await retrieveAs(fixture, transport, ask('Europa garden water', spaceId))
      expect(itemsOf(hybrid)).toEqual(itemsOf(keyword))
      expect(beginOf(hybrid).notices).toEqual([
        {
          code: 'VECTOR_SEARCH_SKIPPED',
          spaceId,
          message: `no vector search ran for space ${spaceId}: it has no embedders; its items come from keyword search only`,
        },
      ])
    },
  ),
  {
    name: 'a space created with no embedders is keyword-only, its language english unless named',
    operation: 'createSpace',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => ({ name: `keywords-${unique()}` }),
    verify: async (result, _p, fixture, transport) => {
      expect(result.body).toMatchObject({ spaceEmbedders: [], textSearchLanguage: 'english' })
      const read = await fixture.call(transport, 'getSpace', { spaceId: result.body.spaceId }, fixture.alice.apiKey)
      expect(read.body).toEqual(result.body)
    },
  },
  {
    name: 'the language is stored and round-trips, and searches in it: french stems "océan" to find "océans"',
    operation: 'createSpace',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => ({ name: `french-${unique()}`, textSearchLanguage: 'french' }),
    verify: async (result, _p, fixture, transport) => {
      expect(result.body.textSearchLanguage).toBe('french')
      const spaceId = result.body.spaceId
      const read = await fixture.call(transport, 'getSpace', { spaceId }, fixture.alice.apiKey)
      expect(read.body.textSearchLanguage).toBe('french')
      const listed = await fixture.call(transport, 'listSpaces', { maxResults: 1000 }, fixture.alice.apiKey)
      expect(listed.body.spaces.find((space: any) => space.spaceId === spaceId).textSearchLanguage).toBe('french')
      const memory = await must(fixture, 'createMemory', {
        spaceId,
        originalContent: 'Les océans couvrent la plus grande partie de la planète.',
      })
      await settled(fixture, transport, memory.memoryId)
      const found = await retrieveAs(fixture, transport, ask('océan', spaceId, { mode: 'KEYWORD' }))
      expect(itemsOf(found).map((item) => item.memoryId)).toEqual([memory.memoryId])
    },
  },
  {
    name: "a keyword-only space's memory reaches COMPLETED with its chunks and no embedding call",
    operation: 'getMemory',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const before = the(fixture).embedder.requests.length
      const { memoryIds } = await keywordOnlySpace(fixture, [`${GARDEN}\n\n${JUPITER}`], {
        defaultChunkingConfig: { recursive: { chunkSize: 100, chunkOverlap: 0 } },
      })
      return { memoryId: memoryIds[0], before, after: the(fixture).embedder.requests.length }
    },
    input: (prepared) => ({ memoryId: prepared.memoryId }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body).toMatchObject({ processingStatus: 'COMPLETED', chunkCount: 2 })
      expect(prepared.after).toBe(prepared.before)
      const spaceId = result.body.spaceId
      const found = await retrieveAs(fixture, transport, ask('snails on Jupiter', spaceId, { mode: 'KEYWORD' }))
      const chunks = itemsOf(found)
      expect(chunks.map((chunk) => chunk.chunkText.trim()).sort()).toEqual([JUPITER, GARDEN].sort())
    },
  },
  {
    name: "addEmbedder back-fills a keyword-only space's memories; then VECTOR finds them and HYBRID has no notice",
    operation: 'addSpaceEmbedder',
    as: 'alice',
    expect: 'OK',
    httpStatus: 202,
    prepare: (fixture) => keywordOnlySpace(fixture, [JUPITER, GARDEN]),
    input: (prepared, fixture) => ({ spaceId: prepared.space.spaceId, embedderId: the(fixture).aliceEmbedder }),
    verify: async (result, prepared, fixture, transport) => {
      const spaceId = prepared.space.spaceId
      expect(result.body.spaceEmbedders).toHaveLength(1)
      const ready = await waitFor('the back-fill to finish', async () => {
        const read = await fixture.call(transport, 'getSpace', { spaceId }, fixture.alice.apiKey)
        return read.body.spaceEmbedders[0]?.indexState === 'READY' ? read.body : undefined
      })
      expect(ready.spaceEmbedders[0].backfillProgress).toMatchObject({ completedMemories: 2, totalMemories: 2 })
      const vector = await retrieveAs(fixture, transport, ask('a moon of Jupiter', spaceId, { mode: 'VECTOR' }))
      expect(itemsOf(vector)[0].memoryId).toBe(prepared.memoryIds[0])
      const hybrid = await retrieveAs(fixture, transport, ask('a moon of Jupiter', spaceId))
      expect(beginOf(hybrid).notices).toBeUndefined()
      expect(itemsOf(hybrid)[0].memoryId).toBe(prepared.memoryIds[0])
      // HYBRID weighs the cosine and the keyword score alike: between the two, not the keyword score alone.
      const keyword = await retrieveAs(fixture, transport, ask('a moon of Jupiter', spaceId, { mode: 'KEYWORD' }))
      const [h, v, k] = [hybrid, vector, keyword].map(
        (answer) => itemsOf(answer).find((item) => item.memoryId === prepared.memoryIds[0])!.relevanceScore,
      )
      expect(h).toBeCloseTo((v + k) / 2, 6)
    },
  },
  {
    name: "removing a space's last embedder leaves it keyword-only: KEYWORD still finds its memories",
    operation: 'removeSpaceEmbedder',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const embedderId = await the(fixture).registerEmbedder(fixture.alice)
      return keywordOnlySpace(fixture, [JUPITER], { spaceEmbedders: [{ embedderId }] })
    },
    input: (prepared) => ({
      spaceId: prepared.space.spaceId,
      embedderId: prepared.space.spaceEmbedders[0].embedderId,
    }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body.spaceEmbedders).toEqual([])
      const keyword = await retrieveAs(fixture, transport, ask('Jupiter', prepared.space.spaceId, { mode: 'KEYWORD' }))
      expect(itemsOf(keyword).map((item) => item.memoryId)).toEqual(prepared.memoryIds)
    },
  },
]

const refusedCreate = (name: string, textSearchLanguage: unknown, only?: Transport): ApiCase => ({
  name,
  operation: 'createSpace',
  as: 'alice',
  expect: 'INVALID_ARGUMENT',
  field: 'textSearchLanguage',
  only,
  input: () => ({ name: `bad-language-${unique()}`, textSearchLanguage }),
})

export const ERROR_CASES: ApiCase[] = [
  {
    name: 'VECTOR over a space with no embedders is refused naming the space key, and says the embedders are missing',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'spaceKeys.0.spaceId',
    input: (_p, fixture) => ask('Europa', the(fixture).english.spaceId, { mode: 'VECTOR' }),
    verify: (result, _p, fixture) =>
      expect(result.message).toBe(
        `spaceKeys.0.spaceId: space ${the(fixture).english.spaceId} has no embedders, so mode VECTOR cannot search it: ` +
          'add one (:addEmbedder) or use KEYWORD or HYBRID',
      ),
  },
  {
    name: 'VECTOR over two spaces names the one without embedders',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'spaceKeys.1.spaceId',
    prepare: async (fixture) => {
      const embedderId = await the(fixture).registerEmbedder(fixture.alice)
      return must(fixture, 'createSpace', { name: `vectors-${unique()}`, spaceEmbedders: [{ embedderId }] })
    },
    input: (prepared, fixture) => ({
      message: 'Europa',
      mode: 'VECTOR',
      spaceKeys: [{ spaceId: prepared.spaceId }, { spaceId: the(fixture).english.spaceId }],
    }),
  },
  {
    ...refusedCreate('a language the database does not have is refused naming it, with the ones it has', 'klingon'),
    verify: (result) => {
      expect(result.message).toMatch(/^textSearchLanguage: this database has no text search configuration "klingon"; /)
      expect(result.message).toContain('english')
      expect(result.message).toContain('simple')
    },
  },
  refusedCreate('a language in capitals is refused naming it', 'English'),
  refusedCreate('a schema-qualified language is refused naming it', 'pg_catalog.english'),
  refusedCreate('an empty language is refused naming it', ''),
  refusedCreate(`a language over 63 characters is refused naming it`, 'e'.repeat(64)),
  refusedCreate('a language that is not a string is refused naming it', 7, 'rest'),
  {
    name: 'the language cannot change: an update naming it is refused, and the space keeps its language',
    operation: 'updateSpace',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'textSearchLanguage',
    prepare: (fixture) => must(fixture, 'createSpace', { name: `fixed-${unique()}` }),
    input: (prepared) => ({ spaceId: prepared.spaceId, name: `renamed-${unique()}`, textSearchLanguage: 'french' }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.message).toBe('textSearchLanguage: is set when the space is created and cannot change')
      const read = await fixture.call(transport, 'getSpace', { spaceId: prepared.spaceId }, fixture.alice.apiKey)
      expect(read.body).toMatchObject({ name: prepared.name, textSearchLanguage: 'english' })
    },
  },
]

/** Text-search syntax and quoting in a message: to_tsvector reads only words from it, so each is an ordinary search. */
const HOSTILE_MESSAGES = [
  "garden' | 'europa",
  'garden & !europa',
  "garden:* | ''",
  '\\ garden \\\\',
  "'english'::regconfig garden",
  "garden'); drop table chunks; --",
  '(((garden',
  '<-> garden <2>',
]

export const SECURITY_CASES: ApiCase[] = [
  retrieval(
    'tsquery syntax and quotes in a message are words like any other: no error, no match beyond its words',
    (fixture) => ask('garden', fixture.english.spaceId, { mode: 'KEYWORD' }),
    async (plain, fixture, transport) => {
      for (const message of HOSTILE_MESSAGES) {
        const hostile = await retrieveAs(fixture, transport, ask(message, fixture.english.spaceId, { mode: 'KEYWORD' }))
        expect(hostile.status, message).toBe('OK')
        const keys = new Set(keysOf(hostile, fixture.english))
        for (const key of keys) expect(['europa', ...keysOf(plain, fixture.english)], message).toContain(key)
      }
      const again = await retrieveAs(fixture, transport, ask('garden', fixture.english.spaceId, { mode: 'KEYWORD' }))
      expect(itemsOf(again)).toEqual(itemsOf(plain))
    },
  ),
  {
    ...refusedCreate('SQL in a language is refused by its shape', "english')::regconfig; drop table chunks; --"),
    verify: async (_result, _p, fixture, transport) => {
      const still = await retrieveAs(
        fixture,
        transport,
        ask('Europa', the(fixture).english.spaceId, { mode: 'KEYWORD' }),
      )
      expect(keysOf(still, the(fixture).english)).toEqual(['europa'])
    },
  },
  {
    name: "another user's keyword-only space answers 404 in every mode, like a missing one",
    operation: 'retrieveMemories',
    as: 'bob',
    expect: 'NOT_FOUND',
    input: (_p, fixture) => ask('Europa', the(fixture).english.spaceId),
    verify: async (result, _p, fixture, transport) => {
      const spaceId = the(fixture).english.spaceId
      expect(result.message).toBe(`space ${spaceId} not found`)
      for (const mode of ['KEYWORD', 'VECTOR']) {
        const other = await fixture.call(
          transport,
          'retrieveMemories',
          ask('Europa', spaceId, { mode }),
          fixture.bob.apiKey,
        )
        expect(other.status, mode).toBe('NOT_FOUND')
      }
    },
  },
]
