import { describe, expect, it } from 'vitest'
import { type ApiKey, ApiKeyStatus, ListApiKeysResponse } from '../../src/generated/memsvc/v1/apikeys.js'
import { deserializeJsonKeyPage, serializeJsonKeyPage } from '../../src/transport/grpc/encoded-api-keys.js'

const OWNER = '2f9d3c34-43a3-4d0b-9b0b-1c39c1e0d0aa'
// The shapes wire_json takes: optional timestamps present and absent, labels empty and not, non-ASCII text.
const KEYS: ApiKey[] = [
  {
    apiKeyId: '0c1f6d43-6d1e-4f5e-9d7b-1d1c0b5e9a01',
    userId: OWNER,
    keyPrefix: 'msk_AbCdEfGh',
    status: ApiKeyStatus.ACTIVE,
    labels: {},
    createdAt: 1795326851886,
    updatedAt: 1795326851886,
    createdById: OWNER,
    updatedById: OWNER,
  },
  {
    apiKeyId: '0c1f6d43-6d1e-4f5e-9d7b-1d1c0b5e9a02',
    userId: OWNER,
    keyPrefix: 'msk_12345678',
    status: ApiKeyStatus.INACTIVE,
    labels: { app: 'search', 'team.name': 'é "q" \\' },
    expiresAt: 1895413251886,
    lastUsedAt: 1767323045678,
    createdAt: 1795326851890,
    updatedAt: 1795326860000,
    createdById: OWNER,
    updatedById: OWNER,
  },
]

describe('ListApiKeys answered from wire JSON', () => {
  it.each([
    ['a full page with a next token', KEYS, 'WzE3OTUzMjY4NTE4OTAsIjBjMWYi'],
    ['a last page', KEYS, undefined],
    ['an empty page', [], undefined],
    // A key over 16 KiB: a three-byte length.
    [
      'a key with many long labels',
      [
        {
          ...KEYS[1]!,
          labels: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`label-${i}`, 'v'.repeat(250)])),
        },
      ],
      'x'.repeat(200),
    ],
  ])('%s: the bytes are exactly what ListApiKeysResponse.encode writes', (_, keys, nextToken) => {
    const fromJson = serializeJsonKeyPage({ keys: keys.map((key) => JSON.stringify(key)), nextToken })
    const reference = Buffer.from(ListApiKeysResponse.encode({ keys, nextToken }).finish())
    expect(fromJson.equals(reference)).toBe(true)
    // Again, now from the kept encodings.
    expect(serializeJsonKeyPage({ keys: keys.map((key) => JSON.stringify(key)), nextToken }).equals(reference)).toBe(
      true,
    )
  })

  it('a changed key is a new text, so it is encoded anew', () => {
    const before = KEYS[1]!
    const after = { ...before, status: ApiKeyStatus.ACTIVE, labels: { app: 'other' } }
    serializeJsonKeyPage({ keys: [JSON.stringify(before)] })
    const decoded = ListApiKeysResponse.decode(serializeJsonKeyPage({ keys: [JSON.stringify(after)] }))
    expect(decoded.keys).toEqual([after])
  })

  it('a text that does not open with the key id is still encoded, and kept apart from the same key in wire order', () => {
    const key = KEYS[1]!
    const { userId, ...rest } = key
    const reordered = JSON.stringify({ userId, ...rest })
    const reference = Buffer.from(ListApiKeysResponse.encode({ keys: [key] }).finish())
    expect(serializeJsonKeyPage({ keys: [reordered] }).equals(reference)).toBe(true)
    expect(serializeJsonKeyPage({ keys: [JSON.stringify(key)] }).equals(reference)).toBe(true)
    expect(serializeJsonKeyPage({ keys: [reordered] }).equals(reference)).toBe(true)
  })

  it('two keys are never confused, whatever order they come in', () => {
    const [first, second] = KEYS as [ApiKey, ApiKey]
    const decoded = (keys: ApiKey[]) =>
      ListApiKeysResponse.decode(serializeJsonKeyPage({ keys: keys.map((key) => JSON.stringify(key)) })).keys
    expect(decoded([first, second])).toEqual([first, second])
    expect(decoded([second, first])).toEqual([second, first])
    expect(decoded([second, second])).toEqual([second, second])
  })

  it('decodes back to the same keys', () => {
    const page = deserializeJsonKeyPage(
      serializeJsonKeyPage({ keys: KEYS.map((key) => JSON.stringify(key)), nextToken: 'abc' }),
    )
    expect(page.nextToken).toBe('abc')
    expect(page.keys.map((key) => JSON.parse(key))).toEqual(KEYS)
  })
})
