import crypto from 'node:crypto'
import { expect } from 'vitest'
import { MAX_METADATA_PROPERTIES } from '../../src/validation/memory.js'
import { MAX_MEMORY_BATCH_ITEMS } from '../../src/validation/memory-updates.js'
import type { Transport } from '../support/api-client.js'
import type { IdentityFixture } from '../support/identity-fixture.js'
import type { ApiCase } from './identity-cases.js'
import { newMemory, newSpace, settled } from './memory-cases.js'

/**
 * A memory's life after create, as a table over REST and gRPC on both engines: update
 * (metadata at once, content as a new version), the version precondition, batch update and
 * batch get, its history, and the safe delete by filter. Each case prepares what it uses.
 */

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex')

async function call(fixture: IdentityFixture, transport: Transport, operation: any, input: unknown, apiKey: string) {
  const result = await fixture.call(transport, operation, input, apiKey)
  if (result.status !== 'OK') throw new Error(`${operation} failed: ${result.message}`)
  return result.body
}

/** Alice's space with a COMPLETED memory holding `metadata`. */
async function completedMemory(fixture: IdentityFixture, metadata: Record<string, unknown> = {}, space?: any) {
  const owned = space ?? (await newSpace(fixture))
  const memory = await newMemory(fixture, owned.spaceId, 'alice', { metadata })
  return { space: owned, memory: await settled(fixture, 'rest', memory.memoryId) }
}

/** The memory as its owner reads it now, over the case's transport (the result, so a refusal can be checked too). */
const aliceReads = (fixture: IdentityFixture, transport: Transport, memoryId: string) =>
  fixture.call(transport, 'getMemory', { memoryId }, fixture.alice.apiKey)

const update = (fixture: IdentityFixture, transport: Transport, input: unknown) =>
  call(fixture, transport, 'updateMemory', input, fixture.alice.apiKey)

export const LIFECYCLE_HAPPY_CASES: ApiCase[] = [
  {
    name: 'update: mergeMetadata sets and removes keys at once, a new version without embedding again',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => completedMemory(fixture, { topic: 'space', draft: true, user_id: 'u-1' }),
    input: (prepared) => ({
      memoryId: prepared.memory.memoryId,
      expectedVersion: 1,
      mergeMetadata: { topic: 'astronomy', draft: null, reviewed: 'yes' },
    }),
    verify: (result, prepared) => {
      expect(result.body).toMatchObject({
        memoryId: prepared.memory.memoryId,
        version: 2,
        metadata: { topic: 'astronomy', reviewed: 'yes', user_id: 'u-1' },
        processingStatus: 'COMPLETED',
        chunkCount: prepared.memory.chunkCount,
        originalContentSha256: prepared.memory.originalContentSha256,
      })
      expect(result.body.metadata).not.toHaveProperty('draft')
      expect(result.body.contentPending).toBeUndefined()
    },
  },
  {
    name: 'update: replaceMetadata and validUntil, then clearValidUntil, each one version more',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const prepared = await completedMemory(fixture, { old: 1 })
      const validUntil = Date.parse('2030-01-01T00:00:00Z')
      const first = await update(fixture, 'rest', {
        memoryId: prepared.memory.memoryId,
        replaceMetadata: { fresh: true },
        validUntil,
      })
      return { ...prepared, first, validUntil }
    },
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, clearValidUntil: true }),
    verify: (result, prepared) => {
      expect(prepared.first).toMatchObject({ version: 2, metadata: { fresh: true }, validUntil: prepared.validUntil })
      expect(result.body).toMatchObject({ version: 3, metadata: { fresh: true } })
      expect(result.body.validUntil).toBeUndefined()
    },
  },
  {
    name: 'update: new content is a new version, PENDING while the old chunks answer, then COMPLETED with the new hash',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => completedMemory(fixture),
    input: (prepared) => ({
      memoryId: prepared.memory.memoryId,
      originalContent: 'The second version speaks of tidal heating on Europa.',
    }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body).toMatchObject({ version: 2, contentPending: true })
      const done = await settled(fixture, transport, prepared.memory.memoryId)
      expect(done).toMatchObject({
        processingStatus: 'COMPLETED',
        version: 2,
        originalContentSha256: sha256('The second version speaks of tidal heating on Europa.'),
      })
      expect(done.contentPending).toBeUndefined()
      const content = await call(
        fixture,
        transport,
        'getMemoryContent',
        { memoryId: prepared.memory.memoryId },
        fixture.alice.apiKey,
      )
      expect(content.originalContent).toBe('The second version speaks of tidal heating on Europa.')
    },
  },
  {
    name: 'update: the same values as stored change nothing: no new version',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => completedMemory(fixture, { same: 1 }),
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, mergeMetadata: { same: 1 } }),
    verify: (result) => expect(result.body.version).toBe(1),
  },
  {
    name: 'batch update: each item answers on its own, in order; a stale version fails alone with 412',
    operation: 'batchUpdateMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const first = await completedMemory(fixture)
      return { first: first.memory, second: (await completedMemory(fixture, {}, first.space)).memory }
    },
    input: (prepared) => ({
      requests: [
        { memoryId: prepared.first.memoryId, mergeMetadata: { batch: 1 }, expectedVersion: 1 },
        { memoryId: prepared.second.memoryId, mergeMetadata: { batch: 2 }, expectedVersion: 7 },
        { memoryId: UNKNOWN_ID, mergeMetadata: { batch: 3 } },
      ],
    }),
    verify: async (result, prepared, fixture, transport) => {
      const [first, second, third] = result.body.results
      expect(first.memory).toMatchObject({ memoryId: prepared.first.memoryId, version: 2, metadata: { batch: 1 } })
      expect(second.error).toMatchObject({ code: 412, status: 'FAILED_PRECONDITION' })
      expect(second.error.details[0].field).toBe('requests.1.expectedVersion')
      expect(third.error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
      const untouched = (await aliceReads(fixture, transport, prepared.second.memoryId)).body
      expect(untouched).toMatchObject({ version: 1, metadata: {} })
    },
  },
  {
    name: 'batch get: a result per id in order, an unknown id a 404 of its own',
    operation: 'batchGetMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const space = await newSpace(fixture)
      return {
        first: await newMemory(fixture, space.spaceId),
        second: await newMemory(fixture, space.spaceId),
      }
    },
    input: (prepared) => ({ memoryIds: [prepared.second.memoryId, UNKNOWN_ID, prepared.first.memoryId] }),
    verify: (result, prepared) => {
      const [second, unknown, first] = result.body.results
      expect(second).toMatchObject({
        memoryId: prepared.second.memoryId,
        memory: { memoryId: prepared.second.memoryId },
      })
      expect(unknown).toMatchObject({ memoryId: UNKNOWN_ID, error: { code: 404, status: 'NOT_FOUND' } })
      expect(first).toMatchObject({ memoryId: prepared.first.memoryId, memory: { spaceId: prepared.first.spaceId } })
    },
  },
  {
    name: 'history: each update and the delete, newest first, with who, which key and what changed',
    operation: 'getMemoryHistory',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const { memory } = await completedMemory(fixture, { topic: 'moons', keep: true })
      await update(fixture, 'rest', { memoryId: memory.memoryId, mergeMetadata: { topic: 'tides' } })
      await update(fixture, 'rest', { memoryId: memory.memoryId, originalContent: 'Io is volcanic.' })
      await settled(fixture, 'rest', memory.memoryId)
      await call(fixture, 'rest', 'deleteMemory', { memoryId: memory.memoryId }, fixture.alice.apiKey)
      return { memory }
    },
    input: (prepared) => ({ memoryId: prepared.memory.memoryId }),
    verify: (result, prepared, fixture) => {
      const [deleted, content, metadata] = result.body.changes
      const who = { changedById: fixture.alice.userId, apiKeyId: fixture.alice.apiKeyId }
      expect(result.body.changes).toHaveLength(3)
      expect(deleted).toMatchObject({
        ...who,
        action: 'DELETE',
        version: 3,
        contentSha256Before: sha256('Io is volcanic.'),
        metadataChanges: [
          { key: 'keep', before: true },
          { key: 'topic', before: 'tides' },
        ],
      })
      expect(content).toMatchObject({
        ...who,
        action: 'UPDATE',
        version: 3,
        fields: ['content'],
        contentSha256Before: prepared.memory.originalContentSha256,
        contentSha256After: sha256('Io is volcanic.'),
      })
      expect(metadata).toMatchObject({
        ...who,
        action: 'UPDATE',
        version: 2,
        fields: ['metadata'],
        metadataChanges: [{ key: 'topic', before: 'moons', after: 'tides' }],
      })
      expect(metadata.changedAt).toBeLessThanOrEqual(content.changedAt)
    },
  },
  {
    name: 'delete by filter: a dry run counts and deletes nothing; the confirmed count deletes exactly those',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const space = await newSpace(fixture)
      const stale = [
        await newMemory(fixture, space.spaceId, 'alice', { metadata: { stale: true } }),
        await newMemory(fixture, space.spaceId, 'alice', { metadata: { stale: true } }),
      ]
      const kept = await newMemory(fixture, space.spaceId, 'alice', { metadata: { stale: false } })
      const dryRun = await call(
        fixture,
        'rest',
        'batchDeleteMemories',
        { spaceId: space.spaceId, filter: "val('$.stale') = true", dryRun: true },
        fixture.alice.apiKey,
      )
      return { space, stale, kept, dryRun }
    },
    input: (prepared) => ({
      spaceId: prepared.space.spaceId,
      filter: "val('$.stale') = true",
      expectedCount: prepared.dryRun.matchedCount,
    }),
    verify: async (result, prepared, fixture, transport) => {
      expect(prepared.dryRun).toMatchObject({ matchedCount: 2, deletedCount: 0, dryRun: true })
      expect(result.body).toMatchObject({ matchedCount: 2, deletedCount: 2, dryRun: false })
      const left = await call(
        fixture,
        transport,
        'listMemories',
        { spaceId: prepared.space.spaceId },
        fixture.alice.apiKey,
      )
      expect(left.memories.map((memory: any) => memory.memoryId)).toEqual([prepared.kept.memoryId])
      const history = await call(
        fixture,
        transport,
        'getMemoryHistory',
        { memoryId: prepared.stale[0].memoryId },
        fixture.alice.apiKey,
      )
      expect(history.changes).toMatchObject([{ action: 'DELETE', version: 1 }])
    },
  },
  {
    name: 'metadata keys in snake_case are kept as sent (user_id stays user_id)',
    operation: 'createMemory',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      spaceId: prepared.spaceId,
      originalContent: 'keys as sent',
      metadata: { user_id: 'u-7', nested_map: { inner_key: 1 } },
    }),
    verify: (result) => {
      const memory = result.body.memory ?? result.body
      expect(memory.metadata).toEqual({ user_id: 'u-7', nested_map: { inner_key: 1 } })
    },
  },
]

/** Alice's COMPLETED memory, for the refusals below. */
const aliceMemory = (fixture: IdentityFixture) => completedMemory(fixture, { a: 1 })

export const LIFECYCLE_ERROR_CASES: ApiCase[] = [
  {
    name: 'update: a stale expectedVersion is 412 naming expectedVersion, and changes nothing',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'FAILED_PRECONDITION',
    field: 'expectedVersion',
    prepare: async (fixture) => {
      const prepared = await aliceMemory(fixture)
      await update(fixture, 'rest', { memoryId: prepared.memory.memoryId, mergeMetadata: { first: 'writer' } })
      return prepared
    },
    input: (prepared) => ({
      memoryId: prepared.memory.memoryId,
      expectedVersion: 1,
      mergeMetadata: { lost: 'update' },
    }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.message).toMatch(/version 2/)
      const current = (await aliceReads(fixture, transport, prepared.memory.memoryId)).body
      expect(current).toMatchObject({ version: 2, metadata: { a: 1, first: 'writer' } })
      expect(current.metadata).not.toHaveProperty('lost')
    },
  },
  {
    name: 'update: naming nothing to change is refused naming memoryId',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'memoryId',
    prepare: aliceMemory,
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, expectedVersion: 1 }),
  },
  {
    name: 'update: replaceMetadata with mergeMetadata is refused naming mergeMetadata',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'mergeMetadata',
    prepare: aliceMemory,
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, replaceMetadata: { a: 1 }, mergeMetadata: { b: 2 } }),
  },
  {
    name: `update: a merge leaving more than ${MAX_METADATA_PROPERTIES} keys is refused naming mergeMetadata`,
    operation: 'updateMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'mergeMetadata',
    prepare: aliceMemory,
    input: (prepared) => ({
      memoryId: prepared.memory.memoryId,
      mergeMetadata: Object.fromEntries(Array.from({ length: MAX_METADATA_PROPERTIES }, (_, i) => [`k${i}`, i])),
    }),
  },
  {
    name: 'update: contentType application/json over text that is not JSON is refused',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'originalContent',
    prepare: aliceMemory,
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, contentType: 'application/json' }),
  },
  {
    name: 'update: an unknown memory is 404',
    operation: 'updateMemory',
    as: 'alice',
    expect: 'NOT_FOUND',
    input: () => ({ memoryId: UNKNOWN_ID, mergeMetadata: { a: 1 } }),
  },
  {
    name: `batch get: more than ${MAX_MEMORY_BATCH_ITEMS} ids is refused naming memoryIds`,
    operation: 'batchGetMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'memoryIds',
    input: () => ({ memoryIds: Array.from({ length: MAX_MEMORY_BATCH_ITEMS + 1 }, () => UNKNOWN_ID) }),
  },
  {
    name: `batch update: more than ${MAX_MEMORY_BATCH_ITEMS} requests is refused naming requests`,
    operation: 'batchUpdateMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'requests',
    input: () => ({
      requests: Array.from({ length: MAX_MEMORY_BATCH_ITEMS + 1 }, () => ({
        memoryId: UNKNOWN_ID,
        clearValidUntil: true,
      })),
    }),
  },
  {
    name: 'delete by filter without expectedCount (and no dry run) is refused naming expectedCount',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'expectedCount',
    prepare: aliceMemory,
    input: (prepared) => ({ spaceId: prepared.space.spaceId, filter: "val('$.a') = 1" }),
  },
  {
    name: 'delete by space without a filter or a status is refused naming filter',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'filter',
    prepare: aliceMemory,
    input: (prepared) => ({ spaceId: prepared.space.spaceId, dryRun: true }),
  },
  {
    name: 'delete by an empty filter is refused naming filter',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'filter',
    prepare: aliceMemory,
    input: (prepared) => ({ spaceId: prepared.space.spaceId, filter: '  ', dryRun: true }),
  },
  {
    name: 'delete by a filter that matches every memory of the space is refused naming filter, nothing deleted',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'filter',
    prepare: aliceMemory,
    input: (prepared) => ({
      spaceId: prepared.space.spaceId,
      filter: "val('$.x') IS NULL OR val('$.x') IS NOT NULL",
      expectedCount: 1,
    }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.message).toMatch(/every memory/)
      const still = await aliceReads(fixture, transport, prepared.memory.memoryId)
      expect(still.status).toBe('OK')
    },
  },
  {
    name: 'delete by filter with a count that moved is 412 naming expectedCount, nothing deleted',
    operation: 'batchDeleteMemories',
    as: 'alice',
    expect: 'FAILED_PRECONDITION',
    field: 'expectedCount',
    prepare: async (fixture) => {
      const prepared = await aliceMemory(fixture)
      await newMemory(fixture, prepared.space.spaceId, 'alice', { metadata: { b: 1 } })
      return prepared
    },
    input: (prepared) => ({ spaceId: prepared.space.spaceId, filter: "val('$.a') = 1", expectedCount: 3 }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.message).toMatch(/1 memories match now, not expectedCount 3/)
      const still = await aliceReads(fixture, transport, prepared.memory.memoryId)
      expect(still.status).toBe('OK')
    },
  },
  {
    name: 'history: a page token that is not one is refused naming nextToken',
    operation: 'getMemoryHistory',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'nextToken',
    prepare: aliceMemory,
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, nextToken: 'not-a-token' }),
  },
]

const bobsView = (publicRead: boolean) => async (fixture: IdentityFixture) => {
  const space = await newSpace(fixture, 'alice', { publicRead })
  return completedMemory(fixture, { owner: 'alice' }, space)
}

export const LIFECYCLE_SECURITY_CASES: ApiCase[] = [
  {
    name: "another user's private memory: update is 404, as if it did not exist",
    operation: 'updateMemory',
    as: 'bob',
    expect: 'NOT_FOUND',
    prepare: bobsView(false),
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, mergeMetadata: { owner: 'bob' } }),
  },
  {
    name: "another user's publicRead memory: update is 403, nothing changed",
    operation: 'updateMemory',
    as: 'bob',
    expect: 'PERMISSION_DENIED',
    prepare: bobsView(true),
    input: (prepared) => ({ memoryId: prepared.memory.memoryId, mergeMetadata: { owner: 'bob' } }),
    verify: async (_result, prepared, fixture, transport) => {
      const memory = (await aliceReads(fixture, transport, prepared.memory.memoryId)).body
      expect(memory).toMatchObject({ version: 1, metadata: { owner: 'alice' } })
    },
  },
  {
    name: "batch get: another user's ids answer exactly as unknown ids do",
    operation: 'batchGetMemories',
    as: 'bob',
    expect: 'OK',
    prepare: bobsView(false),
    input: (prepared) => ({ memoryIds: [prepared.memory.memoryId, UNKNOWN_ID] }),
    verify: (result, prepared) => {
      const [hidden, unknown] = result.body.results
      expect(hidden.memory).toBeUndefined()
      expect(hidden.error).toEqual({
        ...unknown.error,
        message: unknown.error.message.replace(UNKNOWN_ID, prepared.memory.memoryId),
        details: [],
      })
      expect(hidden.error.status).toBe('NOT_FOUND')
    },
  },
  {
    name: "batch update: another user's memory fails alone as NOT_FOUND, untouched",
    operation: 'batchUpdateMemories',
    as: 'bob',
    expect: 'OK',
    prepare: bobsView(false),
    input: (prepared) => ({ requests: [{ memoryId: prepared.memory.memoryId, replaceMetadata: {} }] }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body.results[0].error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
      const memory = (await aliceReads(fixture, transport, prepared.memory.memoryId)).body
      expect(memory.metadata).toEqual({ owner: 'alice' })
    },
  },
  {
    name: "history: another user's private memory is 404, also once it is deleted",
    operation: 'getMemoryHistory',
    as: 'bob',
    expect: 'NOT_FOUND',
    prepare: async (fixture) => {
      const prepared = await bobsView(false)(fixture)
      await call(fixture, 'rest', 'deleteMemory', { memoryId: prepared.memory.memoryId }, fixture.alice.apiKey)
      return prepared
    },
    input: (prepared) => ({ memoryId: prepared.memory.memoryId }),
  },
  {
    name: "delete by filter: another user's private space is 404, even as a dry run",
    operation: 'batchDeleteMemories',
    as: 'bob',
    expect: 'NOT_FOUND',
    prepare: bobsView(false),
    input: (prepared) => ({ spaceId: prepared.space.spaceId, filter: "val('$.owner') = 'alice'", dryRun: true }),
  },
  {
    name: 'history names the API key by its id, never the key itself',
    operation: 'getMemoryHistory',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const prepared = await completedMemory(fixture)
      await update(fixture, 'rest', { memoryId: prepared.memory.memoryId, mergeMetadata: { seen: true } })
      return prepared
    },
    input: (prepared) => ({ memoryId: prepared.memory.memoryId }),
    verify: (result, _prepared, fixture) => {
      expect(result.body.changes[0].apiKeyId).toBe(fixture.alice.apiKeyId)
      expect(JSON.stringify(result.body)).not.toContain(fixture.alice.apiKey)
    },
  },
]
