// The table of a list view, filled a page at a time: the first page on load, the next ones by
// "Load more", all again when a filter changes. The view supplies its call, its rows and its texts.
import { call } from './api.js'
import { h, replace } from './dom.js'
import type { PageContext } from './types.js'
import { dataTable, errorNotice, loading, loadMoreButton } from './ui.js'

export interface PagedTableSpec<Data extends { nextToken?: string }, Item> {
  /** "spaces": the loading line and "Could not list the spaces". */
  plural: string
  /** The call's name in the debug panel ("List spaces") and the path of the page at `nextToken`. */
  request(nextToken: string | undefined): { action: string; path: string }
  items(data: Data): Item[]
  row(item: Item): HTMLTableRowElement
  /** What stands in the table's place when the server has no such API (404). */
  unavailable(): HTMLElement
  /** What stands in the table's place when there is nothing to list. */
  empty(): HTMLElement
  /** The table's label, its columns, and those a narrow screen hides. */
  table: { label: string; columns: string[]; optional: string[] }
}

export interface PagedTable {
  /** The table, a notice in its place, or the loading line. */
  tableSlot: HTMLElement
  /** The "Load more" button while there is more. */
  moreSlot: HTMLElement
  tbody: HTMLTableSectionElement
  /** The first page again (`reset`), or the next one. */
  load(reset: boolean): Promise<void>
}

export function pagedTable<Data extends { nextToken?: string }, Item>(
  context: PageContext,
  spec: PagedTableSpec<Data, Item>,
): PagedTable {
  let nextToken: string | undefined
  const tableSlot = h('div', null, loading(spec.plural))
  const moreSlot = h('div', { class: 'actions' })
  const tbody = h('tbody')
  const load = async (reset: boolean) => {
    if (reset) nextToken = undefined
    const { action, path } = spec.request(nextToken)
    const result = await call<Data>(action, 'GET', path)
    if (!context.isCurrent()) return
    if (!result.ok || !result.data) {
      replace(
        tableSlot,
        result.status === 404 ? spec.unavailable() : errorNotice(result.error!, `Could not list the ${spec.plural}`),
      )
      moreSlot.replaceChildren()
      return
    }
    if (reset) tbody.replaceChildren()
    for (const item of spec.items(result.data)) tbody.appendChild(spec.row(item))
    nextToken = result.data.nextToken
    const { label, columns, optional } = spec.table
    replace(tableSlot, tbody.children.length === 0 ? spec.empty() : dataTable(label, columns, optional, tbody))
    replace(
      moreSlot,
      loadMoreButton(nextToken, () => load(false)),
    )
  }
  return { tableSlot, moreSlot, tbody, load }
}
