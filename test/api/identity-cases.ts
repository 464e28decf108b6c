import { expect } from 'vitest'
import { generateApiKey, isWellFormedApiKey } from '../../src/domain/api-key-format.js'
import type { ApiResult, OperationName, Transport } from '../support/api-client.js'
import type { Actor, IdentityFixture } from '../support/identity-fixture.js'

/**
 * The identity API as a table. Every case runs over REST and over gRPC, on
 * PostgreSQL and on PGlite. `prepare` makes whatever the case consumes (a key to
 * delete, a user to remove) so that cases never depend on each other.
 */
export interface ApiCase {
  name: string
  operation: OperationName
  /** Whose key signs the call; 'none' sends no Authorization. A string is sent as the raw header value's key. */
  as: 'root' | 'admin' | 'alice' | 'bob' | 'none' | ((prepared: any, fixture: IdentityFixture) => string)
  prepare?: (fixture: IdentityFixture) => Promise<any>
  input?: (prepared: any, fixture: IdentityFixture) => any
  /** Only over this transport (REST-only inputs such as decimal-string timestamps). */
  only?: Transport
  expect:
    | 'OK'
    | 'INVALID_ARGUMENT'
    | 'UNAUTHENTICATED'
    | 'PERMISSION_DENIED'
    | 'NOT_FOUND'
    | 'ALREADY_EXISTS'
    | 'FAILED_PRECONDITION'
    | 'PAYLOAD_TOO_LARGE'
  /** The field the error must name. */
  field?: string
  /** REST status when it is not the default for the code (201 and 204 on success). */
  httpStatus?: number
  verify?: (result: ApiResult, prepared: any, fixture: IdentityFixture, transport: Transport) => Promise<void> | void
}

export const HTTP_STATUS: Record<ApiCase['expect'], number> = {
  OK: 200,
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  FAILED_PRECONDITION: 412,
  PAYLOAD_TOO_LARGE: 413,
}

const future = () => Date.now() + 86_400_000
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const API_KEY_FIELDS = [
  'apiKeyId',
  'userId',
  'keyPrefix',
  'status',
  'labels',
  'expiresAt',
  'lastUsedAt',
  'createdAt',
  'updatedAt',
  'createdById',
  'updatedById',
]

/** Every key object carries metadata only: a fixed field set, never a key or a hash. */
export function expectKeyMetadataOnly(key: Record<string, unknown>): void {
  for (const field of Object.keys(key)) expect(API_KEY_FIELDS, `unexpected field ${field}`).toContain(field)
  expect(JSON.stringify(key)).not.toMatch(/msk_[0-9A-Za-z]{20,}/)
}

async function whoAmI(fixture: IdentityFixture, transport: Transport, apiKey: string): Promise<ApiResult> {
  return fixture.call(transport, 'getMe', {}, apiKey)
}

export const HAPPY_CASES: ApiCase[] = [
  {
    name: 'initialising again reports alreadyInitialized and returns no key',
    operation: 'initializeSystem',
    as: 'none',
    expect: 'OK',
    verify: (result) => {
      expect(result.body.alreadyInitialized).toBe(true)
      expect(result.body.rootApiKey).toBeUndefined()
    },
  },
  {
    name: 'system info needs no key and shows an initialised, ready server and its runtime',
    operation: 'getSystemInfo',
    as: 'none',
    expect: 'OK',
    verify: (result) => {
      expect(result.body.initialized).toBe(true)
      expect(result.body.lifecycleState).toBe('READY')
      expect(result.body.version).toMatch(/^\d+\.\d+\.\d+/)
      expect(result.body.runtime).toEqual({
        node: process.versions.node,
        openssl: process.versions.openssl,
        uws: expect.stringMatching(/^20\.67\.0 \(uWebSockets \w+, uSockets \w+\)$/),
      })
      expect(result.body.memories).toEqual({ available: true, pgvectorVersion: expect.stringMatching(/^0\.8\./) })
    },
  },
  {
    name: 'getMe returns the caller',
    operation: 'getMe',
    as: 'alice',
    expect: 'OK',
    verify: (result, _p, fixture) => {
      expect(result.body.userId).toBe(fixture.alice.userId)
      expect(result.body.role).toBe('USER')
    },
  },
  {
    name: 'createApiKey returns metadata and a well-formed one-time key that works at once',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => ({ labels: { env: 'dev', team: 'ml' }, expiresAt: future() }),
    verify: async (result, _p, fixture, transport) => {
      const { apiKeyMetadata: key, rawApiKey } = result.body
      expect(isWellFormedApiKey(rawApiKey)).toBe(true)
      expect(key.keyPrefix).toBe(rawApiKey.slice(0, 12))
      expect(key).toMatchObject({
        userId: fixture.alice.userId,
        status: 'ACTIVE',
        labels: { env: 'dev', team: 'ml' },
        createdById: fixture.alice.userId,
        updatedById: fixture.alice.userId,
      })
      expect(key.expiresAt).toBeGreaterThan(Date.now())
      expectKeyMetadataOnly(key)
      if (transport === 'rest') expect(result.headers?.get('location')).toBe(`/v1/apikeys/${key.apiKeyId}`)
      expect((await whoAmI(fixture, transport, rawApiKey)).body.userId).toBe(fixture.alice.userId)
    },
  },
  {
    name: 'createApiKey accepts expiresAt as a decimal string of epoch milliseconds',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    only: 'rest',
    input: () => ({ expiresAt: String(future()) }),
    verify: (result) => expect(typeof result.body.apiKeyMetadata.expiresAt).toBe('number'),
  },
  {
    name: 'createApiKey keeps a client-chosen id',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: async () => ({ id: crypto.randomUUID() }),
    input: (prepared) => ({ apiKeyId: prepared.id }),
    verify: (result, prepared) => expect(result.body.apiKeyMetadata.apiKeyId).toBe(prepared.id),
  },
  {
    name: 'an admin creates a key for another user (CREATE_APIKEY_ANY)',
    operation: 'createApiKey',
    as: 'admin',
    expect: 'OK',
    httpStatus: 201,
    input: (_p, fixture) => ({ ownerId: fixture.alice.userId }),
    verify: (result, _p, fixture) => {
      expect(result.body.apiKeyMetadata.userId).toBe(fixture.alice.userId)
      expect(result.body.apiKeyMetadata.createdById).toBe(fixture.admin.userId)
    },
  },
  {
    name: 'listApiKeys returns only the caller’s keys, as metadata',
    operation: 'listApiKeys',
    as: 'bob',
    expect: 'OK',
    verify: (result, _p, fixture) => {
      expect(result.body.keys.length).toBeGreaterThan(0)
      for (const key of result.body.keys) {
        expect(key.userId).toBe(fixture.bob.userId)
        expectKeyMetadataOnly(key)
      }
    },
  },
  {
    name: 'listApiKeys pages with maxResults and nextToken, without overlap',
    operation: 'listApiKeys',
    as: (prepared) => prepared.apiKey,
    expect: 'OK',
    prepare: async (fixture) => {
      const userId = (
        await fixture.call(
          'rest',
          'createUser',
          { username: `pager-${crypto.randomUUID().slice(0, 8)}` },
          fixture.root.apiKey,
        )
      ).body.userId
      const first = await fixture.newKey({ userId } as Actor)
      for (let i = 0; i < 4; i++) await fixture.newKey({ userId } as Actor)
      return first
    },
    input: () => ({ maxResults: 2 }),
    verify: async (result, prepared, fixture, transport) => {
      const seen = result.body.keys.map((key: { apiKeyId: string }) => key.apiKeyId)
      expect(seen).toHaveLength(2)
      let token = result.body.nextToken
      while (token) {
        const page = await fixture.call(transport, 'listApiKeys', { maxResults: 2, nextToken: token }, prepared.apiKey)
        expect(page.status).toBe('OK')
        seen.push(...page.body.keys.map((key: { apiKeyId: string }) => key.apiKeyId))
        token = page.body.nextToken
      }
      expect(seen).toHaveLength(5)
      expect(new Set(seen).size).toBe(5)
    },
  },
  {
    name: 'listApiKeys filters by label and by status',
    operation: 'listApiKeys',
    as: 'root',
    expect: 'OK',
    prepare: async (fixture) => {
      const tag = crypto.randomUUID().slice(0, 8)
      const active = await fixture.newKey(fixture.bob, { labels: { batch: tag } })
      const inactive = await fixture.newKey(fixture.bob, { labels: { batch: tag } })
      await fixture.call(
        'rest',
        'updateApiKey',
        { apiKeyId: inactive.apiKeyId, status: 'INACTIVE' },
        fixture.root.apiKey,
      )
      return { tag, active, inactive }
    },
    input: (prepared, fixture) => ({
      ownerId: fixture.bob.userId,
      labelFilter: { batch: prepared.tag },
      status: 'ACTIVE',
    }),
    verify: (result, prepared) => {
      expect(result.body.keys.map((key: { apiKeyId: string }) => key.apiKeyId)).toEqual([prepared.active.apiKeyId])
    },
  },
  {
    name: 'an admin lists another user’s keys with ownerId',
    operation: 'listApiKeys',
    as: 'admin',
    expect: 'OK',
    input: (_p, fixture) => ({ ownerId: fixture.alice.userId }),
    verify: (result, _p, fixture) => {
      expect(result.body.keys.length).toBeGreaterThan(0)
      for (const key of result.body.keys) expect(key.userId).toBe(fixture.alice.userId)
    },
  },
  {
    name: 'deactivating a key stops it authenticating on the very next request; reactivating restores it',
    operation: 'updateApiKey',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => fixture.newKey(fixture.alice),
    input: (prepared) => ({ apiKeyId: prepared.apiKeyId, status: 'INACTIVE' }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body).toMatchObject({ status: 'INACTIVE', updatedById: fixture.alice.userId })
      expect(result.body.updatedAt).toBeGreaterThanOrEqual(result.body.createdAt)
      expect((await whoAmI(fixture, transport, prepared.apiKey)).status).toBe('UNAUTHENTICATED')
      const reactivated = await fixture.call(
        transport,
        'updateApiKey',
        { apiKeyId: prepared.apiKeyId, status: 'ACTIVE' },
        fixture.alice.apiKey,
      )
      expect(reactivated.body.status).toBe('ACTIVE')
      expect((await whoAmI(fixture, transport, prepared.apiKey)).status).toBe('OK')
    },
  },
  {
    name: 'replaceLabels replaces the set; mergeLabels merges into it',
    operation: 'updateApiKey',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => fixture.newKey(fixture.alice, { labels: { a: '1', b: '2' } }),
    input: (prepared) => ({ apiKeyId: prepared.apiKeyId, replaceLabels: { c: '3' } }),
    verify: async (result, prepared, fixture, transport) => {
      expect(result.body.labels).toEqual({ c: '3' })
      const merged = await fixture.call(
        transport,
        'updateApiKey',
        { apiKeyId: prepared.apiKeyId, mergeLabels: { d: '4', c: '5' } },
        fixture.alice.apiKey,
      )
      expect(merged.body.labels).toEqual({ c: '5', d: '4' })
    },
  },
  {
    name: 'repeating an identical update changes nothing, updatedAt included',
    operation: 'updateApiKey',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => {
      const key = await fixture.newKey(fixture.alice)
      const first = await fixture.call(
        'rest',
        'updateApiKey',
        { apiKeyId: key.apiKeyId, replaceLabels: { x: 'y' } },
        fixture.alice.apiKey,
      )
      return { ...key, first: first.body }
    },
    input: (prepared) => ({ apiKeyId: prepared.apiKeyId, replaceLabels: { x: 'y' } }),
    verify: (result, prepared) => {
      expect(result.body.updatedAt).toBe(prepared.first.updatedAt)
      expect(result.body.updatedById).toBe(prepared.first.updatedById)
    },
  },
  {
    name: 'deleteApiKey removes the key for good: 204, then 401 with it and 404 for it',
    operation: 'deleteApiKey',
    as: 'alice',
    expect: 'OK',
    httpStatus: 204,
    prepare: async (fixture) => fixture.newKey(fixture.alice),
    input: (prepared) => ({ apiKeyId: prepared.apiKeyId }),
    verify: async (result, prepared, fixture, transport) => {
      if (transport === 'rest') expect(result.body).toBeUndefined()
      expect((await whoAmI(fixture, transport, prepared.apiKey)).status).toBe('UNAUTHENTICATED')
      expect(
        (await fixture.call(transport, 'deleteApiKey', { apiKeyId: prepared.apiKeyId }, fixture.alice.apiKey)).status,
      ).toBe('NOT_FOUND')
    },
  },
  {
    name: 'an admin creates a user',
    operation: 'createUser',
    as: 'root',
    expect: 'OK',
    httpStatus: 201,
    input: () => ({ username: `carol-${crypto.randomUUID().slice(0, 8)}`, displayName: 'Carol', role: 'USER' }),
    verify: (result) => expect(result.body).toMatchObject({ displayName: 'Carol', role: 'USER' }),
  },
  {
    name: 'an admin lists users',
    operation: 'listUsers',
    as: 'admin',
    expect: 'OK',
    verify: (result, _p, fixture) => {
      const ids = result.body.users.map((user: { userId: string }) => user.userId)
      expect(ids).toEqual(expect.arrayContaining([fixture.root.userId, fixture.alice.userId, fixture.bob.userId]))
    },
  },
  {
    name: 'a user reads their own user record',
    operation: 'getUser',
    as: 'alice',
    expect: 'OK',
    input: (_p, fixture) => ({ userId: fixture.alice.userId }),
    verify: (result) => expect(result.body.role).toBe('USER'),
  },
  {
    name: 'deleting a user deletes their keys with them',
    operation: 'deleteUser',
    as: 'root',
    expect: 'OK',
    httpStatus: 204,
    prepare: async (fixture) => {
      const user = await fixture.call(
        'rest',
        'createUser',
        { username: `dave-${crypto.randomUUID().slice(0, 8)}` },
        fixture.root.apiKey,
      )
      return fixture.newKey({ userId: user.body.userId } as Actor)
    },
    input: (prepared) => ({ userId: prepared.userId }),
    verify: async (_result, prepared, fixture, transport) => {
      expect((await whoAmI(fixture, transport, prepared.apiKey)).status).toBe('UNAUTHENTICATED')
      expect((await fixture.call(transport, 'getUser', { userId: prepared.userId }, fixture.root.apiKey)).status).toBe(
        'NOT_FOUND',
      )
    },
  },
]

const tooManyLabels = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))

export const ERROR_CASES: ApiCase[] = [
  { name: 'createApiKey without a key', operation: 'createApiKey', as: 'none', expect: 'UNAUTHENTICATED' },
  {
    name: 'createApiKey with a malformed key',
    operation: 'createApiKey',
    as: () => 'msk_tooShort',
    expect: 'UNAUTHENTICATED',
  },
  {
    name: 'createApiKey with a key whose checksum is wrong',
    operation: 'createApiKey',
    as: (_p, fixture) => `${fixture.alice.apiKey.slice(0, -1)}${fixture.alice.apiKey.endsWith('0') ? '1' : '0'}`,
    expect: 'UNAUTHENTICATED',
  },
  {
    name: 'createApiKey with a well-formed key that does not exist',
    operation: 'createApiKey',
    as: () => generateApiKey(),
    expect: 'UNAUTHENTICATED',
  },
  { name: 'listApiKeys without a key', operation: 'listApiKeys', as: 'none', expect: 'UNAUTHENTICATED' },
  {
    name: 'updateApiKey without a key',
    operation: 'updateApiKey',
    as: 'none',
    expect: 'UNAUTHENTICATED',
    input: (_p, f) => ({ apiKeyId: f.alice.apiKeyId, status: 'ACTIVE' }),
  },
  {
    name: 'deleteApiKey without a key',
    operation: 'deleteApiKey',
    as: 'none',
    expect: 'UNAUTHENTICATED',
    input: (_p, f) => ({ apiKeyId: f.alice.apiKeyId }),
  },
  {
    name: 'an inactive key does not authenticate',
    operation: 'getMe',
    as: (prepared) => prepared.apiKey,
    expect: 'UNAUTHENTICATED',
    prepare: async (fixture) => {
      const key = await fixture.newKey(fixture.alice)
      await fixture.call('rest', 'updateApiKey', { apiKeyId: key.apiKeyId, status: 'INACTIVE' }, fixture.alice.apiKey)
      return key
    },
  },
  {
    name: 'an expired key does not authenticate, and its status stays as stored',
    operation: 'getMe',
    as: (prepared) => prepared.apiKey,
    expect: 'UNAUTHENTICATED',
    prepare: async (fixture) => {
      const key = await fixture.newKey(fixture.alice, { expiresAt: Date.now() + 1_000 })
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      return key
    },
    verify: async (_result, prepared, fixture) => {
      const listed = await fixture.call('rest', 'listApiKeys', { maxResults: 1000 }, fixture.alice.apiKey)
      expect(listed.body.keys.find((key: { apiKeyId: string }) => key.apiKeyId === prepared.apiKeyId).status).toBe(
        'ACTIVE',
      )
    },
  },
  {
    name: 'createApiKey with expiresAt in the past',
    operation: 'createApiKey',
    as: 'alice',
    input: () => ({ expiresAt: Date.now() - 1000 }),
    expect: 'INVALID_ARGUMENT',
    field: 'expiresAt',
  },
  {
    name: 'createApiKey with a non-numeric expiresAt string',
    operation: 'createApiKey',
    as: 'alice',
    only: 'rest',
    input: () => ({ expiresAt: 'tomorrow' }),
    expect: 'INVALID_ARGUMENT',
    field: 'expiresAt',
  },
  {
    name: 'createApiKey with a fractional expiresAt',
    operation: 'createApiKey',
    as: 'alice',
    only: 'rest',
    input: () => ({ expiresAt: future() + 0.5 }),
    expect: 'INVALID_ARGUMENT',
    field: 'expiresAt',
  },
  {
    name: 'createApiKey with an upper-case label key',
    operation: 'createApiKey',
    as: 'alice',
    input: () => ({ labels: { Env: 'x' } }),
    expect: 'INVALID_ARGUMENT',
    field: 'labels.Env',
  },
  {
    name: 'createApiKey with a label value over 255 characters',
    operation: 'createApiKey',
    as: 'alice',
    input: () => ({ labels: { env: 'x'.repeat(256) } }),
    expect: 'INVALID_ARGUMENT',
    field: 'labels.env',
  },
  {
    name: 'createApiKey with 21 labels',
    operation: 'createApiKey',
    as: 'alice',
    input: () => ({ labels: tooManyLabels }),
    expect: 'INVALID_ARGUMENT',
    field: 'labels',
  },
  {
    name: 'createApiKey with labels that are not an object',
    operation: 'createApiKey',
    as: 'alice',
    only: 'rest',
    input: () => ({ labels: 'env=dev' }),
    expect: 'INVALID_ARGUMENT',
    field: 'labels',
  },
  {
    name: 'createApiKey with a non-string label value',
    operation: 'createApiKey',
    as: 'alice',
    only: 'rest',
    input: () => ({ labels: { env: 1 } }),
    expect: 'INVALID_ARGUMENT',
    field: 'labels.env',
  },
  {
    name: 'createApiKey with an unknown field',
    operation: 'createApiKey',
    as: 'alice',
    only: 'rest',
    input: () => ({ colour: 'blue' }),
    expect: 'INVALID_ARGUMENT',
    field: 'colour',
  },
  {
    name: 'createApiKey with an ownerId that is not a UUID',
    operation: 'createApiKey',
    as: 'root',
    input: () => ({ ownerId: 'alice' }),
    expect: 'INVALID_ARGUMENT',
    field: 'ownerId',
  },
  {
    name: 'createApiKey for a user that does not exist',
    operation: 'createApiKey',
    as: 'root',
    input: () => ({ ownerId: UNKNOWN_ID }),
    expect: 'NOT_FOUND',
  },
  {
    name: 'createApiKey reusing an existing id',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'ALREADY_EXISTS',
    input: (_p, fixture) => ({ apiKeyId: fixture.alice.apiKeyId }),
  },
  {
    name: 'updateApiKey with an id that is not a UUID',
    operation: 'updateApiKey',
    as: 'alice',
    input: () => ({ apiKeyId: 'not-a-uuid', status: 'ACTIVE' }),
    expect: 'INVALID_ARGUMENT',
    field: 'apiKeyId',
  },
  {
    name: 'updateApiKey of a key that does not exist',
    operation: 'updateApiKey',
    as: 'alice',
    input: () => ({ apiKeyId: UNKNOWN_ID, status: 'ACTIVE' }),
    expect: 'NOT_FOUND',
  },
  {
    name: 'updateApiKey with an unknown status',
    operation: 'updateApiKey',
    as: 'alice',
    input: (_p, f) => ({ apiKeyId: f.alice.apiKeyId, status: 'REVOKED' }),
    only: 'rest',
    expect: 'INVALID_ARGUMENT',
    field: 'status',
  },
  {
    name: 'updateApiKey with both replaceLabels and mergeLabels',
    operation: 'updateApiKey',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'mergeLabels',
    input: (_p, f) => ({ apiKeyId: f.alice.apiKeyId, replaceLabels: { a: '1' }, mergeLabels: { b: '2' } }),
  },
  {
    name: 'updateApiKey trying to change the owner',
    operation: 'updateApiKey',
    as: 'alice',
    only: 'rest',
    expect: 'INVALID_ARGUMENT',
    field: 'userId',
    input: (_p, f) => ({ apiKeyId: f.alice.apiKeyId, userId: f.bob.userId }),
  },
  {
    name: 'deleteApiKey with an id that is not a UUID',
    operation: 'deleteApiKey',
    as: 'alice',
    input: () => ({ apiKeyId: '123' }),
    expect: 'INVALID_ARGUMENT',
    field: 'apiKeyId',
  },
  {
    name: 'deleteApiKey of a key that does not exist',
    operation: 'deleteApiKey',
    as: 'alice',
    input: () => ({ apiKeyId: UNKNOWN_ID }),
    expect: 'NOT_FOUND',
  },
  {
    name: 'listApiKeys with maxResults 0',
    operation: 'listApiKeys',
    as: 'alice',
    input: () => ({ maxResults: 0 }),
    only: 'rest',
    expect: 'INVALID_ARGUMENT',
    field: 'maxResults',
  },
  {
    name: 'listApiKeys with maxResults over 1000',
    operation: 'listApiKeys',
    as: 'alice',
    input: () => ({ maxResults: 5000 }),
    expect: 'INVALID_ARGUMENT',
    field: 'maxResults',
  },
  {
    name: 'listApiKeys with a forged page token',
    operation: 'listApiKeys',
    as: 'alice',
    input: () => ({ nextToken: 'bm90LWEtdG9rZW4' }),
    expect: 'INVALID_ARGUMENT',
    field: 'nextToken',
  },
  {
    name: 'listApiKeys with an unknown query parameter',
    operation: 'listApiKeys',
    as: 'alice',
    only: 'rest',
    input: () => ({ sort: 'name' }),
    expect: 'INVALID_ARGUMENT',
    field: 'sort',
  },
  {
    name: 'createUser with a duplicate username',
    operation: 'createUser',
    as: 'root',
    expect: 'ALREADY_EXISTS',
    prepare: async (f) => (await f.call('rest', 'getMe', {}, f.alice.apiKey)).body.username,
    input: (username) => ({ username }),
  },
  {
    name: 'createUser with an invalid username',
    operation: 'createUser',
    as: 'root',
    input: () => ({ username: 'has spaces' }),
    expect: 'INVALID_ARGUMENT',
    field: 'username',
  },
  {
    name: 'createUser without a username',
    operation: 'createUser',
    as: 'root',
    input: () => ({}),
    expect: 'INVALID_ARGUMENT',
    field: 'username',
  },
  {
    name: 'createUser with an unknown role',
    operation: 'createUser',
    as: 'root',
    only: 'rest',
    input: () => ({ username: 'erin', role: 'SUPERUSER' }),
    expect: 'INVALID_ARGUMENT',
    field: 'role',
  },
  {
    name: 'an admin cannot delete themselves',
    operation: 'deleteUser',
    as: 'admin',
    input: (_p, f) => ({ userId: f.admin.userId }),
    expect: 'FAILED_PRECONDITION',
  },
  {
    name: 'getUser of a user that does not exist',
    operation: 'getUser',
    as: 'root',
    input: () => ({ userId: UNKNOWN_ID }),
    expect: 'NOT_FOUND',
  },
  {
    name: 'getUser with an id that is not a UUID',
    operation: 'getUser',
    as: 'root',
    input: () => ({ userId: 'root' }),
    expect: 'INVALID_ARGUMENT',
    field: 'userId',
  },
]

export const SECURITY_CASES: ApiCase[] = [
  // Another user's key answers exactly as a key that does not exist: the same 404 and message.
  {
    name: 'a user cannot update another user’s key: 404 as for a random id',
    operation: 'updateApiKey',
    as: 'alice',
    input: (_p, f) => ({ apiKeyId: f.bob.apiKeyId, status: 'INACTIVE' }),
    expect: 'NOT_FOUND',
    verify: async (result, _p, f, transport) => {
      expect(result.message).toBe(`API key ${f.bob.apiKeyId} not found`)
      const unknown = await f.call(
        transport,
        'updateApiKey',
        { apiKeyId: UNKNOWN_ID, status: 'INACTIVE' },
        f.alice.apiKey,
      )
      expect([unknown.status, unknown.rawStatus, unknown.message]).toEqual([
        result.status,
        result.rawStatus,
        `API key ${UNKNOWN_ID} not found`,
      ])
      expect((await whoAmI(f, transport, f.bob.apiKey)).status).toBe('OK')
    },
  },
  {
    name: 'a user cannot relabel another user’s key: 404',
    operation: 'updateApiKey',
    as: 'alice',
    input: (_p, f) => ({ apiKeyId: f.bob.apiKeyId, replaceLabels: { owned: 'yes' } }),
    expect: 'NOT_FOUND',
  },
  {
    name: 'a user cannot delete another user’s key: 404',
    operation: 'deleteApiKey',
    as: 'alice',
    input: (_p, f) => ({ apiKeyId: f.bob.apiKeyId }),
    expect: 'NOT_FOUND',
    verify: async (_r, _p, f, transport) => expect((await whoAmI(f, transport, f.bob.apiKey)).status).toBe('OK'),
  },
  // A client-chosen id is global: one already in use is a 409 with the same message whoever owns it (README, "Client-chosen ids").
  {
    name: 'creating a key with another user’s key id: 409, the same answer as reusing one’s own',
    operation: 'createApiKey',
    as: 'alice',
    input: (_p, f) => ({ apiKeyId: f.bob.apiKeyId }),
    expect: 'ALREADY_EXISTS',
    verify: async (result, _p, f, transport) => {
      expect(result.message).toBe(`an API key with id ${f.bob.apiKeyId} already exists`)
      const own = await f.call(transport, 'createApiKey', { apiKeyId: f.alice.apiKeyId }, f.alice.apiKey)
      expect([own.status, own.rawStatus, own.message]).toEqual([
        result.status,
        result.rawStatus,
        `an API key with id ${f.alice.apiKeyId} already exists`,
      ])
    },
  },
  // Item 11: an administrator's deactivation is not the owner's to undo.
  {
    name: 'a user cannot re-activate a key an administrator deactivated',
    operation: 'updateApiKey',
    as: 'alice',
    expect: 'PERMISSION_DENIED',
    prepare: async (f) => {
      const key = await f.newKey(f.alice)
      const deactivated = await f.call(
        'rest',
        'updateApiKey',
        { apiKeyId: key.apiKeyId, status: 'INACTIVE' },
        f.admin.apiKey,
      )
      expect(deactivated.status).toBe('OK')
      return key
    },
    input: (key) => ({ apiKeyId: key.apiKeyId, status: 'ACTIVE' }),
    verify: async (_r, key, f, transport) => {
      expect((await whoAmI(f, transport, key.apiKey)).status).toBe('UNAUTHENTICATED')
      // Relabelling is still the owner's, and keeps the key inactive and its deactivator recorded.
      expect(
        (
          await f.call(
            transport,
            'updateApiKey',
            { apiKeyId: key.apiKeyId, mergeLabels: { note: 'x' } },
            f.alice.apiKey,
          )
        ).status,
      ).toBe('OK')
      expect(
        (await f.call(transport, 'updateApiKey', { apiKeyId: key.apiKeyId, status: 'ACTIVE' }, f.alice.apiKey)).status,
      ).toBe('PERMISSION_DENIED')
      const reactivated = await f.call(
        transport,
        'updateApiKey',
        { apiKeyId: key.apiKeyId, status: 'ACTIVE' },
        f.root.apiKey,
      )
      expect(reactivated.body.status).toBe('ACTIVE')
      expect((await whoAmI(f, transport, key.apiKey)).status).toBe('OK')
    },
  },
  {
    name: 'a user re-activates a key they deactivated themselves',
    operation: 'updateApiKey',
    as: 'alice',
    expect: 'OK',
    prepare: async (f) => {
      const key = await f.newKey(f.alice)
      expect(
        (await f.call('rest', 'updateApiKey', { apiKeyId: key.apiKeyId, status: 'INACTIVE' }, f.alice.apiKey)).status,
      ).toBe('OK')
      return key
    },
    input: (key) => ({ apiKeyId: key.apiKeyId, status: 'ACTIVE' }),
    verify: async (result, key, f, transport) => {
      expect(result.body.status).toBe('ACTIVE')
      expect((await whoAmI(f, transport, key.apiKey)).status).toBe('OK')
    },
  },
  {
    name: 'a user cannot list another user’s keys',
    operation: 'listApiKeys',
    as: 'alice',
    input: (_p, f) => ({ ownerId: f.bob.userId }),
    expect: 'PERMISSION_DENIED',
  },
  {
    name: 'a user cannot create a key for another user',
    operation: 'createApiKey',
    as: 'alice',
    input: (_p, f) => ({ ownerId: f.bob.userId }),
    expect: 'PERMISSION_DENIED',
  },
  {
    name: 'a user cannot create users',
    operation: 'createUser',
    as: 'alice',
    input: () => ({ username: 'mallory', role: 'ADMIN' }),
    expect: 'PERMISSION_DENIED',
  },
  { name: 'a user cannot list users', operation: 'listUsers', as: 'alice', expect: 'PERMISSION_DENIED' },
  {
    name: 'a user cannot read another user',
    operation: 'getUser',
    as: 'alice',
    input: (_p, f) => ({ userId: f.bob.userId }),
    expect: 'PERMISSION_DENIED',
  },
  {
    name: 'a user cannot delete users',
    operation: 'deleteUser',
    as: 'alice',
    input: (_p, f) => ({ userId: f.bob.userId }),
    expect: 'PERMISSION_DENIED',
  },
  {
    name: 'an admin may update another user’s key (UPDATE_APIKEY_ANY)',
    operation: 'updateApiKey',
    as: 'admin',
    expect: 'OK',
    prepare: async (f) => f.newKey(f.bob),
    input: (prepared) => ({ apiKeyId: prepared.apiKeyId, mergeLabels: { audited: 'yes' } }),
    verify: (result, _p, f) => expect(result.body.updatedById).toBe(f.admin.userId),
  },
  {
    name: 'an admin may delete another user’s key (DELETE_APIKEY_ANY)',
    operation: 'deleteApiKey',
    as: 'admin',
    expect: 'OK',
    httpStatus: 204,
    prepare: async (f) => f.newKey(f.bob),
    input: (prepared) => ({ apiKeyId: prepared.apiKeyId }),
  },
  {
    name: 'another user’s key with a character appended is refused, not taken as theirs',
    operation: 'getMe',
    as: (_p, f) => `${f.alice.apiKey}x`,
    expect: 'UNAUTHENTICATED',
  },
]

/** Runs one case over one transport and checks the outcome, the named field and the HTTP status. */
export async function runCase(fixture: IdentityFixture, transport: Transport, testCase: ApiCase): Promise<void> {
  const prepared = testCase.prepare ? await testCase.prepare(fixture) : undefined
  const input = testCase.input ? testCase.input(prepared, fixture) : {}
  const apiKey =
    typeof testCase.as === 'function'
      ? testCase.as(prepared, fixture)
      : testCase.as === 'none'
        ? undefined
        : fixture[testCase.as].apiKey
  const result = await fixture.call(transport, testCase.operation, input, apiKey)
  expect(result.status, `${testCase.name}: ${result.message || JSON.stringify(result.body)}`).toBe(testCase.expect)
  if (transport === 'rest') {
    expect(result.rawStatus).toBe(testCase.httpStatus ?? HTTP_STATUS[testCase.expect])
    if (testCase.expect !== 'OK') {
      expect(result.body.error).toMatchObject({ code: result.rawStatus, status: testCase.expect })
      expect(typeof result.body.error.requestId).toBe('string')
    }
  }
  if (testCase.field) expect(result.fields).toContain(testCase.field)
  if (testCase.verify) await testCase.verify(result, prepared, fixture, transport)
}
