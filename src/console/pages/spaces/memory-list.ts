// The memories panel of a space: newest first, filtered by status, refreshed while any shown
// memory is still being processed.
import { MAX_MEMORY_PAGE_SIZE } from '../../../validation/limits.js'
import { call, query } from '../../api.js'
import { h, replace } from '../../dom.js'
import { select } from '../../forms.js'
import type { Memory, PageContext, Space } from '../../types.js'
import { dataTable, deleteRowButton, errorNotice, listPanel, loading, loadMoreButton, notice, time } from '../../ui.js'
import { deleteMemory, memoryHref, memoryStatus, refreshWhile, unfinished } from './shared.js'

const MEMORY_PAGE_SIZE = 50
const MEMORY_STATUSES = ['PENDING', 'EXTRACTING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const

export function memoriesPanel(
  context: PageContext,
  space: Space,
): { element: HTMLElement; add(memory: Memory): void; load(): Promise<void> } {
  const { root } = context
  const memoriesPath = `/v1/spaces/${encodeURIComponent(space.spaceId)}/memories`
  let statusFilter = ''
  let nextToken: string | undefined
  let refreshing = false
  const shown = new Map<string, { memory: Memory; row: HTMLTableRowElement }>()
  const tbody = h('tbody')
  const tableSlot = h('div', null, loading('memories'))
  const moreSlot = h('div', { class: 'actions' })
  const summary = h('p', { class: 'muted', 'aria-live': 'polite', 'data-testid': 'memory-summary' })

  const row = (memory: Memory): HTMLTableRowElement => {
    const tr: HTMLTableRowElement = h(
      'tr',
      { 'data-memory-id': memory.memoryId },
      h(
        'th',
        { scope: 'row' },
        h(
          'a',
          { href: memoryHref(memory), title: memory.memoryId },
          h('code', { class: 'small' }, memory.memoryId.slice(0, 8)),
          '…',
        ),
      ),
      h('td', { 'data-col': 'status' }, memoryStatus(memory)),
      h('td', { 'data-col': 'chunks' }, String(memory.chunkCount)),
      h('td', { class: 'wrap', 'data-col': 'file' }, memory.fileName ?? h('span', { class: 'muted' }, 'text')),
      h('td', { class: 'optional-col' }, memory.contentType),
      h(
        'td',
        { class: 'wrap' },
        Object.keys(memory.metadata).length
          ? h('code', { class: 'small' }, JSON.stringify(memory.metadata))
          : h('span', { class: 'muted' }, 'none'),
      ),
      h('td', { class: 'optional-col' }, time(memory.createdAt)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'div',
          { class: 'actions' },
          h('a', { class: 'button small', href: memoryHref(memory) }, 'View'),
          deleteRowButton(
            root,
            () => deleteMemory(memory),
            () => {
              shown.delete(memory.memoryId)
              render()
            },
          ),
        ),
      ),
    )
    return tr
  }

  const put = (memory: Memory, where: 'start' | 'end' | 'replace') => {
    const existing = shown.get(memory.memoryId)
    const fresh = row(memory)
    if (existing) existing.row.replaceWith(fresh)
    else if (where === 'start') tbody.prepend(fresh)
    else tbody.appendChild(fresh)
    shown.set(memory.memoryId, { memory, row: fresh })
  }

  const render = () => {
    const counts = new Map<string, number>()
    for (const { memory } of shown.values())
      counts.set(memory.processingStatus, (counts.get(memory.processingStatus) ?? 0) + 1)
    summary.textContent =
      shown.size === 0
        ? ''
        : `${shown.size} shown: ${MEMORY_STATUSES.filter((status) => counts.has(status))
            .map((status) => `${counts.get(status)} ${status.toLowerCase()}`)
            .join(', ')}${[...shown.values()].some(({ memory }) => unfinished(memory)) ? ' (refreshing)' : ''}`
    replace(
      tableSlot,
      shown.size === 0
        ? notice(
            'info',
            statusFilter
              ? `No ${statusFilter.toLowerCase()} memories in this space.`
              : 'No memories in this space yet. Add one above.',
          )
        : dataTable(
            'Memories',
            ['Memory', 'Status', 'Chunks', 'File', 'Type', 'Metadata', 'Created', 'Actions'],
            ['Type', 'Created'],
            tbody,
          ),
    )
  }

  /**
   * The newest memories again in one call, while any shown one is unfinished. No status
   * filter: a PENDING memory shown under "Pending" must be seen once it is COMPLETED. It
   * stops when no unfinished memory is among the answer (the Refresh button reads all again).
   */
  const refresh = async (): Promise<boolean> => {
    const stop = () => {
      refreshing = false
      render()
      return false
    }
    if (![...shown.values()].some(({ memory }) => unfinished(memory))) return stop()
    // Every shown memory, as far as the server's largest page reaches.
    const pageSize = Math.min(Math.max(shown.size, MEMORY_PAGE_SIZE), MAX_MEMORY_PAGE_SIZE)
    const result = await call<{ memories: Memory[] }>(
      'Refresh memories',
      'GET',
      `${memoriesPath}${query({ maxResults: pageSize, sortOrder: 'DESCENDING' })}`,
    )
    if (!context.isCurrent()) return false
    if (!result.ok || !result.data) return stop()
    const seen = result.data.memories.filter((memory) => shown.has(memory.memoryId))
    for (const memory of seen) put(memory, 'replace')
    if (!seen.some(unfinished)) return stop()
    render()
    return true
  }
  const startRefreshing = () => {
    if (refreshing || ![...shown.values()].some(({ memory }) => unfinished(memory))) return
    refreshing = true
    refreshWhile(context, refresh)
  }

  const load = async (reset = true) => {
    if (reset) nextToken = undefined
    const page = query({
      maxResults: MEMORY_PAGE_SIZE,
      sortOrder: 'DESCENDING',
      statusFilter: statusFilter || undefined,
      nextToken,
    })
    const result = await call<{ memories: Memory[]; nextToken?: string }>(
      'List memories',
      'GET',
      `${memoriesPath}${page}`,
    )
    if (!context.isCurrent()) return
    if (!result.ok || !result.data) {
      replace(tableSlot, errorNotice(result.error!, 'Could not list the memories'))
      moreSlot.replaceChildren()
      return
    }
    if (reset) {
      tbody.replaceChildren()
      shown.clear()
    }
    for (const memory of result.data.memories) put(memory, 'end')
    nextToken = result.data.nextToken
    render()
    replace(
      moreSlot,
      loadMoreButton(nextToken, () => load(false)),
    )
    startRefreshing()
  }

  const filter = select(
    [
      ['', 'All statuses'],
      ...MEMORY_STATUSES.map((status): [string, string] => [status, status[0] + status.slice(1).toLowerCase()]),
    ],
    {
      id: 'status-filter',
      onChange: () => {
        statusFilter = filter.value
        void load(true)
      },
    },
  )
  const element = listPanel(
    'memories-title',
    'Memories',
    [
      h('div', { class: 'inline-field' }, h('label', { for: 'status-filter' }, 'Status'), filter),
      h('button', { type: 'button', class: 'button small', onClick: () => load(true) }, 'Refresh'),
    ],
    summary,
    tableSlot,
    moreSlot,
  )
  return {
    element,
    load,
    add(memory) {
      if (statusFilter && statusFilter !== memory.processingStatus) return
      put(memory, 'start')
      render()
      startRefreshing()
    },
  }
}
