import crypto from 'node:crypto'
import { expect } from 'vitest'
import { MAX_CONTENT_BYTES, MAX_METADATA_DEPTH, MAX_METADATA_PROPERTIES } from '../../src/validation/memory.js'
import type { ApiResult, Transport } from '../support/api-client.js'
import type { Actor, IdentityFixture } from '../support/identity-fixture.js'
import type { MemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'
import type { ApiCase } from './identity-cases.js'

/**
 * Spaces and memories as a table, in the shape of identity-cases and registry-cases: every
 * case runs over REST and gRPC, on PostgreSQL and PGlite, against a local embedding server
 * (test/support/fake-embedder.ts). Each case prepares the embedder, space and memories it
 * consumes, through REST, so that no case depends on another.
 */

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const TEXT =
  'Vectors live in pgvector.\n\nEach memory is cut into chunks and every chunk is embedded by each embedder of its space.'

let counter = 0
const unique = () => `${++counter}-${crypto.randomUUID().slice(0, 8)}`

type Who = 'alice' | 'bob' | 'admin'
const fixtureOf = (fixture: IdentityFixture) => fixture as MemoryFixture
const actor = (fixture: IdentityFixture, who: Who | Actor): Actor => (typeof who === 'string' ? fixture[who] : who)

/** A REST call that must succeed: the case's own set-up. */
async function must(
  fixture: IdentityFixture,
  operation: Parameters<IdentityFixture['call']>[1],
  input: unknown,
  who: Who | Actor,
): Promise<any> {
  const result = await fixture.call('rest', operation, input, actor(fixture, who).apiKey)
  if (result.status !== 'OK') throw new Error(`${operation} failed in set-up: ${result.message}`)
  return result.body
}

/** A space of `who`'s with one embedder of theirs pointing at the local embedding server. */
export async function newSpace(
  fixture: IdentityFixture,
  who: Who | Actor = 'alice',
  overrides: Record<string, unknown> = {},
): Promise<any> {
  const embedderId = await fixtureOf(fixture).registerEmbedder(actor(fixture, who))
  return must(
    fixture,
    'createSpace',
    { name: `space-${unique()}`, spaceEmbedders: [{ embedderId }], ...overrides },
    who,
  )
}

export async function newMemory(
  fixture: IdentityFixture,
  spaceId: string,
  who: Who | Actor = 'alice',
  overrides: Record<string, unknown> = {},
): Promise<any> {
  return must(fixture, 'createMemory', { spaceId, originalContent: `${TEXT} (${unique()})`, ...overrides }, who)
}

/** Polls over the case's transport until ingest has finished. */
export function settled(
  fixture: IdentityFixture,
  transport: Transport,
  memoryId: string,
  who: Who | Actor = 'alice',
): Promise<any> {
  return waitFor(`memory ${memoryId} to finish ingest`, async () => {
    const result = await fixture.call(transport, 'getMemory', { memoryId }, actor(fixture, who).apiKey)
    const status = result.body?.processingStatus
    return status === 'COMPLETED' || status === 'FAILED' ? result.body : undefined
  })
}

/** A space with a memory that has reached COMPLETED. */
async function spaceWithMemory(
  fixture: IdentityFixture,
  spaceOverrides: Record<string, unknown> = {},
): Promise<{ space: any; memory: any }> {
  const space = await newSpace(fixture, 'alice', spaceOverrides)
  const memory = await newMemory(fixture, space.spaceId)
  await settled(fixture, 'rest', memory.memoryId)
  return { space, memory }
}

/** REST answers the memory; gRPC answers {memory, created}. */
const memoryOf = (result: ApiResult) => result.body.memory ?? result.body
const memoryIds = (result: ApiResult): string[] => result.body.memories.map((memory: any) => memory.memoryId)

export const HAPPY_CASES: ApiCase[] = [
  {
    name: 'space: create with one embedder answers 201 with a Location, the default chunking and a READY embedder',
    operation: 'createSpace',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: async (fixture) => ({ embedderId: await fixtureOf(fixture).registerEmbedder(fixture.alice) }),
    input: (prepared) => ({
      name: `notes-${unique()}`,
      labels: { team: 'search' },
      spaceEmbedders: [{ embedderId: prepared.embedderId, defaultRetrievalWeight: 0.5 }],
    }),
    verify: (result, prepared, fixture, transport) => {
      expect(result.body).toMatchObject({
        ownerId: fixture.alice.userId,
        labels: { team: 'search' },
        publicRead: false,
        textSearchLanguage: 'english',
        spaceEmbedders: [
          {
            embedderId: prepared.embedderId,
            defaultRetrievalWeight: 0.5,
            indexState: 'READY',
            backfillProgress: { completedMemories: 0, totalMemories: 0 },
          },
        ],
        defaultChunkingConfig: {
          recursive: { chunkSize: 512, chunkOverlap: 64, keepStrategy: 'KEEP_END', separatorIsRegex: false },
        },
        createdById: fixture.alice.userId,
      })
      if (transport === 'rest') expect(result.headers?.get('location')).toBe(`/v1/spaces/${result.body.spaceId}`)
    },
  },
  {
    name: 'space: create keeps a client-chosen id, publicRead and a sentence chunking default',
    operation: 'createSpace',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: async (fixture) => ({
      id: crypto.randomUUID(),
      embedderId: await fixtureOf(fixture).registerEmbedder(fixture.alice),
    }),
    input: (prepared) => ({
      spaceId: prepared.id,
      name: `sentences-${unique()}`,
      publicRead: true,
      spaceEmbedders: [{ embedderId: prepared.embedderId }],
      defaultChunkingConfig: { sentence: { maxChunkSize: 300 } },
    }),
    verify: (result, prepared) =>
      expect(result.body).toMatchObject({
        spaceId: prepared.id,
        publicRead: true,
        defaultChunkingConfig: { sentence: { maxChunkSize: 300, minChunkSize: 0 } },
      }),
  },
  {
    name: 'space: list filters by label and pages with maxResults and nextToken, without overlap',
    operation: 'listSpaces',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const tag = unique()
      const spaces = []
      for (let i = 0; i < 3; i++) spaces.push(await newSpace(fixture, 'alice', { labels: { batch: tag } }))
      return { tag, ids: spaces.map((space) => space.spaceId) }
    },
    input: (prepared) => ({ labelFilter: { batch: prepared.tag }, maxResults: 2 }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body.spaces).toHaveLength(2)
      expect(result.body.nextToken).toEqual(expect.any(String))
      const next = await fixture.call(
        transport,
        'listSpaces',
        { labelFilter: { batch: prepared.tag }, maxResults: 2, nextToken: result.body.nextToken },
        fixture.alice.apiKey,
      )
      const seen = [...result.body.spaces, ...next.body.spaces].map((space: any) => space.spaceId)
      expect(seen.sort()).toEqual([...prepared.ids].sort())
      expect(next.body.nextToken).toBeUndefined()
    },
  },
  {
    name: 'space: get returns what create answered',
    operation: 'getSpace',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({ spaceId: prepared.spaceId }),
    verify: (result, prepared) => expect(result.body).toEqual(prepared),
  },
  {
    name: 'space: update renames, shares for reading and merges labels',
    operation: 'updateSpace',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => newSpace(fixture, 'alice', { labels: { team: 'a' } }),
    input: (prepared) => ({
      spaceId: prepared.spaceId,
      name: `renamed-${unique()}`,
      publicRead: true,
      mergeLabels: { tier: 'gold' },
    }),
    verify: (result) =>
      expect(result.body).toMatchObject({
        name: expect.stringMatching(/^renamed-/),
        publicRead: true,
        labels: { team: 'a', tier: 'gold' },
      }),
  },
  {
    name: 'space: delete answers 204 and takes its memories with it',
    operation: 'deleteSpace',
    as: 'alice',
    expect: 'OK',
    httpStatus: 204,
    prepare: (fixture) => spaceWithMemory(fixture),
    input: (prepared) => ({ spaceId: prepared.space.spaceId }),
    verify: async (_result, prepared, fixture, transport) => {
      expect(
        (await fixture.call(transport, 'getSpace', { spaceId: prepared.space.spaceId }, fixture.alice.apiKey)).status,
      ).toBe('NOT_FOUND')
      expect(
        (await fixture.call(transport, 'getMemory', { memoryId: prepared.memory.memoryId }, fixture.alice.apiKey))
          .status,
      ).toBe('NOT_FOUND')
    },
  },
  {
    name: 'memory: create answers 201 PENDING with a Location, and ingest brings it to COMPLETED with chunks',
    operation: 'createMemory',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      spaceId: prepared.spaceId,
      originalContent: TEXT,
      metadata: { source: 'case-table', page: 3, tags: ['a', 'b'] },
    }),
    verify: async (result, prepared, fixture, transport) => {
      const memory = memoryOf(result)
      expect(memory).toMatchObject({
        spaceId: prepared.spaceId,
        contentType: 'text/plain',
        metadata: { source: 'case-table', page: 3, tags: ['a', 'b'] },
        processingStatus: 'PENDING',
        chunkCount: 0,
        originalContentSha256: crypto.createHash('sha256').update(TEXT).digest('hex'),
        createdById: fixture.alice.userId,
      })
      if (transport === 'rest') expect(result.headers?.get('location')).toBe(`/v1/memories/${memory.memoryId}`)
      else expect(result.body.created).toBe(true)
      const done = await settled(fixture, transport, memory.memoryId)
      expect(done).toMatchObject({ processingStatus: 'COMPLETED', chunkCount: expect.any(Number) })
      expect(done.chunkCount).toBeGreaterThan(0)
      expect(done.processingError).toBeUndefined()
    },
  },
  {
    name: 'memory: base64 markdown content with its own chunking config and a client-chosen id',
    operation: 'createMemory',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: async (fixture) => ({ space: await newSpace(fixture), id: crypto.randomUUID() }),
    input: (prepared) => ({
      memoryId: prepared.id,
      spaceId: prepared.space.spaceId,
      originalContentB64: Buffer.from(`# Title\n\n${TEXT}`).toString('base64'),
      contentType: 'text/markdown',
      chunkingConfig: { recursive: { chunkSize: 40, chunkOverlap: 5 } },
    }),
    verify: async (result, prepared, fixture, transport) => {
      expect(memoryOf(result)).toMatchObject({
        memoryId: prepared.id,
        contentType: 'text/markdown',
        chunkingConfig: { recursive: { chunkSize: 40, chunkOverlap: 5 } },
      })
      const done = await settled(fixture, transport, prepared.id)
      expect(done.processingStatus).toBe('COMPLETED')
      expect(done.chunkCount).toBeGreaterThan(3)
      const content = await fixture.call(transport, 'getMemoryContent', { memoryId: prepared.id }, fixture.alice.apiKey)
      expect(content.body).toEqual({
        memoryId: prepared.id,
        contentType: 'text/markdown',
        originalContent: `# Title\n\n${TEXT}`,
      })
    },
  },
  {
    name: 'memory: batch create answers per item in order; one bad item does not sink the others',
    operation: 'batchCreateMemories',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      requests: [
        { spaceId: prepared.spaceId, originalContent: `first ${unique()}` },
        { spaceId: prepared.spaceId, originalContent: '   ' },
        { spaceId: prepared.spaceId, originalContent: `third ${unique()}`, metadata: { n: 3 } },
      ],
    }),
    verify: async (result, prepared, fixture, transport) => {
      const [first, bad, third] = result.body.results
      expect(first).toMatchObject({ memory: { spaceId: prepared.spaceId, processingStatus: 'PENDING' }, created: true })
      expect(bad.memory).toBeUndefined()
      expect(bad.error).toMatchObject({
        code: 400,
        status: 'INVALID_ARGUMENT',
        details: [{ field: 'requests.1.originalContent', description: 'must not be empty' }],
      })
      expect(third).toMatchObject({ memory: { metadata: { n: 3 } }, created: true })
      for (const item of [first, third])
        expect((await settled(fixture, transport, item.memory.memoryId)).processingStatus).toBe('COMPLETED')
      const listed = await fixture.call(transport, 'listMemories', { spaceId: prepared.spaceId }, fixture.alice.apiKey)
      expect(listed.body.memories).toHaveLength(2)
    },
  },
  {
    name: 'memory: list filters by status and pages in creation order, either way',
    operation: 'listMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const space = await newSpace(fixture)
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await newMemory(fixture, space.spaceId)).memoryId)
      for (const id of ids) await settled(fixture, 'rest', id)
      return { space, ids }
    },
    input: (prepared) => ({ spaceId: prepared.space.spaceId, statusFilter: 'COMPLETED', maxResults: 2 }),
    verify: async (result, prepared, fixture, transport) => {
      const key = fixture.alice.apiKey
      expect(memoryIds(result)).toEqual(prepared.ids.slice(0, 2))
      const next = await fixture.call(
        transport,
        'listMemories',
        { spaceId: prepared.space.spaceId, statusFilter: 'COMPLETED', maxResults: 2, nextToken: result.body.nextToken },
        key,
      )
      expect(memoryIds(next)).toEqual(prepared.ids.slice(2))
      expect(next.body.nextToken).toBeUndefined()
      const pending = await fixture.call(
        transport,
        'listMemories',
        { spaceId: prepared.space.spaceId, statusFilter: 'PENDING' },
        key,
      )
      expect(pending.body.memories).toEqual([])
      const newestFirst = await fixture.call(
        transport,
        'listMemories',
        { spaceId: prepared.space.spaceId, sortBy: 'createdAt', sortOrder: 'DESCENDING' },
        key,
      )
      expect(memoryIds(newestFirst)).toEqual([...prepared.ids].reverse())
    },
  },
  {
    name: 'memory: get content returns the original text and its content type',
    operation: 'getMemoryContent',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) =>
      newMemory(fixture, (await newSpace(fixture)).spaceId, 'alice', {
        originalContent: '{"a": [1, 2]}',
        contentType: 'application/json',
      }),
    input: (prepared) => ({ memoryId: prepared.memoryId }),
    verify: (result, prepared) =>
      expect(result.body).toEqual({
        memoryId: prepared.memoryId,
        contentType: 'application/json',
        originalContent: '{"a": [1, 2]}',
      }),
  },
  {
    name: 'memory: delete answers 204 and the memory is gone',
    operation: 'deleteMemory',
    as: 'alice',
    expect: 'OK',
    httpStatus: 204,
    prepare: (fixture) => spaceWithMemory(fixture),
    input: (prepared) => ({ memoryId: prepared.memory.memoryId }),
    verify: async (_result, prepared, fixture, transport) => {
      expect(
        (await fixture.call(transport, 'getMemory', { memoryId: prepared.memory.memoryId }, fixture.alice.apiKey))
          .status,
      ).toBe('NOT_FOUND')
      expect(
        (await fixture.call(transport, 'listMemories', { spaceId: prepared.space.spaceId }, fixture.alice.apiKey)).body
          .memories,
      ).toEqual([])
    },
  },
  {
    name: 'memory: batch delete by ids reports each id in order, an unknown one as not deleted',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const space = await newSpace(fixture)
      return { space, first: await newMemory(fixture, space.spaceId), second: await newMemory(fixture, space.spaceId) }
    },
    input: (prepared) => ({ memoryIds: [prepared.first.memoryId, UNKNOWN_ID, prepared.second.memoryId] }),
    verify: (result, prepared) =>
      expect(result.body).toEqual({
        deletedCount: 2,
        results: [
          { memoryId: prepared.first.memoryId, deleted: true },
          { memoryId: UNKNOWN_ID, deleted: false, error: 'not found' },
          { memoryId: prepared.second.memoryId, deleted: true },
        ],
        dryRun: false,
      }),
  },
  {
    name: 'memory: batch delete by space and status removes only the matching memories',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const { space, memory } = await spaceWithMemory(fixture)
      const other = await newSpace(fixture)
      return { space, memory, kept: await newMemory(fixture, other.spaceId) }
    },
    input: (prepared) => ({ spaceId: prepared.space.spaceId, statusFilter: 'COMPLETED', expectedCount: 1 }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body.deletedCount).toBe(1)
      expect(
        (await fixture.call(transport, 'getMemory', { memoryId: prepared.memory.memoryId }, fixture.alice.apiKey))
          .status,
      ).toBe('NOT_FOUND')
      expect(
        (await fixture.call(transport, 'getMemory', { memoryId: prepared.kept.memoryId }, fixture.alice.apiKey)).status,
      ).toBe('OK')
    },
  },
  {
    name: 'memory: dedupe answers with the memory already holding the same content (REST 200, not 201)',
    operation: 'createMemory',
    as: 'alice',
    expect: 'OK',
    httpStatus: 200,
    prepare: async (fixture) => {
      const text = `same text ${unique()}`
      return {
        text,
        ...(await newMemory(fixture, (await newSpace(fixture)).spaceId, 'alice', { originalContent: text })),
      }
    },
    input: (prepared) => ({ spaceId: prepared.spaceId, originalContent: prepared.text, dedupe: true }),
    verify: async (result, prepared, fixture, transport) => {
      expect(memoryOf(result).memoryId).toBe(prepared.memoryId)
      if (transport === 'grpc') expect(result.body.created).toBe(false)
      expect(
        (await fixture.call(transport, 'listMemories', { spaceId: prepared.spaceId }, fixture.alice.apiKey)).body
          .memories,
      ).toHaveLength(1)
    },
  },
  {
    name: 'space: addEmbedder answers 202 and back-fills the memories already stored until READY',
    operation: 'addSpaceEmbedder',
    as: 'alice',
    expect: 'OK',
    httpStatus: 202,
    prepare: async (fixture) => ({
      ...(await spaceWithMemory(fixture)),
      embedderId: await fixtureOf(fixture).registerEmbedder(fixture.alice),
    }),
    input: (prepared) => ({
      spaceId: prepared.space.spaceId,
      embedderId: prepared.embedderId,
      defaultRetrievalWeight: 2,
    }),
    verify: async (result, prepared, fixture, transport) => {
      const added = result.body.spaceEmbedders.find((entry: any) => entry.embedderId === prepared.embedderId)
      expect(added).toMatchObject({ defaultRetrievalWeight: 2, backfillProgress: { totalMemories: 1 } })
      const ready = await waitFor('the new embedder to be READY', async () => {
        const space = (
          await fixture.call(transport, 'getSpace', { spaceId: prepared.space.spaceId }, fixture.alice.apiKey)
        ).body
        const entry = space.spaceEmbedders.find((item: any) => item.embedderId === prepared.embedderId)
        return entry.indexState === 'READY' ? entry : undefined
      })
      expect(ready.backfillProgress).toEqual({ completedMemories: 1, totalMemories: 1 })
    },
  },
  {
    name: 'space: removeEmbedder drops one of two embedders',
    operation: 'removeSpaceEmbedder',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const space = await newSpace(fixture)
      const second = await fixtureOf(fixture).registerEmbedder(fixture.alice)
      await must(fixture, 'addSpaceEmbedder', { spaceId: space.spaceId, embedderId: second }, 'alice')
      return { space, second }
    },
    input: (prepared) => ({ spaceId: prepared.space.spaceId, embedderId: prepared.second }),
    verify: (result, prepared) =>
      expect(result.body.spaceEmbedders.map((entry: any) => entry.embedderId)).toEqual([
        prepared.space.spaceEmbedders[0].embedderId,
      ]),
  },
]

const memoryInput = (prepared: any, overrides: Record<string, unknown>) => ({
  spaceId: prepared.spaceId,
  originalContent: TEXT,
  ...overrides,
})

/** A memory created over an embedder (registered with `embedder`) whose answers end its ingest FAILED, not retried. */
function ingestFailureCase(
  answering: string,
  outcome: string,
  processingError: RegExp,
  embedder: (memory: MemoryFixture) => Record<string, unknown>,
): ApiCase {
  return {
    name: `memory: an embedder answering ${answering} ends the memory FAILED, ${outcome}`,
    operation: 'createMemory',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: async (fixture) => {
      const embedderId = await fixtureOf(fixture).registerEmbedder(fixture.alice, embedder(fixtureOf(fixture)))
      return must(fixture, 'createSpace', { name: `failing-${unique()}`, spaceEmbedders: [{ embedderId }] }, 'alice')
    },
    input: (prepared) => memoryInput(prepared, {}),
    verify: async (result, _prepared, fixture, transport) => {
      const done = await settled(fixture, transport, memoryOf(result).memoryId)
      expect(done).toMatchObject({ processingStatus: 'FAILED', chunkCount: 0 })
      expect(done.processingError).toMatch(processingError)
    },
  }
}

const NUL = '\u0000'
const LONE_SURROGATE = '\ud800'

/**
 * Text PostgreSQL cannot store as sent (issue 30): a NUL answered 500 on spaces and in metadata, and
 * a lone surrogate in a name or in content was stored as U+FFFD. Each is a 400 naming the field. A
 * lone surrogate cannot cross gRPC (protobuf strings are UTF-8), so those cases are REST-only; over
 * gRPC, bytes that are not UTF-8 are refused instead (test/robustness/request-limits.test.ts).
 */
const UNSTORABLE_TEXT_CASES: ApiCase[] = [NUL, LONE_SURROGATE].flatMap((bad): ApiCase[] => {
  const what = bad === NUL ? 'NUL' : 'a lone surrogate'
  const restOnly = bad === NUL ? {} : { only: 'rest' as const }
  return [
    {
      name: `space: ${what} in the name is refused naming name`,
      operation: 'createSpace',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'name',
      prepare: async (fixture) => ({ embedderId: await fixtureOf(fixture).registerEmbedder(fixture.alice) }),
      input: (prepared) => ({ name: `a${bad}b`, spaceEmbedders: [{ embedderId: prepared.embedderId }] }),
      ...restOnly,
    },
    {
      name: `space: ${what} in a separator is refused naming it`,
      operation: 'createSpace',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'defaultChunkingConfig.recursive.separators.0',
      prepare: async (fixture) => ({ embedderId: await fixtureOf(fixture).registerEmbedder(fixture.alice) }),
      input: (prepared) => ({
        name: `space-${unique()}`,
        spaceEmbedders: [{ embedderId: prepared.embedderId }],
        defaultChunkingConfig: { recursive: { separators: [`x${bad}`] } },
      }),
      ...restOnly,
    },
    {
      name: `memory: ${what} in the content is refused naming originalContent`,
      operation: 'createMemory',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'originalContent',
      prepare: (fixture) => newSpace(fixture),
      input: (prepared) => memoryInput(prepared, { originalContent: `before ${bad} after` }),
      ...restOnly,
    },
    {
      name: `memory: ${what} in a nested metadata value is refused naming its path`,
      operation: 'createMemory',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'metadata.source.tags.1',
      prepare: (fixture) => newSpace(fixture),
      input: (prepared) => memoryInput(prepared, { metadata: { source: { tags: ['ok', `t${bad}`] } } }),
      ...restOnly,
    },
    {
      name: `memory: ${what} in a metadata key is refused naming it`,
      operation: 'createMemory',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: `metadata.k${bad}`,
      prepare: (fixture) => newSpace(fixture),
      input: (prepared) => memoryInput(prepared, { metadata: { [`k${bad}`]: 'v' } }),
      // A gRPC trailer cannot carry a lone surrogate in the field name: the REST detail names it exactly.
      only: 'rest',
    },
  ]
})

export const ERROR_CASES: ApiCase[] = [
  ...UNSTORABLE_TEXT_CASES,
  {
    // JSON cannot carry it (JSON.parse reads 1e999 as Infinity, refused on REST by request-limits.test.ts); a protobuf double can.
    name: 'memory: a metadata number that is not finite is refused naming it',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'metadata.score',
    only: 'grpc',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { metadata: { score: Number.POSITIVE_INFINITY } }),
  },
  {
    name: `memory: metadata nested more than ${MAX_METADATA_DEPTH} levels is refused naming the deepest object`,
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: `metadata.${Array(MAX_METADATA_DEPTH).fill('a').join('.')}`,
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      ...memoryInput(prepared, {}),
      metadata: Array.from({ length: MAX_METADATA_DEPTH }).reduce<Record<string, unknown>>((inner) => ({ a: inner }), {
        leaf: 1,
      }),
    }),
  },
  {
    name: 'memory: 600 ids to delete are refused with one error naming memoryIds',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'memoryIds',
    input: () => ({ memoryIds: Array.from({ length: 600 }, () => 'not-a-uuid') }),
    verify: (result) => {
      expect(result.fields).toEqual(['memoryIds'])
    },
  },
  {
    name: 'memory: empty content is refused naming originalContent',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'originalContent',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { originalContent: ' \n\t ' }),
  },
  {
    name: `memory: content over ${MAX_CONTENT_BYTES} bytes is 413 naming originalContent`,
    operation: 'createMemory',
    as: 'alice',
    expect: 'PAYLOAD_TOO_LARGE',
    field: 'originalContent',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { originalContent: 'a'.repeat(MAX_CONTENT_BYTES + 1) }),
  },
  {
    name: 'memory: base64 content over the limit is 413 naming originalContentB64',
    operation: 'createMemory',
    as: 'alice',
    expect: 'PAYLOAD_TOO_LARGE',
    field: 'originalContentB64',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      spaceId: prepared.spaceId,
      originalContentB64: Buffer.alloc(MAX_CONTENT_BYTES + 3, 'a').toString('base64'),
    }),
  },
  {
    name: 'memory: an unknown contentType is refused naming contentType',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'contentType',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { contentType: 'application/pdf' }),
  },
  {
    name: 'memory: application/json content that is not JSON is refused naming originalContent',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'originalContent',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { contentType: 'application/json', originalContent: '{not json' }),
  },
  {
    name: 'memory: metadata that is not an object is refused naming metadata',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'metadata',
    only: 'rest',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { metadata: ['a', 'b'] }),
  },
  {
    name: `memory: metadata with more than ${MAX_METADATA_PROPERTIES} properties is refused naming metadata`,
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'metadata',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) =>
      memoryInput(prepared, {
        metadata: Object.fromEntries(Array.from({ length: MAX_METADATA_PROPERTIES + 1 }, (_, i) => [`k${i}`, i])),
      }),
  },
  ...(
    [
      ['an OCR mode that is not AUTO, ON or OFF', { ocr: 'SOMETIMES' }, 'ocr'],
      ['a page image resolution over 300 DPI', { pageImageDpi: 5000 }, 'pageImageDpi'],
      ['an OCR language that is a path', { ocrLanguages: ['../eng'] }, 'ocrLanguages.0'],
      ['a file name with a path', { fileName: 'a/b.pdf' }, 'fileName'],
    ] as const
  ).map(
    ([what, fields, field]): ApiCase => ({
      name: `memory: ${what} is refused naming ${field}`,
      operation: 'createMemory',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field,
      prepare: (fixture) => newSpace(fixture),
      input: (prepared) => memoryInput(prepared, fields),
    }),
  ),
  {
    name: 'space: an OCR default that is not AUTO, ON or OFF is refused naming defaultOcr',
    operation: 'createSpace',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'defaultOcr',
    input: () => ({ name: `ocr-${crypto.randomUUID()}`, defaultOcr: 'MAYBE' }),
  },
  {
    name: 'memory: chunk overlap equal to the chunk size is refused naming chunkOverlap',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'chunkingConfig.recursive.chunkOverlap',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) =>
      memoryInput(prepared, { chunkingConfig: { recursive: { chunkSize: 100, chunkOverlap: 100 } } }),
  },
  {
    name: 'memory: both originalContent and originalContentB64 are refused',
    operation: 'createMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'originalContent',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => memoryInput(prepared, { originalContentB64: 'aGVsbG8=' }),
  },
  {
    name: 'memory: a memory id used twice is 409',
    operation: 'createMemory',
    as: 'alice',
    expect: 'ALREADY_EXISTS',
    prepare: async (fixture) => newMemory(fixture, (await newSpace(fixture)).spaceId),
    input: (prepared) => ({ memoryId: prepared.memoryId, spaceId: prepared.spaceId, originalContent: 'other text' }),
  },
  {
    name: 'memory: an unknown space is 404',
    operation: 'createMemory',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: () => ({ spaceId: UNKNOWN_ID, originalContent: TEXT }),
  },
  {
    name: 'memory: an unknown memory is 404',
    operation: 'getMemory',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: () => ({ memoryId: UNKNOWN_ID }),
  },
  {
    name: 'memory: a page of more than 500 is refused naming maxResults',
    operation: 'listMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'maxResults',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({ spaceId: prepared.spaceId, maxResults: 501 }),
  },
  {
    name: 'memory: batch delete with neither ids nor a space is refused naming memoryIds',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'memoryIds',
    input: () => ({}),
  },
  // The server answers 16 dimensions; the embedder says 8.
  ingestFailureCase('the wrong dimensionality', 'naming the dimensions', /dimension/i, (memory) => ({
    dimensionality: memory.embedder.dimensions / 2,
  })),
  ingestFailureCase('values beyond half precision', 'saying so', /65504/, (memory) => ({
    endpointUrl: `${memory.embedder.url}/scale/1000000`,
  })),
  {
    name: 'space: an unknown embedder is 404 naming spaceEmbedders.0.embedderId',
    operation: 'createSpace',
    as: 'alice',
    expect: 'NOT_FOUND',
    field: 'spaceEmbedders.0.embedderId',
    input: () => ({ name: `unknown-${unique()}`, spaceEmbedders: [{ embedderId: UNKNOWN_ID }] }),
  },
  {
    name: 'space: a default chunk overlap ≥ chunk size is refused naming it',
    operation: 'createSpace',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'defaultChunkingConfig.recursive.chunkOverlap',
    prepare: async (fixture) => ({ embedderId: await fixtureOf(fixture).registerEmbedder(fixture.alice) }),
    input: (prepared) => ({
      name: `overlap-${unique()}`,
      spaceEmbedders: [{ embedderId: prepared.embedderId }],
      defaultChunkingConfig: { recursive: { chunkSize: 50, chunkOverlap: 80 } },
    }),
  },
  {
    name: 'space: a name the owner already uses is 409',
    operation: 'createSpace',
    as: 'alice',
    expect: 'ALREADY_EXISTS',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      name: prepared.name,
      spaceEmbedders: [{ embedderId: prepared.spaceEmbedders[0].embedderId }],
    }),
  },
  {
    name: 'space: addEmbedder with an unknown embedder is 404 naming embedderId',
    operation: 'addSpaceEmbedder',
    as: 'alice',
    expect: 'NOT_FOUND',
    field: 'embedderId',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({ spaceId: prepared.spaceId, embedderId: UNKNOWN_ID }),
  },
  {
    name: 'space: addEmbedder with an embedder already in the space is 409',
    operation: 'addSpaceEmbedder',
    as: 'alice',
    expect: 'ALREADY_EXISTS',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({ spaceId: prepared.spaceId, embedderId: prepared.spaceEmbedders[0].embedderId }),
  },
  {
    name: 'space: an unknown space is 404',
    operation: 'getSpace',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: () => ({ spaceId: UNKNOWN_ID }),
  },
  {
    name: 'space: calls without an API key are 401',
    operation: 'listSpaces',
    as: 'none',
    expect: 'UNAUTHENTICATED',
  },
]

/** Alice's space with a COMPLETED memory, shared for reading or not. */
const alicesMemory = (publicRead: boolean) => (fixture: IdentityFixture) => spaceWithMemory(fixture, { publicRead })

function privateCases(): ApiCase[] {
  const hidden = (name: string, operation: ApiCase['operation'], input: (prepared: any) => any): ApiCase => ({
    name: `another user's private space: ${name} is 404`,
    operation,
    as: 'bob',
    expect: 'NOT_FOUND',
    prepare: alicesMemory(false),
    input,
  })
  return [
    hidden('getSpace', 'getSpace', (p) => ({ spaceId: p.space.spaceId })),
    hidden('updateSpace', 'updateSpace', (p) => ({ spaceId: p.space.spaceId, name: `taken-${unique()}` })),
    hidden('deleteSpace', 'deleteSpace', (p) => ({ spaceId: p.space.spaceId })),
    hidden('addSpaceEmbedder', 'addSpaceEmbedder', (p) => ({
      spaceId: p.space.spaceId,
      embedderId: p.space.spaceEmbedders[0].embedderId,
    })),
    hidden('createMemory', 'createMemory', (p) => ({ spaceId: p.space.spaceId, originalContent: TEXT })),
    hidden('listMemories', 'listMemories', (p) => ({ spaceId: p.space.spaceId })),
    hidden('getMemory', 'getMemory', (p) => ({ memoryId: p.memory.memoryId })),
    hidden('getMemoryContent', 'getMemoryContent', (p) => ({ memoryId: p.memory.memoryId })),
    hidden('deleteMemory', 'deleteMemory', (p) => ({ memoryId: p.memory.memoryId })),
    hidden('batchDeleteMemories by space', 'batchDeleteMemories', (p) => ({
      spaceId: p.space.spaceId,
      statusFilter: 'COMPLETED',
      dryRun: true,
    })),
    {
      name: "another user's private space: batch delete by ids deletes nothing and reports not found",
      operation: 'batchDeleteMemories',
      as: 'bob',
      expect: 'OK',
      prepare: alicesMemory(false),
      input: (prepared) => ({ memoryIds: [prepared.memory.memoryId] }),
      verify: async (result, prepared, fixture, transport) => {
        expect(result.body).toEqual({
          deletedCount: 0,
          results: [{ memoryId: prepared.memory.memoryId, deleted: false, error: 'not found' }],
          dryRun: false,
        })
        expect(
          (await fixture.call(transport, 'getMemory', { memoryId: prepared.memory.memoryId }, fixture.alice.apiKey))
            .status,
        ).toBe('OK')
      },
    },
    {
      name: "another user's private space: it is not in their list",
      operation: 'listSpaces',
      as: 'bob',
      expect: 'OK',
      prepare: alicesMemory(false),
      verify: (result, prepared) =>
        expect(result.body.spaces.map((space: any) => space.spaceId)).not.toContain(prepared.space.spaceId),
    },
    {
      name: "another user's embedder cannot go into one's own space: 404 naming the field",
      operation: 'createSpace',
      as: 'bob',
      expect: 'NOT_FOUND',
      field: 'spaceEmbedders.0.embedderId',
      prepare: alicesMemory(false),
      input: (prepared) => ({
        name: `borrowed-${unique()}`,
        spaceEmbedders: [{ embedderId: prepared.space.spaceEmbedders[0].embedderId }],
      }),
    },
    {
      name: "a plain user cannot list another user's spaces by ownerId",
      operation: 'listSpaces',
      as: 'bob',
      expect: 'PERMISSION_DENIED',
      input: (_p, fixture) => ({ ownerId: fixture.alice.userId }),
    },
    {
      name: "an admin reads another user's private space (GET_SPACE_ANY)",
      operation: 'getSpace',
      as: 'admin',
      expect: 'OK',
      prepare: alicesMemory(false),
      input: (prepared) => ({ spaceId: prepared.space.spaceId }),
      verify: (result, _p, fixture) => expect(result.body.ownerId).toBe(fixture.alice.userId),
    },
  ]
}

function publicReadCases(): ApiCase[] {
  const readable = (
    name: string,
    operation: ApiCase['operation'],
    input: (prepared: any) => any,
    verify: ApiCase['verify'],
  ): ApiCase => ({
    name: `a publicRead space: another user may ${name}`,
    operation,
    as: 'bob',
    expect: 'OK',
    prepare: alicesMemory(true),
    input,
    verify,
  })
  const refused = (name: string, operation: ApiCase['operation'], input: (prepared: any) => any): ApiCase => ({
    name: `a publicRead space: another user may not ${name} (403)`,
    operation,
    as: 'bob',
    expect: 'PERMISSION_DENIED',
    prepare: alicesMemory(true),
    input,
  })
  return [
    readable(
      'get it',
      'getSpace',
      (p) => ({ spaceId: p.space.spaceId }),
      (result, p) => expect(result.body.spaceId).toBe(p.space.spaceId),
    ),
    readable(
      'list its memories',
      'listMemories',
      (p) => ({ spaceId: p.space.spaceId }),
      (result, p) => expect(memoryIds(result)).toEqual([p.memory.memoryId]),
    ),
    readable(
      'get a memory',
      'getMemory',
      (p) => ({ memoryId: p.memory.memoryId }),
      (result, p) => expect(result.body.memoryId).toBe(p.memory.memoryId),
    ),
    readable(
      "get a memory's content",
      'getMemoryContent',
      (p) => ({ memoryId: p.memory.memoryId }),
      (result) => expect(result.body.originalContent).toContain('pgvector'),
    ),
    refused('add a memory', 'createMemory', (p) => ({ spaceId: p.space.spaceId, originalContent: TEXT })),
    refused('delete a memory', 'deleteMemory', (p) => ({ memoryId: p.memory.memoryId })),
    refused('batch delete its memories', 'batchDeleteMemories', (p) => ({
      spaceId: p.space.spaceId,
      statusFilter: 'COMPLETED',
      expectedCount: 1,
    })),
    refused('rename it', 'updateSpace', (p) => ({ spaceId: p.space.spaceId, name: `mine-${unique()}` })),
    refused('delete it', 'deleteSpace', (p) => ({ spaceId: p.space.spaceId })),
    refused('remove its embedder', 'removeSpaceEmbedder', (p) => ({
      spaceId: p.space.spaceId,
      embedderId: p.space.spaceEmbedders[0].embedderId,
    })),
  ]
}

export const SECURITY_CASES: ApiCase[] = [...privateCases(), ...publicReadCases()]
