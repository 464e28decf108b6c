// Bulk rows for the scale benchmark: users and API keys written with COPY, in the server's
// own key format and hashing (generateApiKey, hashApiKey, displayPrefix), so every loaded
// row is a key memsvc would accept. COPY fires the table's row triggers like an insert, so
// wire_json comes from the trigger the server's own inserts go through, and the foreign key
// to users is checked per row as well.
import crypto from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type postgres from 'postgres'
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/domain/api-key-format.js'

/** Lines per chunk handed to the COPY stream: few enough writes, small enough buffers. */
const LINES_PER_CHUNK = 2_000
const SHA256_BYTES = 32
const LABELS = JSON.stringify({ bench: 'scale' })

/** The hashes of every key loaded so far, packed, so that a sample of them can be looked up later. */
export class LoadedKeyHashes {
  #buffer = Buffer.alloc(0)
  #count = 0

  get count(): number {
    return this.#count
  }

  add(hash: Buffer): void {
    if ((this.#count + 1) * SHA256_BYTES > this.#buffer.length) {
      const grown = Buffer.alloc(Math.max(SHA256_BYTES * 1024, this.#buffer.length * 2))
      this.#buffer.copy(grown)
      this.#buffer = grown
    }
    hash.copy(this.#buffer, this.#count * SHA256_BYTES)
    this.#count++
  }

  /** `size` hashes picked uniformly at random (with replacement) from all loaded so far. */
  sample(size: number): Buffer[] {
    if (this.#count === 0) return []
    return Array.from({ length: size }, () => {
      const index = crypto.randomInt(this.#count)
      return Buffer.from(this.#buffer.subarray(index * SHA256_BYTES, (index + 1) * SHA256_BYTES))
    })
  }
}

async function copyLines(sql: postgres.Sql, table: string, columns: string[], lines: Iterable<string>): Promise<void> {
  function* chunks() {
    let chunk: string[] = []
    for (const line of lines) {
      chunk.push(line)
      if (chunk.length === LINES_PER_CHUNK) {
        yield `${chunk.join('\n')}\n`
        chunk = []
      }
    }
    if (chunk.length > 0) yield `${chunk.join('\n')}\n`
  }
  const writable = await sql.unsafe(`copy ${table} (${columns.join(', ')}) from stdin`).writable()
  await pipeline(Readable.from(chunks()), writable)
}

/** Creates `count` USER accounts named `<prefix>-<n>`; returns their ids. */
export async function loadUsers(sql: postgres.Sql, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => crypto.randomUUID())
  const now = new Date().toISOString()
  await copyLines(
    sql,
    'users',
    ['id', 'username', 'display_name', 'role', 'created_at', 'updated_at'],
    ids.map((id, index) => [id, `${prefix}-${index}`, `${prefix} ${index}`, 'USER', now, now].join('\t')),
  )
  return ids
}

/**
 * Adds `count` ACTIVE keys, dealt round-robin to `ownerIds` (created by `creatorId`), and
 * records each key's hash in `hashes`. The raw keys are thrown away, as the server does.
 */
export async function loadApiKeys(
  sql: postgres.Sql,
  options: { count: number; ownerIds: string[]; creatorId: string; hashes: LoadedKeyHashes },
): Promise<void> {
  const { count, ownerIds, creatorId, hashes } = options
  const start = Date.now()
  function* lines() {
    for (let index = 0; index < count; index++) {
      const rawKey = generateApiKey()
      const hash = hashApiKey(rawKey)
      const owner = ownerIds[hashes.count % ownerIds.length]!
      hashes.add(hash)
      const at = new Date(start + index).toISOString()
      // id, user_id, key_hash (bytea in COPY's text form: \x and hex, the backslash escaped), key_prefix, status,
      // labels, created_at, updated_at, created_by, updated_by
      yield `${crypto.randomUUID()}\t${owner}\t\\\\x${hash.toString('hex')}\t${displayPrefix(rawKey)}\tACTIVE\t${LABELS}\t${at}\t${at}\t${creatorId}\t${creatorId}`
    }
  }
  await copyLines(
    sql,
    'api_keys',
    [
      'id',
      'user_id',
      'key_hash',
      'key_prefix',
      'status',
      'labels',
      'created_at',
      'updated_at',
      'created_by',
      'updated_by',
    ],
    lines(),
  )
}
