import crypto from 'node:crypto'

/**
 * Compares a presented secret with the expected one in time that depends on neither:
 * both are hashed to equal-length digests first, because timingSafeEqual needs equal
 * lengths and an early length check would tell an attacker the secret's length.
 */
export function secretsEqual(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest()
  const b = crypto.createHash('sha256').update(expected).digest()
  return crypto.timingSafeEqual(a, b)
}
