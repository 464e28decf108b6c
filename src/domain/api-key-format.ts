import crypto from 'node:crypto'
import zlib from 'node:zlib'

/**
 * Key format: `msk_` + 32 random bytes in base62 (43 chars) + CRC32 of that body in
 * base62 (6 chars). The checksum lets secret scanners and the server reject malformed
 * keys without touching the database.
 */
export const API_KEY_PREFIX = 'msk_'
const SECRET_BYTES = 32
const BODY_LENGTH = 43
const CHECKSUM_LENGTH = 6
/** Shown in listings so that people can tell keys apart; too short to help guess one. */
export const DISPLAY_PREFIX_LENGTH = 12
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`)

function toBase62(value: bigint, width: number): string {
  let text = ''
  let rest = value
  while (rest > 0n) {
    text = BASE62[Number(rest % 62n)]! + text
    rest /= 62n
  }
  return text.padStart(width, '0')
}

function checksum(body: string): string {
  return toBase62(BigInt(zlib.crc32(body)), CHECKSUM_LENGTH)
}

export function generateApiKey(): string {
  const body = toBase62(BigInt(`0x${crypto.randomBytes(SECRET_BYTES).toString('hex')}`), BODY_LENGTH)
  return `${API_KEY_PREFIX}${body}${checksum(body)}`
}

/** Shape and checksum only: no database, no timing difference that depends on stored keys. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false
  const body = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH)
  return checksum(body) === key.slice(API_KEY_PREFIX.length + BODY_LENGTH)
}

/** What is stored: the SHA-256 of the whole key. */
export function hashApiKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key).digest()
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH)
}
