import { describe, expect, it, vi } from 'vitest'
import type { ChangeFeedHandlers, Database } from '../../src/db/database.js'
import { generateApiKey, isWellFormedApiKey } from '../../src/domain/api-key-format.js'
import { Authenticator, apiKeyFromAuthorization, LAST_USED_RESOLUTION_MS } from '../../src/domain/auth.js'
import type { AppError } from '../../src/errors/app-error.js'
import { createLogger } from '../../src/observability/logger.js'

/** A database whose every query is recorded and answered by `answer`. */
function recordingDatabase(answer: () => unknown[] = () => []) {
  const queries: string[] = []
  let handlers: ChangeFeedHandlers | undefined
  const sql = (strings: TemplateStringsArray) => {
    queries.push(strings.join('?'))
    return Promise.resolve(answer())
  }
  const database = {
    primary: sql,
    background: sql,
    engine: 'postgresql',
    listenerName: 'memsvc-listen-test',
    subscribe: (_channel: string, feedHandlers: ChangeFeedHandlers) => {
      handlers = feedHandlers
      return { live: true, close: async () => {} }
    },
  } as unknown as Database
  return { database, queries, notify: (payload: string) => handlers?.onMessage('memsvc_auth', payload) }
}

const silent = createLogger('error', () => {})

const CREATED = new Date(1_700_000_000_000)
/** What the credential lookup answers for an active key of alice's. */
const credentialRow = (keyId: string) => ({
  key_id: keyId,
  user_id: 'u1',
  role: 'USER',
  status: 'ACTIVE',
  expires_at: null,
  username: 'alice',
  display_name: 'Alice',
  user_created_at: CREATED,
  user_updated_at: CREATED,
})

/** A '0' in place of the last character would leave a key whose last character was '0' as it was (1 run in 62: the checksum is base62). */
const withLastCharacterChanged = (key: string) => `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise
  } catch (error) {
    return error as AppError
  }
  throw new Error('expected a rejection')
}

describe('API key format', () => {
  it('generates keys that pass their own checksum', () => {
    for (let i = 0; i < 200; i++) expect(isWellFormedApiKey(generateApiKey())).toBe(true)
  })

  it('rejects a key with any single character changed', () => {
    const key = generateApiKey()
    for (let position = 4; position < key.length; position++) {
      const replacement = key[position] === 'a' ? 'b' : 'a'
      expect(isWellFormedApiKey(key.slice(0, position) + replacement + key.slice(position + 1))).toBe(false)
    }
  })
})

describe('Authorization header: RFC 9110 credentials, scheme case-insensitive, or a bare key', () => {
  const key = generateApiKey()
  it.each([
    ['Bearer <key>', `Bearer ${key}`],
    ['bearer <key> (scheme is case-insensitive)', `bearer ${key}`],
    ['BEARER <key>', `BEARER ${key}`],
    ['two spaces (1*SP)', `Bearer  ${key}`],
    ['a bare key (the spec: an optional prefix)', key],
    ['surrounding spaces', ` Bearer ${key} `],
  ])('accepts %s', (_name, header) => {
    expect(apiKeyFromAuthorization(header)).toBe(key)
  })

  it.each([
    ['a tab after the scheme', `Bearer\t${key}`],
    ['a line break after the scheme', `Bearer\n${key}`],
    ['two credentials', `Bearer ${key} ${key}`],
    ['another scheme', `Token ${key}`],
    ['a key with a space inside', `${key.slice(0, 10)} ${key.slice(10)}`],
    ['an empty value', ''],
  ])('refuses %s', (_name, header) => {
    expect(apiKeyFromAuthorization(header)).toBeUndefined()
  })
})

describe('Authenticator', () => {
  it.each([
    ['no header', undefined],
    ['a wrong scheme', 'Basic dXNlcjpwYXNz'],
    ['a short key', 'Bearer msk_abc'],
    ['a key with a bad checksum', `Bearer ${withLastCharacterChanged(generateApiKey())}`],
    ['a key with another prefix', `Bearer sk_${generateApiKey().slice(4)}`],
  ])('rejects %s as UNAUTHENTICATED without querying the database', async (_name, header) => {
    const { database, queries } = recordingDatabase()
    const authenticator = new Authenticator(database, silent)
    authenticator.start()
    const error = await rejection(authenticator.authenticate(header))
    expect(error.code).toBe('UNAUTHENTICATED')
    expect(queries).toEqual([])
    await authenticator.stop()
  })

  it('caches a valid key and forgets it when a change notification names it', async () => {
    const row = credentialRow('k1')
    const { database, queries, notify } = recordingDatabase(() => [row])
    const authenticator = new Authenticator(database, silent)
    authenticator.start()
    const key = generateApiKey()
    expect(await authenticator.authenticate(`Bearer ${key}`)).toEqual({
      userId: 'u1',
      role: 'USER',
      apiKeyId: 'k1',
      user: { username: 'alice', displayName: 'Alice', createdAt: CREATED.getTime(), updatedAt: CREATED.getTime() },
    })
    await authenticator.authenticate(`Bearer ${key}`)
    expect(queries).toHaveLength(1)
    notify('key:k1')
    await authenticator.authenticate(`Bearer ${key}`)
    expect(queries).toHaveLength(2)
    notify('user:u1')
    await authenticator.authenticate(key)
    expect(queries).toHaveLength(3)
    await authenticator.stop()
  })

  it('keeps usage stamps only for keys used within the resolution, however many keys it has seen', async () => {
    let keyNumber = 0
    const { database } = recordingDatabase(() => [credentialRow(`k${++keyNumber}`)])
    const authenticator = new Authenticator(database, silent)
    authenticator.start()
    const stamps: Array<Array<{ id: string }>> = []
    authenticator.setUsageSink(async (usage) => void stamps.push(usage))
    let now = Date.now()
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now)
    try {
      for (let i = 0; i < 50; i++) await authenticator.authenticate(`Bearer ${generateApiKey()}`)
      await authenticator.flushUsage()
      expect(stamps.flat()).toHaveLength(50)
      expect(authenticator.usageWritesKept).toBe(50)
      now += LAST_USED_RESOLUTION_MS
      await authenticator.authenticate(`Bearer ${generateApiKey()}`)
      await authenticator.flushUsage()
      expect(authenticator.usageWritesKept).toBe(1)
    } finally {
      clock.mockRestore()
      await authenticator.stop()
    }
  })
})
