import { MAX_EPOCH_MILLIS } from '../../validation/common.js'
import { FilterError, type Literal, MEMORY_TIME_FIELDS, type MemoryTimeField } from './filter-tree.js'

/**
 * The instants a memory's time (createdAt, updatedAt, validUntil) is compared with: an ISO
 * 8601 date or date and time, or epoch milliseconds. Each becomes ISO text in UTC at
 * millisecond precision, which PostgreSQL reads as timestamptz whatever its settings: a
 * string JavaScript's Date.parse would take in another form ('March 7, 2026', a date
 * without its zone read in the server's local time) is refused instead, so a filter means
 * the same on every server.
 */

/** YYYY-MM-DD, optionally with a time (HH:MM, :SS, fractions of a second) and a zone (Z, ±HH:MM); without a zone, UTC. */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/
/** 0001-01-01T00:00:00Z: PostgreSQL has no year 0, and earlier dates mean nothing for a memory. */
const MIN_INSTANT_MILLIS = -62_135_596_800_000
const MILLIS_PER_MINUTE = 60_000
const MAX_HOUR = 23
const MAX_MINUTE = 59
const MAX_SECOND = 59
const MILLISECOND_DIGITS = 3

const EXPECTED =
  "a date or time such as '2026-01-01' or '2026-01-01T12:00:00Z' (UTC unless it names a zone), " +
  'or epoch milliseconds such as 1764300000000'

/** The field a bare word names (keywords come upper-cased from the lexer), if it names one. */
export function memoryTimeField(word: string): MemoryTimeField | undefined {
  return MEMORY_TIME_FIELDS.find((field) => field.toUpperCase() === word)
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is this month's last day (months count from 0 here).
  const lastDay = new Date(0)
  lastDay.setUTCFullYear(year, month, 0)
  return lastDay.getUTCDate()
}

/** Epoch milliseconds of an ISO instant, or undefined when the text is not one (or names a day that does not exist). */
function isoMillis(text: string): number | undefined {
  const match = ISO_INSTANT.exec(text)
  if (!match) return undefined
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone = 'Z'] = match
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined
  if (h > MAX_HOUR || mi > MAX_MINUTE || s > MAX_SECOND) return undefined
  let offsetMinutes = 0
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '')
    const [zoneHours, zoneMinutes] = [Number(digits.slice(0, 2)), Number(digits.slice(2))]
    if (zoneHours > MAX_HOUR || zoneMinutes > MAX_MINUTE) return undefined
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (zoneHours * 60 + zoneMinutes)
  }
  // Date.UTC reads years 0 to 99 as 1900 to 1999: set the year on its own.
  const instant = new Date(0)
  instant.setUTCFullYear(y, mo - 1, d)
  instant.setUTCHours(h, mi, s, Number(fraction.padEnd(MILLISECOND_DIGITS, '0').slice(0, MILLISECOND_DIGITS)))
  return instant.getTime() - offsetMinutes * MILLIS_PER_MINUTE
}

/** A literal compared with a memory's time, as ISO text in UTC; anything else is an error at its position. */
export function timeLiteral(field: MemoryTimeField, value: Literal, position: number): string {
  let millis: number | undefined
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0 && value <= MAX_EPOCH_MILLIS) millis = value
  } else if (typeof value === 'string') {
    millis = isoMillis(value.trim())
    if (millis !== undefined && (millis < MIN_INSTANT_MILLIS || millis > MAX_EPOCH_MILLIS)) millis = undefined
  }
  if (millis === undefined) throw new FilterError(position, `${field} is compared with ${EXPECTED}`)
  return new Date(millis).toISOString()
}
