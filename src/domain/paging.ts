import { invalidArgument } from '../errors/app-error.js'
import { DEFAULT_PAGE_SIZE, MAX_EPOCH_MILLIS } from '../validation/common.js'

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A token is client input: anything the database would reject (a date out of range, a malformed uuid) is refused here. */
const isPosition = (createdAt: unknown, id: unknown): createdAt is number =>
  typeof createdAt === 'number' &&
  Number.isSafeInteger(createdAt) &&
  createdAt >= 0 &&
  createdAt <= MAX_EPOCH_MILLIS &&
  typeof id === 'string' &&
  UUID_PATTERN.test(id)

/** Keyset position: rows are ordered by (created_at, id), created_at at millisecond precision. */
export interface PagePosition {
  createdAt: Date
  id: string
}

export function encodePageToken(position: PagePosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.getTime(), position.id])).toString('base64url')
}

export function decodePageToken(token: string | undefined): PagePosition | undefined {
  if (token === undefined || token === '') return undefined
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [unknown, unknown]
    if (isPosition(createdAt, id)) return { createdAt: new Date(createdAt), id: id as string }
  } catch {
    // fall through to the error below
  }
  throw invalidArgument('nextToken', 'is not a valid page token')
}

/** Fetches one row more than asked, to know whether another page exists. */
export function pageOf<Row extends { created_at: Date; id: string }, Item>(
  rows: Row[],
  pageSize: number,
  toItem: (row: Row) => Item,
): { items: Item[]; nextToken?: string } {
  const page = rows.slice(0, pageSize)
  const last = page[page.length - 1]
  const nextToken =
    rows.length > pageSize && last ? encodePageToken({ createdAt: last.created_at, id: last.id }) : undefined
  return { items: page.map(toItem), nextToken }
}

export const pageSizeOrDefault = (size: number | undefined) => size ?? DEFAULT_PAGE_SIZE

/** Dates are stored with millisecond precision so that page tokens are exact. */
export const nowMillis = () => new Date(Date.now())
