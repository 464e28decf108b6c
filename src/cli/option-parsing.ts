// Turning option text into request values. Every failure is a bad-input error
// (exit 2) naming the flag, raised before anything is sent. Semantic checks (label
// key syntax, ranges, URLs) stay with the server, which owns the rules.
import { badInput } from './exit-codes.js'

/** An option as a list: undefined, one string, or an array (a repeatable option, or a plain one given twice). */
export function asList(value: unknown): string[] {
  if (value === undefined || value === null) return []
  return (Array.isArray(value) ? value : [value]).map(String)
}

/** The last value when a single-valued option was given twice. */
export function lastValue(value: unknown): string | undefined {
  const list = asList(value)
  return list[list.length - 1]
}

/** `--label k=v` (repeatable): the value may contain "=", the key may not be empty. */
export function parseLabels(values: unknown, flag: string): Record<string, string> | undefined {
  const list = asList(values)
  if (list.length === 0) return undefined
  const labels: Record<string, string> = {}
  for (const entry of list) {
    const separator = entry.indexOf('=')
    if (separator <= 0) throw badInput(`--${flag} "${entry}": use key=value, e.g. --${flag} env=prod`)
    const key = entry.slice(0, separator)
    const value = entry.slice(separator + 1)
    if (key in labels && labels[key] !== value) throw badInput(`--${flag} ${key} is given twice with different values`)
    labels[key] = value
  }
  return labels
}

const DURATION_UNITS_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }
const DURATION = /^(?:\d+[smhdw])+$/
const EPOCH_MILLIS = /^\d{1,16}$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i

/**
 * A point in time, as epoch milliseconds (1767225600000), an ISO date or date-time
 * (2026-01-01, 2026-01-01T12:00:00Z) or a duration from now (30d, 12h, 1w2d, 90m, 45s).
 */
export function parseTime(text: string, flag: string, now = Date.now()): number {
  const trimmed = text.trim()
  if (DURATION.test(trimmed)) {
    let total = 0
    for (const [, amount, unit] of trimmed.matchAll(/(\d+)([smhdw])/g))
      total += Number(amount) * DURATION_UNITS_MS[unit!]!
    return now + total
  }
  if (EPOCH_MILLIS.test(trimmed)) return Number(trimmed)
  if (ISO_DATE.test(trimmed)) {
    const parsed = Date.parse(trimmed)
    if (!Number.isNaN(parsed)) return parsed
  }
  throw badInput(
    `--${flag} "${text}": give epoch milliseconds (1767225600000), ` +
      'an ISO date (2026-01-01 or 2026-01-01T12:00:00Z) or a duration from now (30d, 12h, 90m)',
  )
}

export function parseInteger(
  text: unknown,
  flag: string,
  { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const value = String(text).trim()
  if (!/^-?\d+$/.test(value)) throw badInput(`--${flag} "${value}": must be a whole number`)
  const number = Number(value)
  if (number < min || number > max) throw badInput(`--${flag} ${value}: must be from ${min} to ${max}`)
  return number
}

/** A decimal number; the range is checked by the server, which owns it. */
export function parseNumber(text: unknown, flag: string): number {
  const value = String(text).trim()
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value)) throw badInput(`--${flag} "${value}": must be a number`)
  return Number(value)
}

/** Case-insensitive choice among enum names; `-` and `_` are interchangeable (llama-cpp = LLAMA_CPP). */
export function parseChoice<const T extends string>(text: unknown, flag: string, choices: readonly T[]): T {
  // Case-insensitive, `-` for `_`: the choices are spelled as the API spells them (HYBRID, recursive).
  const normalized = (choice: string) => choice.trim().toUpperCase().replaceAll('-', '_')
  const value = normalized(String(text))
  const match = choices.find((choice) => normalized(choice) === value)
  if (!match) throw badInput(`--${flag} "${String(text)}": must be one of ${choices.join(', ')}`)
  return match
}
