import { type Token, tokenize } from './filter-lexer.js'
import { memoryTimeField, timeLiteral } from './filter-time.js'
import {
  type CastType,
  type ComparisonOperator,
  FilterError,
  type FilterNode,
  type Literal,
  type MemoryTimeField,
  type ValueReference,
} from './filter-tree.js'

/**
 * Recursive descent over the tokens, with these precedences (loosest first):
 *
 *   expression := conjunction (OR conjunction)*
 *   conjunction := negation (AND negation)*
 *   negation   := NOT negation | '(' expression ')' | predicate
 *   predicate  := reference ( comparison literal | IS [NOT] NULL | [NOT] IN list | [NOT] LIKE|ILIKE string
 *                            | CONTAINS (literal | list) | OVERLAPS list )
 *               | time ( comparison literal | IS [NOT] NULL | [NOT] IN list )
 *   reference  := VAL '(' path ')' | CAST '(' VAL '(' path ')' AS NUMBER|TEXT|BOOLEAN|TIMESTAMP ')'
 *   time       := CREATEDAT | UPDATEDAT | VALIDUNTIL   (the memory's own times, compared with instants: filter-time.ts)
 *   list       := '(' literal (',' literal)* ')'
 *
 * Types are checked here, so the compiler only ever sees comparisons it can write.
 */

/** Longer filters are refused before they are read. */
export const MAX_FILTER_LENGTH = 8_192
/** Parentheses and NOTs nested deeper than this are refused (and the parser's stack stays small). */
export const MAX_FILTER_DEPTH = 32
export const MAX_LIST_VALUES = 1_000
/** Path segments: keys of letters, digits, `_` and `-`, or array indexes. */
export const MAX_PATH_SEGMENTS = 16
const PATH = /^\$((\.[A-Za-z_][A-Za-z0-9_-]{0,63})|(\[\d{1,6}\]))+$/
const PATH_SEGMENT = /\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]/g

const CAST_TYPES: readonly CastType[] = ['NUMBER', 'TEXT', 'BOOLEAN', 'TIMESTAMP']
const COMPARISONS: readonly string[] = ['=', '!=', '<', '<=', '>', '>=']

export function parseFilterText(text: string): FilterNode {
  if (text.length > MAX_FILTER_LENGTH)
    throw new FilterError(MAX_FILTER_LENGTH + 1, `a filter is at most ${MAX_FILTER_LENGTH} characters`)
  if (text.trim().length === 0) throw new FilterError(1, 'the filter is empty')
  return new Parser(tokenize(text)).parse()
}

export function parsePath(path: string, position: number): string[] {
  if (!PATH.test(path)) {
    throw new FilterError(
      position,
      `the path ${JSON.stringify(path.slice(0, 80))} is not of the form $.key.key or $.key[0] ` +
        '(keys of letters, digits, _ and -, at most 64 long)',
    )
  }
  const segments = [...path.matchAll(PATH_SEGMENT)].map((match) => match[1] ?? match[2]!)
  if (segments.length > MAX_PATH_SEGMENTS)
    throw new FilterError(position, `a path has at most ${MAX_PATH_SEGMENTS} segments`)
  return segments
}

const describe = (token: Token): string => {
  switch (token.kind) {
    case 'end':
      return 'the end of the filter'
    case 'string':
      return 'a string'
    case 'number':
      return 'a number'
    default:
      return JSON.stringify(token.text)
  }
}

class Parser {
  #index = 0
  #depth = 0

  constructor(private readonly tokens: Token[]) {}

  parse(): FilterNode {
    const node = this.expression()
    const rest = this.peek()
    if (rest.kind !== 'end')
      throw new FilterError(rest.position, `expected AND, OR or the end of the filter, found ${describe(rest)}`)
    return node
  }

  private peek(): Token {
    return this.tokens[this.#index]!
  }

  private next(): Token {
    const token = this.tokens[this.#index]!
    if (token.kind !== 'end') this.#index++
    return token
  }

  private isWord(text: string): boolean {
    const token = this.peek()
    return token.kind === 'word' && token.text === text
  }

  private isSymbol(text: string): boolean {
    const token = this.peek()
    return token.kind === 'symbol' && token.text === text
  }

  private expectWord(text: string): Token {
    const token = this.next()
    if (token.kind !== 'word' || token.text !== text)
      throw new FilterError(token.position, `expected ${text}, found ${describe(token)}`)
    return token
  }

  private expectSymbol(text: string): Token {
    const token = this.next()
    if (token.kind !== 'symbol' || token.text !== text)
      throw new FilterError(token.position, `expected "${text}", found ${describe(token)}`)
    return token
  }

  private nested<T>(position: number, read: () => T): T {
    if (++this.#depth > MAX_FILTER_DEPTH)
      throw new FilterError(position, `parentheses and NOT nest at most ${MAX_FILTER_DEPTH} deep`)
    const result = read()
    this.#depth--
    return result
  }

  private expression(): FilterNode {
    return this.joined('OR', () => this.conjunction())
  }

  private conjunction(): FilterNode {
    return this.joined('AND', () => this.negation())
  }

  /** operand (OR operand)…, or the same with AND: grouped from the left, `a OR b OR c` as `(a OR b) OR c`. */
  private joined(word: 'AND' | 'OR', operand: () => FilterNode): FilterNode {
    const kind = word === 'AND' ? 'and' : 'or'
    let node = operand()
    while (this.isWord(word)) {
      this.next()
      node = { kind, left: node, right: operand() }
    }
    return node
  }

  private negation(): FilterNode {
    const token = this.peek()
    if (this.isWord('NOT')) {
      this.next()
      return this.nested(token.position, () => ({ kind: 'not', operand: this.negation() }))
    }
    if (this.isSymbol('(')) {
      this.next()
      return this.nested(token.position, () => {
        const inner = this.expression()
        this.expectSymbol(')')
        return inner
      })
    }
    return this.predicate()
  }

  private reference(): ValueReference {
    const token = this.peek()
    if (this.isWord('VAL')) return { path: this.val() }
    if (this.isWord('CAST')) {
      this.next()
      this.expectSymbol('(')
      const path = this.val()
      this.expectWord('AS')
      const type = this.next()
      if (type.kind !== 'word' || !CAST_TYPES.includes(type.text as CastType)) {
        throw new FilterError(type.position, `expected a type (${CAST_TYPES.join(', ')}), found ${describe(type)}`)
      }
      this.expectSymbol(')')
      return { path, cast: type.text as CastType }
    }
    throw new FilterError(
      token.position,
      `expected val('$.path'), CAST(val('$.path') AS type), createdAt, updatedAt or validUntil, found ${describe(token)}`,
    )
  }

  private val(): string[] {
    this.expectWord('VAL')
    this.expectSymbol('(')
    const path = this.next()
    if (path.kind !== 'string')
      throw new FilterError(path.position, `expected a quoted JSON path such as '$.a.b', found ${describe(path)}`)
    this.expectSymbol(')')
    return parsePath(path.value, path.position)
  }

  private literal(): { value: Literal; position: number } {
    const token = this.next()
    if (token.kind === 'string' || token.kind === 'number') return { value: token.value, position: token.position }
    if (token.kind === 'word' && (token.text === 'TRUE' || token.text === 'FALSE'))
      return { value: token.text === 'TRUE', position: token.position }
    throw new FilterError(
      token.position,
      `expected a value (a 'string', a number, TRUE or FALSE), found ${describe(token)}`,
    )
  }

  /** '(' literal (',' literal)* ')', each literal checked (and converted) by `check`. */
  private list<T>(check: (value: Literal, position: number) => T): T[] {
    this.expectSymbol('(')
    const values: T[] = []
    for (;;) {
      const item = this.literal()
      values.push(check(item.value, item.position))
      if (values.length > MAX_LIST_VALUES)
        throw new FilterError(item.position, `a list holds at most ${MAX_LIST_VALUES} values`)
      const separator = this.next()
      if (separator.kind === 'symbol' && separator.text === ')') return values
      if (separator.kind !== 'symbol' || separator.text !== ',')
        throw new FilterError(separator.position, `expected "," or ")", found ${describe(separator)}`)
    }
  }

  private checkedList(target: ValueReference): Literal[] {
    return this.list((value, position) => checkedLiteral(target, value, position))
  }

  /** A memory's time: compared, listed or tested for NULL, each literal checked as an instant. */
  private timePredicate(field: MemoryTimeField): FilterNode {
    const token = this.next()
    if (token.kind === 'symbol' && COMPARISONS.includes(token.text)) {
      const item = this.literal()
      const value = timeLiteral(field, item.value, item.position)
      return { kind: 'timeCompare', field, operator: token.text as ComparisonOperator, value }
    }
    if (token.kind === 'word' && token.text === 'IS') {
      const negated = this.isWord('NOT')
      if (negated) this.next()
      this.expectWord('NULL')
      return { kind: 'timeNull', field, negated }
    }
    const negated = token.kind === 'word' && token.text === 'NOT'
    const operator = negated ? this.next() : token
    if (operator.kind === 'word' && operator.text === 'IN') {
      const values = this.list((value, position) => timeLiteral(field, value, position))
      return { kind: 'timeIn', field, values, negated }
    }
    throw new FilterError(
      operator.position,
      `${field} is a time: expected a comparison (= != < <= > >=), IN or IS [NOT] NULL, found ${describe(operator)}`,
    )
  }

  private predicate(): FilterNode {
    const start = this.peek().position
    const first = this.peek()
    const field = first.kind === 'word' ? memoryTimeField(first.text) : undefined
    if (field) {
      this.next()
      return this.timePredicate(field)
    }
    const target = this.reference()
    const token = this.next()
    if (token.kind === 'symbol' && COMPARISONS.includes(token.text)) {
      const item = this.literal()
      return {
        kind: 'compare',
        target,
        operator: token.text as ComparisonOperator,
        value: checkedLiteral(target, item.value, item.position),
      }
    }
    if (token.kind !== 'word')
      throw new FilterError(
        token.position,
        `expected a comparison, IN, LIKE, ILIKE, IS, CONTAINS or OVERLAPS, found ${describe(token)}`,
      )
    if (token.text === 'IS') {
      const negated = this.isWord('NOT')
      if (negated) this.next()
      this.expectWord('NULL')
      return { kind: 'null', target, negated }
    }
    const negated = token.text === 'NOT'
    const operator = negated ? this.next() : token
    if (operator.kind === 'word' && operator.text === 'IN')
      return { kind: 'in', target, values: this.checkedList(target), negated }
    if (operator.kind === 'word' && (operator.text === 'LIKE' || operator.text === 'ILIKE')) {
      if (target.cast && target.cast !== 'TEXT')
        throw new FilterError(operator.position, `${operator.text} compares text; the value is cast to ${target.cast}`)
      const pattern = this.next()
      if (pattern.kind !== 'string')
        throw new FilterError(pattern.position, `${operator.text} takes a quoted pattern, found ${describe(pattern)}`)
      return { kind: 'like', target, pattern: pattern.value, caseInsensitive: operator.text === 'ILIKE', negated }
    }
    if (!negated && operator.kind === 'word' && (operator.text === 'CONTAINS' || operator.text === 'OVERLAPS')) {
      if (target.cast) throw new FilterError(start, `${operator.text} reads an array: use val('$.path') without CAST`)
      if (operator.text === 'OVERLAPS') return { kind: 'overlaps', target, values: this.checkedList(target) }
      if (this.isSymbol('(')) return { kind: 'contains', target, values: this.checkedList(target) }
      return { kind: 'contains', target, values: [this.literal().value] }
    }
    throw new FilterError(
      operator.position,
      `expected a comparison, IN, LIKE, ILIKE, IS, CONTAINS or OVERLAPS, found ${describe(operator)}`,
    )
  }
}

/** A literal must suit the cast it is compared with; timestamps must be dates JavaScript can read. */
function checkedLiteral(target: ValueReference, value: Literal, position: number): Literal {
  switch (target.cast) {
    case undefined:
      return value
    case 'NUMBER':
      if (typeof value !== 'number')
        throw new FilterError(position, 'compared with CAST(… AS NUMBER): expected a number')
      return value
    case 'TEXT':
      if (typeof value !== 'string')
        throw new FilterError(position, "compared with CAST(… AS TEXT): expected a 'string'")
      return value
    case 'BOOLEAN':
      if (typeof value !== 'boolean')
        throw new FilterError(position, 'compared with CAST(… AS BOOLEAN): expected TRUE or FALSE')
      return value
    case 'TIMESTAMP': {
      const millis = typeof value === 'string' ? Date.parse(value) : Number.NaN
      if (Number.isNaN(millis))
        throw new FilterError(
          position,
          "compared with CAST(… AS TIMESTAMP): expected a date such as '2024-05-01T12:00:00Z'",
        )
      return new Date(millis).toISOString()
    }
  }
}
