import crypto from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { secretsEqual } from '../../src/secrets/secrets-equal.js'

const SHA256_BYTES = 32

afterEach(() => vi.restoreAllMocks())

describe('metrics secret comparison', () => {
  it('accepts the expected secret and refuses any other, whatever its length (no throw on a length mismatch)', () => {
    const expected = 'metrics-secret-0123456789'
    expect(secretsEqual(expected, expected)).toBe(true)
    for (const given of ['', 'm', expected.slice(0, -1), `${expected}x`, expected.toUpperCase(), 'x'.repeat(10_000)]) {
      expect(secretsEqual(given, expected)).toBe(false)
    }
  })

  it('compares with crypto.timingSafeEqual over two digests of equal length, for secrets of different lengths', () => {
    const compare = vi.spyOn(crypto, 'timingSafeEqual')
    secretsEqual('short', 'a considerably longer expected secret')
    expect(compare).toHaveBeenCalledTimes(1)
    const [a, b] = compare.mock.calls[0]! as [Buffer, Buffer]
    expect([a.length, b.length]).toEqual([SHA256_BYTES, SHA256_BYTES])
  })
})
