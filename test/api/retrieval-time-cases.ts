import { expect } from 'vitest'
import type { ApiResult, Transport } from '../support/api-client.js'
import type { IdentityFixture } from '../support/identity-fixture.js'
import {
  DAY_SECONDS,
  HARBOR_TOPIC,
  TIMED_TIMES,
  TIMED_TOPIC,
  type TimeFixture,
  type TimeSpace,
  TWIN_AGE_DAYS,
  TWIN_TEXT,
  TWIN_TOPIC,
} from '../support/time-fixture.js'
import type { ApiCase } from './identity-cases.js'

/**
 * Time-aware retrieval and listing (issue 35) as a table, over REST and gRPC, on both
 * engines, against test/support/time-fixture.ts: createdAt, updatedAt and validUntil in the
 * filters of retrieval, list and batch delete; sortBy updatedAt with its page tokens; expired
 * memories left out unless includeExpired; recency and its score parts.
 */

const the = (fixture: IdentityFixture) => fixture as TimeFixture
type Event = Record<string, any>
const eventsOf = (result: ApiResult): Event[] => result.body.events
const itemsOf = (result: ApiResult) =>
  eventsOf(result).flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk] : []))
const memoriesOf = (result: ApiResult) =>
  eventsOf(result).flatMap((event) => (event.memoryDefinition ? [event.memoryDefinition.memory] : []))
const keysOf = (space: TimeSpace, result: ApiResult) => itemsOf(result).map((item) => space.keyOf.get(item.memoryId))
const listedKeys = (space: TimeSpace, result: ApiResult) =>
  result.body.memories.map((memory: { memoryId: string }) => space.keyOf.get(memory.memoryId))
const sorted = (keys: unknown[]) => [...keys].sort()
const MODES = ['HYBRID', 'VECTOR', 'KEYWORD'] as const
/** A week, in seconds. */
const WEEK = 7 * DAY_SECONDS
/** Seconds a test may take between the fixture's backdating and the answer. */
const AGE_SLACK_SECONDS = 600
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

const ask = (message: string, spaceId: string, extra: Record<string, unknown> = {}, filter?: string) => ({
  message,
  spaceKeys: [filter === undefined ? { spaceId } : { spaceId, filter }],
  ...extra,
})

/** Every page of a list, following nextToken, one memory per page. */
async function allPages(
  fixture: IdentityFixture,
  transport: Transport,
  input: Record<string, unknown>,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = []
  let nextToken: string | undefined
  let pages = 0
  do {
    const page = await fixture.call(
      transport,
      'listMemories',
      { ...input, maxResults: 1, ...(nextToken ? { nextToken } : {}) },
      fixture.alice.apiKey,
    )
    expect(page.status, page.message).toBe('OK')
    ids.push(...page.body.memories.map((memory: { memoryId: string }) => memory.memoryId))
    nextToken = page.body.nextToken || undefined
    pages++
  } while (nextToken && pages < 10)
  return { ids, pages }
}

const filteredRetrieval = (name: string, filter: string, expected: string[], mode?: string): ApiCase => ({
  name: `retrieval filter ${filter}${mode ? ` (${mode})` : ''}: ${expected.join(', ') || 'nothing'}`,
  operation: 'retrieveMemories',
  as: 'alice',
  expect: 'OK',
  input: (_p, fixture) =>
    ask(TIMED_TOPIC, the(fixture).timed.spaceId, { requestedSize: 10, ...(mode ? { mode } : {}) }, filter),
  verify: (result, _p, fixture) => {
    expect(sorted(keysOf(the(fixture).timed, result)), name).toEqual(expected)
  },
})

export const HAPPY_CASES: ApiCase[] = [
  filteredRetrieval('a range', "createdAt >= '2026-01-01' AND createdAt < '2026-01-07T12:00:00Z'", ['mid']),
  filteredRetrieval('a range', "createdAt >= '2026-01-01' AND createdAt < '2026-01-07T12:00:00Z'", ['mid'], 'VECTOR'),
  filteredRetrieval('a range', "createdAt >= '2026-01-01' AND createdAt < '2026-01-07T12:00:00Z'", ['mid'], 'KEYWORD'),
  // 1767225600000 is 2026-01-01T00:00:00Z.
  filteredRetrieval('epoch milliseconds', 'updatedAt <= 1767225600000', ['old']),
  filteredRetrieval('or', "createdAt > '2026-01-07' OR updatedAt < '2025-07-01'", ['new', 'old']),
  filteredRetrieval('with metadata', "createdAt > '2026-01-01' AND val('$.entry') = 2", ['mid']),
  filteredRetrieval('null', 'validUntil IS NULL AND NOT createdAt IN (1748736000000)', ['mid', 'new']),
  {
    name: 'list memories with a createdAt range, sorted by createdAt descending',
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({
      spaceId: the(fixture).timed.spaceId,
      filter: "createdAt >= '2026-01-01T00:00:00Z'",
      sortOrder: 'DESCENDING',
    }),
    verify: (result, _p, fixture) => {
      expect(listedKeys(the(fixture).timed, result)).toEqual(['new', 'mid'])
      expect(result.body.memories[1].createdAt).toBe(Date.parse(TIMED_TIMES.mid.createdAt))
    },
  },
  {
    name: 'list memories with an updatedAt filter in epoch milliseconds',
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({
      spaceId: the(fixture).timed.spaceId,
      filter: `updatedAt > ${Date.parse('2026-01-01')}`,
    }),
    verify: (result, _p, fixture) => expect(listedKeys(the(fixture).timed, result)).toEqual(['mid', 'new']),
  },
  {
    name: 'sortBy updatedAt pages one memory at a time, both ways, without repeating two updated in the same millisecond',
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({ spaceId: the(fixture).timed.spaceId, sortBy: 'updatedAt' }),
    verify: async (result, _p, fixture, transport) => {
      const timed = the(fixture).timed
      expect(listedKeys(timed, result)).toEqual(['old', 'new', 'mid'])
      const ascending = await allPages(fixture, transport, { spaceId: timed.spaceId, sortBy: 'updatedAt' })
      expect(ascending.ids.map((id) => timed.keyOf.get(id))).toEqual(['old', 'new', 'mid'])
      const descending = await allPages(fixture, transport, {
        spaceId: timed.spaceId,
        sortBy: 'updatedAt',
        sortOrder: 'DESCENDING',
      })
      expect(descending.ids.map((id) => timed.keyOf.get(id))).toEqual(['mid', 'new', 'old'])
      const byCreation = await allPages(fixture, transport, { spaceId: timed.spaceId })
      expect(byCreation.ids.map((id) => timed.keyOf.get(id))).toEqual(['old', 'mid', 'new'])
    },
  },
  {
    name: 'a batch delete by a time filter counts what it would delete in a dry run, and deletes nothing',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({
      spaceId: the(fixture).timed.spaceId,
      filter: "createdAt < '2026-01-01' OR createdAt > '2026-01-07'",
      dryRun: true,
    }),
    verify: async (result, _p, fixture, transport) => {
      expect(result.body).toMatchObject({ dryRun: true, matchedCount: 2, deletedCount: 0 })
      const listed = await fixture.call(
        transport,
        'listMemories',
        { spaceId: the(fixture).timed.spaceId },
        fixture.alice.apiKey,
      )
      expect(listed.body.memories).toHaveLength(3)
    },
  },
  ...MODES.map(
    (mode): ApiCase => ({
      name: `mode ${mode}: a memory past its validUntil is left out; includeExpired answers it`,
      operation: 'retrieveMemories',
      as: 'alice',
      expect: 'OK',
      input: (_p, fixture) => ask(HARBOR_TOPIC, the(fixture).expiring.spaceId, { mode }),
      verify: async (result, _p, fixture, transport) => {
        const expiring = the(fixture).expiring
        expect(sorted(keysOf(expiring, result))).toEqual(['plain', 'valid'])
        const withExpired = await fixture.call(
          transport,
          'retrieveMemories',
          ask(HARBOR_TOPIC, expiring.spaceId, { mode, includeExpired: true }),
          fixture.alice.apiKey,
        )
        expect(sorted(keysOf(expiring, withExpired))).toEqual(['expired', 'plain', 'valid'])
        const expired = memoriesOf(withExpired).find((memory) => memory.memoryId === expiring.ids.expired)
        expect(expired.validUntil).toBeLessThan(Date.now())
      },
    }),
  ),
  {
    name: 'expired memories are still listed, and filters find them by validUntil',
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({ spaceId: the(fixture).expiring.spaceId, filter: `validUntil < ${Date.now()}` }),
    verify: async (result, _p, fixture, transport) => {
      const expiring = the(fixture).expiring
      expect(listedKeys(expiring, result)).toEqual(['expired'])
      const withoutEnd = await fixture.call(
        transport,
        'listMemories',
        { spaceId: expiring.spaceId, filter: 'validUntil IS NULL' },
        fixture.alice.apiKey,
      )
      expect(listedKeys(expiring, withoutEnd)).toEqual(['plain'])
      const notExpired = await fixture.call(
        transport,
        'listMemories',
        { spaceId: expiring.spaceId, filter: `NOT validUntil < ${Date.now()}` },
        fixture.alice.apiKey,
      )
      expect(sorted(listedKeys(expiring, notExpired))).toEqual(['plain', 'valid'])
    },
  },
  {
    name: 'a space searched before its first expiring memory leaves that memory out once it is past',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const time = the(fixture)
      const spaceId = await time.newSpace(fixture.alice, 'late-expiry')
      const plain = await time.addMemory(fixture.alice, { spaceId, originalContent: 'Harbor notice: pier four.' })
      // This retrieval keeps the space's rows, read while it held no expiring memory.
      const before = await fixture.call('rest', 'retrieveMemories', ask(HARBOR_TOPIC, spaceId), fixture.alice.apiKey)
      expect(itemsOf(before).map((item) => item.memoryId)).toEqual([plain])
      const expired = await time.addMemory(fixture.alice, {
        spaceId,
        originalContent: 'Harbor notice: pier four is closed.',
        validUntil: Date.now() - 1000,
      })
      return { spaceId, plain, expired }
    },
    input: (prepared) => ask(HARBOR_TOPIC, prepared.spaceId),
    verify: async (result, prepared, fixture, transport) => {
      expect(itemsOf(result).map((item) => item.memoryId)).toEqual([prepared.plain])
      const withExpired = await fixture.call(
        transport,
        'retrieveMemories',
        ask(HARBOR_TOPIC, prepared.spaceId, { includeExpired: true }),
        fixture.alice.apiKey,
      )
      expect(sorted(itemsOf(withExpired).map((item) => item.memoryId))).toEqual(
        sorted([prepared.plain, prepared.expired]),
      )
    },
  },
  {
    name: 'without recency, two memories of the same text score the same and carry no score parts',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ask(TWIN_TOPIC, the(fixture).twins.spaceId, { mode: 'VECTOR' }),
    verify: (result, _p, fixture) => {
      const items = itemsOf(result)
      expect(keysOf(the(fixture).twins, result)).toEqual(['older', 'newer'])
      expect(items[0].relevanceScore).toBe(items[1].relevanceScore)
      for (const item of items) expect(item.scoreParts).toBeUndefined()
    },
  },
  ...MODES.map(
    (mode): ApiCase => ({
      name: `mode ${mode}: recency puts the newer of two equal memories first and shows the parts of each score`,
      operation: 'retrieveMemories',
      as: 'alice',
      expect: 'OK',
      input: (_p, fixture) =>
        ask(TWIN_TOPIC, the(fixture).twins.spaceId, { mode, recency: { halfLifeSeconds: WEEK, weight: 0.5 } }),
      verify: (result, _p, fixture) => {
        const [newer, older] = itemsOf(result)
        expect(keysOf(the(fixture).twins, result)).toEqual(['newer', 'older'])
        expect(newer.scoreParts.relevance).toBeCloseTo(older.scoreParts.relevance, 9)
        expect(newer.scoreParts.recencyWeight).toBe(0.5)
        expect(newer.scoreParts.ageSeconds).toBeLessThan(AGE_SLACK_SECONDS)
        expect(newer.scoreParts.recency).toBeGreaterThan(0.99)
        expect(older.scoreParts.ageSeconds).toBeGreaterThanOrEqual(TWIN_AGE_DAYS * DAY_SECONDS)
        expect(older.scoreParts.ageSeconds).toBeLessThan(TWIN_AGE_DAYS * DAY_SECONDS + AGE_SLACK_SECONDS)
        expect(older.scoreParts.recency).toBeCloseTo(0.5 ** (older.scoreParts.ageSeconds / WEEK), 9)
        for (const item of [newer, older])
          expect(item.relevanceScore).toBeCloseTo(0.5 * item.scoreParts.relevance + 0.5 * item.scoreParts.recency, 9)
      },
    }),
  ),
  {
    name: 'recency without a weight weighs 0.3; chronologicalResort then orders the items by creation',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) =>
      ask(TIMED_TOPIC, the(fixture).timed.spaceId, {
        recency: { halfLifeSeconds: 30 * DAY_SECONDS },
        postProcessor: { chronologicalResort: true },
      }),
    verify: (result, _p, fixture) => {
      expect(keysOf(the(fixture).timed, result)).toEqual(['old', 'mid', 'new'])
      for (const item of itemsOf(result)) expect(item.scoreParts.recencyWeight).toBe(0.3)
    },
  },
  {
    name: 'relevanceThreshold compares with the relevance before recency: an old memory it keeps stays',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const plain = await fixture.call(
        'rest',
        'retrieveMemories',
        ask(TWIN_TOPIC, the(fixture).twins.spaceId, { mode: 'VECTOR' }),
        fixture.alice.apiKey,
      )
      return { relevance: itemsOf(plain)[0].relevanceScore as number }
    },
    input: (prepared, fixture) =>
      ask(TWIN_TOPIC, the(fixture).twins.spaceId, {
        mode: 'VECTOR',
        recency: { halfLifeSeconds: DAY_SECONDS, weight: 0.9 },
        postProcessor: { relevanceThreshold: prepared.relevance - 0.01 },
      }),
    verify: (result, prepared, fixture) => {
      expect(keysOf(the(fixture).twins, result)).toEqual(['newer', 'older'])
      const older = itemsOf(result)[1]
      expect(older.relevanceScore).toBeLessThan(prepared.relevance - 0.01)
      expect(older.scoreParts.relevance).toBeCloseTo(prepared.relevance, 9)
    },
  },
  {
    name: 'the GET form takes recencyHalfLifeSeconds, recencyWeight and includeExpired; SSE carries the score parts',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    only: 'rest',
    input: (_p, fixture) => ask(TWIN_TOPIC, the(fixture).twins.spaceId),
    verify: async (_result, _p, fixture) => {
      const { twins, expiring } = the(fixture)
      const query = (spaceId: string, extra: Record<string, string>) =>
        `/v1/memories:retrieve?${new URLSearchParams({ message: TWIN_TOPIC, spaceIds: spaceId, ...extra })}`
      const recent = await fixture.client.restRaw(
        'GET',
        query(twins.spaceId, { recencyHalfLifeSeconds: String(WEEK), recencyWeight: '0.5', mode: 'VECTOR' }),
        { apiKey: fixture.alice.apiKey },
      )
      expect(keysOf(twins, recent)).toEqual(['newer', 'older'])
      expect(itemsOf(recent)[0].scoreParts.recencyWeight).toBe(0.5)
      const expired = await fixture.client.restRaw('GET', query(expiring.spaceId, { includeExpired: 'true' }), {
        apiKey: fixture.alice.apiKey,
      })
      expect(keysOf(expiring, expired)).toContain('expired')
      const sse = await fetch(`${fixture.server.restUrl}${query(twins.spaceId, { recencyHalfLifeSeconds: '3600' })}`, {
        headers: { authorization: `Bearer ${fixture.alice.apiKey}`, accept: 'text/event-stream' },
      })
      const events = (await sse.text())
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice('data: '.length)))
      const items = events.flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk] : []))
      expect(items.length).toBe(2)
      for (const item of items)
        expect(item.scoreParts).toEqual({
          relevance: expect.any(Number),
          recency: expect.any(Number),
          recencyWeight: 0.3,
          ageSeconds: expect.any(Number),
        })
      expect(items[0].chunkText).toBe(TWIN_TEXT)
    },
  },
]

const refused = (
  name: string,
  operation: ApiCase['operation'],
  input: (fixture: TimeFixture) => unknown,
  field: string,
  message?: RegExp,
  only?: Transport,
): ApiCase => ({
  name,
  operation,
  as: 'alice',
  expect: 'INVALID_ARGUMENT',
  field,
  only,
  input: (_p, fixture) => input(the(fixture)),
  ...(message ? { verify: (result: ApiResult) => expect(result.message).toMatch(message) } : {}),
})

const retrieveIn = (fixture: TimeFixture, extra: Record<string, unknown> = {}, filter?: string) =>
  ask(TIMED_TOPIC, fixture.timed.spaceId, extra, filter)

export const ERROR_CASES: ApiCase[] = [
  refused(
    'a retrieval filter comparing createdAt with a word that is no time names the field and the position',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, {}, "createdAt > 'yesterday'"),
    'spaceKeys.0.filter',
    /at position 13: createdAt is compared with a date or time/,
  ),
  refused(
    'a retrieval filter with a day that does not exist',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, {}, "val('$.entry') = 1 AND updatedAt < '2026-02-30'"),
    'spaceKeys.0.filter',
    /at position 36: updatedAt is compared with/,
  ),
  refused(
    'a list filter with LIKE on createdAt',
    'listMemories',
    (fixture) => ({ spaceId: fixture.timed.spaceId, filter: "createdAt LIKE '2026%'" }),
    'filter',
    /at position 11: createdAt is a time/,
  ),
  refused(
    'a list filter with a negative epoch',
    'listMemories',
    (fixture) => ({ spaceId: fixture.timed.spaceId, filter: 'createdAt > -5' }),
    'filter',
    /at position 13/,
  ),
  refused(
    'a batch delete filter with a time that is no time',
    'batchDeleteMemories',
    (fixture) => ({ spaceId: fixture.timed.spaceId, filter: 'validUntil < TRUE', dryRun: true }),
    'filter',
    /at position 14: validUntil is compared with/,
  ),
  refused(
    'a recency half-life of 0',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { halfLifeSeconds: 0 } }),
    'recency.halfLifeSeconds',
    /must be more than 0/,
  ),
  refused(
    'a recency half-life beyond 100 years',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { halfLifeSeconds: 101 * 365.25 * DAY_SECONDS } }),
    'recency.halfLifeSeconds',
  ),
  refused(
    'a negative recency half-life',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { halfLifeSeconds: -60 } }),
    'recency.halfLifeSeconds',
  ),
  refused(
    'a recency weight of 2',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { halfLifeSeconds: 3600, weight: 2 } }),
    'recency.weight',
    /must be from 0 to 1/,
  ),
  refused(
    'a recency weight without a half-life',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { weight: 0.5 } }),
    'recency.halfLifeSeconds',
  ),
  refused(
    'a half-life written as text',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { halfLifeSeconds: '30d' } }),
    'recency.halfLifeSeconds',
    undefined,
    'rest',
  ),
  refused(
    'includeExpired that is not a boolean',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { includeExpired: 'yes' }),
    'includeExpired',
    undefined,
    'rest',
  ),
  refused(
    'an unknown recency field',
    'retrieveMemories',
    (fixture) => retrieveIn(fixture, { recency: { halfLifeSeconds: 60, halfLife: 60 } }),
    'recency.halfLife',
    undefined,
    'rest',
  ),
  refused(
    'sortBy a field lists do not sort by',
    'listMemories',
    (fixture) => ({ spaceId: fixture.timed.spaceId, sortBy: 'validUntil' }),
    'sortBy',
  ),
  {
    name: 'a createdAt page token is refused for sortBy updatedAt, and the other way round',
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({ spaceId: the(fixture).timed.spaceId, maxResults: 1 }),
    verify: async (result, _p, fixture, transport) => {
      const spaceId = the(fixture).timed.spaceId
      const byUpdate = await fixture.call(
        transport,
        'listMemories',
        { spaceId, maxResults: 1, sortBy: 'updatedAt' },
        fixture.alice.apiKey,
      )
      const crossed = [
        { sortBy: 'updatedAt', nextToken: result.body.nextToken },
        { sortBy: 'createdAt', nextToken: byUpdate.body.nextToken },
      ]
      for (const input of crossed) {
        const refusedPage = await fixture.call(
          transport,
          'listMemories',
          { spaceId, maxResults: 1, ...input },
          fixture.alice.apiKey,
        )
        expect(refusedPage.status, input.sortBy).toBe('INVALID_ARGUMENT')
        expect(refusedPage.fields).toContain('nextToken')
      }
    },
  },
  {
    name: 'the GET form names a bad recency parameter by its field',
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'OK',
    only: 'rest',
    input: (_p, fixture) => retrieveIn(the(fixture)),
    verify: async (_result, _p, fixture) => {
      const spaceIds = the(fixture).timed.spaceId
      for (const [name, value, field] of [
        ['recencyWeight', '2', 'recency.weight'],
        ['recencyHalfLifeSeconds', '0', 'recency.halfLifeSeconds'],
        ['recencyHalfLifeSeconds', '30d', 'recency.halfLifeSeconds'],
        ['includeExpired', 'maybe', 'includeExpired'],
      ] as const) {
        const params = new URLSearchParams({
          message: TIMED_TOPIC,
          spaceIds,
          recencyHalfLifeSeconds: '60',
          [name]: value,
        })
        const answer = await fixture.client.restRaw('GET', `/v1/memories:retrieve?${params}`, {
          apiKey: fixture.alice.apiKey,
        })
        expect(answer.rawStatus, `${name}=${value}`).toBe(400)
        expect(answer.fields, `${name}=${value}`).toContain(field)
      }
    },
  },
]

/** Time filters over a page token that points into another user's space reveal nothing. */
export const SECURITY_CASES: ApiCase[] = [
  {
    name: "a time filter over another user's private space answers 404 like a missing space",
    operation: 'retrieveMemories',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: (_p, fixture) =>
      ask(TIMED_TOPIC, the(fixture).bobs.spaceId, { includeExpired: true }, "createdAt < '2030-01-01'"),
  },
  {
    name: "listing another user's private space by updatedAt answers 404, with a token of one's own or not",
    operation: 'listMemories',
    as: 'alice',
    expect: 'NOT_FOUND',
    prepare: async (fixture) => {
      const own = await fixture.call(
        'rest',
        'listMemories',
        { spaceId: the(fixture).timed.spaceId, maxResults: 1, sortBy: 'updatedAt' },
        fixture.alice.apiKey,
      )
      return { nextToken: own.body.nextToken }
    },
    input: (prepared, fixture) => ({
      spaceId: the(fixture).bobs.spaceId,
      sortBy: 'updatedAt',
      nextToken: prepared.nextToken,
      filter: "updatedAt > '2000-01-01'",
    }),
  },
  {
    name: "a batch delete by a time filter in another user's private space answers 404 and deletes nothing",
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: (_p, fixture) => ({ spaceId: the(fixture).bobs.spaceId, filter: "createdAt < '2030-01-01'", dryRun: true }),
    verify: async (_result, _p, fixture) => {
      const listed = await fixture.call(
        'rest',
        'listMemories',
        { spaceId: the(fixture).bobs.spaceId },
        fixture.bob.apiKey,
      )
      expect(listed.body.memories).toHaveLength(1)
    },
  },
  ...[
    "createdAt > '2026-01-01''; drop table memories; --'",
    "createdAt > '2026-01-01' OR pg_sleep(5) = 1",
    'updatedAt > (select now())',
    'validUntil IS NULL; delete from memories',
    'createdAt > now()',
  ].map(
    (filter): ApiCase => ({
      name: `a hostile time filter is refused: ${filter}`,
      operation: 'listMemories',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'filter',
      input: (_p, fixture) => ({ spaceId: the(fixture).timed.spaceId, filter }),
      verify: async (_result, _p, fixture) => {
        const listed = await fixture.call(
          'rest',
          'listMemories',
          { spaceId: the(fixture).timed.spaceId },
          fixture.alice.apiKey,
        )
        expect(listed.body.memories).toHaveLength(3)
      },
    }),
  ),
  {
    name: 'a forged updatedAt page token is refused, never read as SQL',
    operation: 'listMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'nextToken',
    input: (_p, fixture) => ({
      spaceId: the(fixture).timed.spaceId,
      sortBy: 'updatedAt',
      nextToken: Buffer.from(
        JSON.stringify(['updatedAt', "2026-01-01'); drop table memories; --", UNKNOWN_ID]),
      ).toString('base64url'),
    }),
  },
  {
    name: "a well-formed forged updatedAt page token only moves within the caller's own space",
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({
      spaceId: the(fixture).timed.spaceId,
      sortBy: 'updatedAt',
      nextToken: Buffer.from(JSON.stringify(['updatedAt', '2000-01-01T00:00:00.000000Z', UNKNOWN_ID])).toString(
        'base64url',
      ),
    }),
    verify: (result, _p, fixture) => {
      expect(listedKeys(the(fixture).timed, result)).toEqual(['old', 'new', 'mid'])
    },
  },
]
