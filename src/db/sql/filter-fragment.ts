import type { CompiledFilter } from '../../domain/filters/filter-compiler.js'
import type { Queryable } from '../database.js'

/** A compiled metadata filter as a postgres.js fragment: its paths and values travel as bound parameters. */
export function filterFragment(sql: Queryable, filter: CompiledFilter) {
  const strings = Object.assign([...filter.strings], { raw: [...filter.strings] }) as unknown as TemplateStringsArray
  return sql(strings, ...(filter.values as never[]))
}
