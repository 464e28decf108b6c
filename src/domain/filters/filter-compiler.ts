import type { CompiledFilter } from '../../db/sql/filter-fragment.js'
import type { CastType, FilterNode, Literal, MemoryTimeField, ValueReference } from './filter-tree.js'

/**
 * Compiles a filter tree to a SQL condition over a memory's `metadata jsonb`. The SQL
 * text is assembled only from the fixed pieces below; every path and value of the filter
 * is a bound parameter. Every predicate is two-valued (coalesce … false), so a missing
 * key makes a comparison false and NOT of it true, rather than leaving NULL to swallow
 * the row. Every value is bound as text and cast in SQL: postgres.js would otherwise
 * serialise it by the type the server infers (a jsonb parameter gets JSON.stringify'd
 * again). Casts of stored values go through the memsvc_filter_* functions (migration 7), which answer
 * NULL for a value that does not convert instead of failing the query.
 *
 * createdAt, updatedAt and validUntil compile to the memory row's own columns, qualified as
 * the metadata column is (`m.metadata` → `m.created_at`). created_at and updated_at are
 * never null, so their comparisons are left bare: the indexes on (space_id, created_at) and
 * (space_id, updated_at) can serve a list's range. valid_until may be null, and is coalesced.
 */

/** The columns a filter may be compiled over: constants of the calling SQL module, never user text. */
export type MetadataColumn = 'metadata' | 'm.metadata'

const TIME_COLUMNS: Record<MemoryTimeField, { name: string; nullable: boolean }> = {
  createdAt: { name: 'created_at', nullable: false },
  updatedAt: { name: 'updated_at', nullable: false },
  validUntil: { name: 'valid_until', nullable: true },
}

/** The memory row's column of a time field, with the table alias the metadata column has (if any). */
function timeColumn(field: MemoryTimeField, column: MetadataColumn): { sql: string; nullable: boolean } {
  const alias = column.slice(0, column.length - 'metadata'.length)
  const { name, nullable } = TIME_COLUMNS[field]
  return { sql: `${alias}${name}`, nullable }
}

const SQL_TYPE: Record<CastType, string> = {
  NUMBER: 'numeric',
  TEXT: 'text',
  BOOLEAN: 'boolean',
  TIMESTAMP: 'timestamptz',
}

class Template implements CompiledFilter {
  strings = ['']
  values: unknown[] = []

  text(text: string): this {
    this.strings[this.strings.length - 1] += text
    return this
  }

  value(value: unknown): this {
    this.values.push(value)
    this.strings.push('')
    return this
  }
}

export type { CompiledFilter }

export function compileFilter(node: FilterNode, column: MetadataColumn): CompiledFilter {
  const template = new Template()
  writeNode(template, node, column)
  return template
}

/** A literal as the text of a parameter cast to the comparison's type: numbers keep their exact decimal form. */
function parameterText(value: Literal, cast: CastType | undefined): string {
  if (cast === undefined) return JSON.stringify(value)
  return String(value)
}

function writeJson(template: Template, target: ValueReference, column: MetadataColumn): void {
  template.text(`(${column} #> `).value(target.path).text('::text[])')
}

function writeTarget(template: Template, target: ValueReference, column: MetadataColumn): void {
  switch (target.cast) {
    case undefined:
      writeJson(template, target, column)
      return
    case 'TEXT':
      template.text(`(${column} #>> `).value(target.path).text('::text[])')
      return
    default:
      template.text(`memsvc_filter_${target.cast.toLowerCase()}(`)
      writeJson(template, target, column)
      template.text(')')
  }
}

const typeOf = (cast: CastType | undefined) => (cast ? SQL_TYPE[cast] : 'jsonb')

/** A chain of the same operator, flattened: a long AND list stays one level deep in SQL. */
function operandsOf(node: FilterNode, kind: 'and' | 'or'): FilterNode[] {
  const operands: FilterNode[] = []
  const pending = [node]
  while (pending.length > 0) {
    const current = pending.pop()!
    if (current.kind === kind) pending.push(current.right, current.left)
    else operands.push(current)
  }
  return operands
}

/** Opens `coalesce(<the target is an array> and `: CONTAINS and OVERLAPS hold only where the path holds an array. */
function writeArrayAnd(template: Template, target: ValueReference, column: MetadataColumn): void {
  template.text('coalesce(jsonb_typeof(')
  writeJson(template, target, column)
  template.text(") = 'array' and ")
}

function writeNode(template: Template, node: FilterNode, column: MetadataColumn): void {
  switch (node.kind) {
    case 'and':
    case 'or':
      template.text('(')
      operandsOf(node, node.kind).forEach((operand, index) => {
        if (index > 0) template.text(node.kind === 'and' ? ' and ' : ' or ')
        writeNode(template, operand, column)
      })
      template.text(')')
      return
    case 'not':
      template.text('(not ')
      writeNode(template, node.operand, column)
      template.text(')')
      return
    case 'compare': {
      template.text('coalesce(')
      if (!node.target.cast) {
        // jsonb orders values of different types by type: compare only like with like.
        template.text('jsonb_typeof(')
        writeJson(template, node.target, column)
        template.text(') = jsonb_typeof(').value(parameterText(node.value, undefined)).text('::text::jsonb) and ')
      }
      writeTarget(template, node.target, column)
      template
        .text(` ${node.operator === '!=' ? '<>' : node.operator} `)
        .value(parameterText(node.value, node.target.cast))
        .text(`::text::${typeOf(node.target.cast)}, false)`)
      return
    }
    case 'in':
      template.text(node.negated ? 'coalesce(not (' : 'coalesce((')
      writeTarget(template, node.target, column)
      template
        .text(' = any(')
        .value(node.values.map((value) => parameterText(value, node.target.cast)))
        .text(`::text[]::${typeOf(node.target.cast)}[])), false)`)
      return
    case 'like':
      template
        .text(`coalesce((${column} #>> `)
        .value(node.target.path)
        .text(`::text[]) ${node.negated ? 'not ' : ''}${node.caseInsensitive ? 'ilike' : 'like'} `)
      template.value(node.pattern).text('::text, false)')
      return
    case 'null':
      template.text(node.negated ? 'coalesce(' : 'not coalesce(')
      writeJson(template, node.target, column)
      template.text(" <> 'null'::jsonb, false)")
      return
    case 'contains':
      writeArrayAnd(template, node.target, column)
      writeJson(template, node.target, column)
      template.text(' @> ').value(JSON.stringify(node.values)).text('::text::jsonb, false)')
      return
    case 'overlaps':
      writeArrayAnd(template, node.target, column)
      template.text('exists (select 1 from jsonb_array_elements(')
      writeJson(template, node.target, column)
      template
        .text(') as element (value) where element.value = any(')
        .value(node.values.map((value) => JSON.stringify(value)))
        .text('::text[]::jsonb[])), false)')
      return
    case 'timeCompare': {
      const time = timeColumn(node.field, column)
      template
        .text(`${time.nullable ? 'coalesce(' : '('}${time.sql} ${node.operator === '!=' ? '<>' : node.operator} `)
        .value(node.value)
        .text(`::text::timestamptz${time.nullable ? ', false)' : ')'}`)
      return
    }
    case 'timeIn': {
      const time = timeColumn(node.field, column)
      template
        .text(`${time.nullable ? 'coalesce(' : '('}${node.negated ? 'not ' : ''}${time.sql} = any(`)
        .value(node.values)
        .text(`::text[]::timestamptz[])${time.nullable ? ', false)' : ')'}`)
      return
    }
    case 'timeNull':
      template.text(`(${timeColumn(node.field, column).sql} is ${node.negated ? 'not ' : ''}null)`)
      return
  }
}
