import type { Queryable } from '../database.js'

/**
 * A compiled metadata filter (src/domain/filters): SQL text pieces and the values bound between them;
 * strings.length === values.length + 1.
 */
export interface CompiledFilter {
  strings: string[]
  values: unknown[]
}

/** A compiled metadata filter as a postgres.js fragment: its paths and values travel as bound parameters. */
export function filterFragment(sql: Queryable, filter: CompiledFilter) {
  const strings = Object.assign([...filter.strings], { raw: [...filter.strings] }) as unknown as TemplateStringsArray
  return sql(strings, ...(filter.values as never[]))
}
