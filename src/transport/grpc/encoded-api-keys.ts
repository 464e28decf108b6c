import type * as grpc from '@grpc/grpc-js'
import { ApiKey, ApiKeyServiceService, ListApiKeysResponse } from '../../generated/memsvc/v1/apikeys.js'

/** ListApiKeys's answer as the domain hands it over: each key as its wire JSON text. */
export interface JsonKeyPage {
  keys: string[]
  nextToken?: string
}

/** Bounds the memory of the encodings kept: about 600 bytes each. */
const MAX_ENCODED_KEYS = 10_000
/** Field 1 (keys) and field 2 (next_token) of ListApiKeysResponse, both length-delimited: one-byte tags. */
const KEYS_TAG = (1 << 3) | 2
const NEXT_TOKEN_TAG = (2 << 3) | 2

/** wire_json opens with the key's id: migration 4 writes apiKeyId first, a UUID in its 36-character text form. */
const ID_PREFIX = '{"apiKeyId":"'
const ID_LENGTH = 36

interface KeptEncoding {
  json: string
  bytes: Uint8Array
}

/**
 * A key's ApiKey message bytes depend only on its JSON text, so they are kept and reused
 * for as long as the text does not change (encoding them on every call was costly; the
 * measurements are in bench/README.md, "Where ListApiKeys's time went"). They are kept by
 * key id and checked against the whole text, so a wrong guess at the id costs a
 * re-encoding, never a wrong answer; keying by the text would hash a fresh ~340-character
 * string on every lookup, since each query returns new strings. Oldest first out when full.
 */
const encodings = new Map<string, KeptEncoding>()

function encodedKey(json: string): Uint8Array {
  // A text of another shape still works: it is kept under the whole text.
  const id = json.startsWith(ID_PREFIX) ? json.slice(ID_PREFIX.length, ID_PREFIX.length + ID_LENGTH) : json
  const kept = encodings.get(id)
  if (kept !== undefined && kept.json === json) return kept.bytes
  const bytes = ApiKey.encode(JSON.parse(json) as ApiKey).finish()
  if (kept === undefined && encodings.size >= MAX_ENCODED_KEYS) encodings.delete(encodings.keys().next().value!)
  encodings.set(id, { json, bytes })
  return bytes
}

const VARINT_PAYLOAD_BITS = 7
const VARINT_CONTINUES = 0x80

function varintLength(value: number): number {
  let length = 1
  while (value >= VARINT_CONTINUES) {
    value >>>= VARINT_PAYLOAD_BITS
    length++
  }
  return length
}

/** Writes tag, length and bytes of one length-delimited field at `at`; returns the next offset. */
function writeField(out: Buffer, at: number, tag: number, bytes: Uint8Array): number {
  out[at++] = tag
  let length = bytes.length
  while (length >= VARINT_CONTINUES) {
    out[at++] = (length & (VARINT_CONTINUES - 1)) | VARINT_CONTINUES
    length >>>= VARINT_PAYLOAD_BITS
  }
  out[at++] = length
  out.set(bytes, at)
  return at + bytes.length
}

/**
 * The same bytes ListApiKeysResponse.encode writes (an embedded message is a
 * length-delimited field), into one buffer sized up front: a growing writer reallocates
 * and copies as it grows.
 */
export function serializeJsonKeyPage(page: JsonKeyPage): Buffer {
  const keys = page.keys.map(encodedKey)
  const token = page.nextToken === undefined ? undefined : Buffer.from(page.nextToken, 'utf8')
  let size = 0
  for (const key of keys) size += 1 + varintLength(key.length) + key.length
  if (token) size += 1 + varintLength(token.length) + token.length
  const out = Buffer.allocUnsafe(size)
  let at = 0
  for (const key of keys) at = writeField(out, at, KEYS_TAG, key)
  if (token) writeField(out, at, NEXT_TOKEN_TAG, token)
  return out
}

export function deserializeJsonKeyPage(bytes: Buffer): JsonKeyPage {
  const response = ListApiKeysResponse.decode(bytes)
  return { keys: response.keys.map((key) => JSON.stringify(key)), nextToken: response.nextToken }
}

/** ListApiKeys as the generated service defines it, but answered from JSON texts. */
export const listApiKeysFromJson: grpc.MethodDefinition<
  Parameters<typeof ApiKeyServiceService.listApiKeys.requestSerialize>[0],
  JsonKeyPage
> = {
  ...ApiKeyServiceService.listApiKeys,
  responseSerialize: serializeJsonKeyPage,
  responseDeserialize: deserializeJsonKeyPage,
}
