import { invalidArgument } from '../../errors/app-error.js'
import { type CompiledFilter, compileFilter, type MetadataColumn } from './filter-compiler.js'
import { parseFilterText } from './filter-parser.js'
import { FilterError, type FilterNode } from './filter-tree.js'

/** A filter checked and compiled, ready to be placed in a query over memories. */
export interface MetadataFilter {
  tree: FilterNode
  compiled: CompiledFilter
}

/**
 * Parses and compiles the filter text of a request field; syntax and type errors are
 * INVALID_ARGUMENT naming the field and the position.
 */
export function metadataFilter(text: string, field: string, column: MetadataColumn): MetadataFilter {
  try {
    const tree = parseFilterText(text)
    return { tree, compiled: compileFilter(tree, column) }
  } catch (error) {
    if (error instanceof FilterError) throw invalidArgument(field, `is not a valid filter ${error.message}`)
    throw error
  }
}
