import type { MemoryRow } from '../db/sql/memories.js'
import { invalidArgument } from '../errors/app-error.js'
import type { MemorySortField } from '../validation/memory.js'
import { decodePageToken, encodePageToken, type PagePosition } from './paging.js'

/**
 * The page tokens of a space's memories, which carry the sort key of the page's last memory.
 * By createdAt, the token every list uses (paging.ts: created_at is stored at millisecond
 * precision). By updatedAt, the key is the exact stored time as text, to the microsecond:
 * updated_at is set by now() in several statements, and a key cut to milliseconds would skip
 * or repeat memories updated within the same millisecond. Each kind of token is refused for
 * the other sort: a page read by one key cannot continue by the other.
 */

/** ISO text in UTC to the microsecond, as listMemories writes it (src/db/sql/memories.ts). */
const EXACT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UPDATED_AT_TAG = 'updatedAt'

export type MemoryPagePosition =
  | { sortBy: 'createdAt'; after: PagePosition }
  | { sortBy: 'updatedAt'; after: { updatedAt: string; id: string } }

/** A row of a list by updatedAt carries its exact key. */
export type ListedMemoryRow = MemoryRow & { updated_key?: string }

export function decodeMemoryPageToken(
  token: string | undefined,
  sortBy: MemorySortField,
): MemoryPagePosition | undefined {
  if (token === undefined || token === '') return undefined
  if (sortBy === 'createdAt') {
    const after = decodePageToken(token)
    return after && { sortBy, after }
  }
  try {
    const [tag, updatedAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[]
    if (
      tag === UPDATED_AT_TAG &&
      typeof updatedAt === 'string' &&
      EXACT_TIME.test(updatedAt) &&
      !Number.isNaN(Date.parse(updatedAt)) &&
      typeof id === 'string' &&
      UUID_PATTERN.test(id)
    )
      return { sortBy, after: { updatedAt, id } }
  } catch {
    // fall through to the error below
  }
  throw invalidArgument('nextToken', 'is not a valid page token for sortBy updatedAt')
}

/** The token of the page after `last`, in the sort's own form. */
export function memoryPageToken(last: ListedMemoryRow, sortBy: MemorySortField): string {
  if (sortBy === 'createdAt') return encodePageToken({ createdAt: last.created_at, id: last.id })
  if (last.updated_key === undefined) throw new Error("a list by updatedAt must read each row's updated_key")
  return Buffer.from(JSON.stringify([UPDATED_AT_TAG, last.updated_key, last.id])).toString('base64url')
}
