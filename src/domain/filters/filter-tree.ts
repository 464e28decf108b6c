/**
 * The parsed form of a metadata filter: what the parser builds and the compiler reads.
 * Plain data; every user-supplied text in it is a literal value or a validated path.
 */

export type CastType = 'NUMBER' | 'TEXT' | 'BOOLEAN' | 'TIMESTAMP'

export type Literal = string | number | boolean

/** `val('$.a.b')`, optionally inside `CAST(… AS type)`. */
export interface ValueReference {
  /** The JSON path's keys and array indexes, e.g. ['a', 'b', '0']. */
  path: string[]
  cast?: CastType
}

export type ComparisonOperator = '=' | '!=' | '<' | '<=' | '>' | '>='

/**
 * A memory's own times, named bare beside val('$.…'): `createdAt > '2026-01-01'`. Compared
 * with instants only; the parser turns each literal (an ISO date or time, or epoch
 * milliseconds) into ISO text at millisecond precision, in UTC.
 */
export const MEMORY_TIME_FIELDS = ['createdAt', 'updatedAt', 'validUntil'] as const
export type MemoryTimeField = (typeof MEMORY_TIME_FIELDS)[number]

export type FilterNode =
  | { kind: 'and' | 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; operand: FilterNode }
  | { kind: 'compare'; target: ValueReference; operator: ComparisonOperator; value: Literal }
  | { kind: 'in'; target: ValueReference; values: Literal[]; negated: boolean }
  | { kind: 'like'; target: ValueReference; pattern: string; caseInsensitive: boolean; negated: boolean }
  | { kind: 'null'; target: ValueReference; negated: boolean }
  /** The array at the path holds every one of the values. */
  | { kind: 'contains'; target: ValueReference; values: Literal[] }
  /** The array at the path holds at least one of the values. */
  | { kind: 'overlaps'; target: ValueReference; values: Literal[] }
  /** A memory's time compared with an instant (ISO text). */
  | { kind: 'timeCompare'; field: MemoryTimeField; operator: ComparisonOperator; value: string }
  | { kind: 'timeIn'; field: MemoryTimeField; values: string[]; negated: boolean }
  /** Only validUntil is ever null; createdAt and updatedAt always have a value. */
  | { kind: 'timeNull'; field: MemoryTimeField; negated: boolean }

/** A syntax or type error at a 1-based character position of the filter text. */
export class FilterError extends Error {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`at position ${position}: ${reason}`)
    this.name = 'FilterError'
  }
}
