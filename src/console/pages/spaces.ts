// Spaces and their memories: list, create and delete spaces; a space's embedders with
// their index state; the space's memories with their processing status (refreshed while
// any is still being processed), create, view and delete.
import { call, query } from '../api.js'
import { chunkingFields, describeChunking } from '../chunking-fields.js'
import { type Child, h, replace } from '../dom.js'
import {
  FormErrors,
  field,
  formatLabels,
  groupField,
  input,
  nativeViolations,
  parseLabels,
  select,
  textarea,
} from '../forms.js'
import { listAll } from '../list-all.js'
import type { Memory, MemoryContent, PageContext, Registration, Space, SpaceEmbedder } from '../types.js'
import {
  announce,
  badge,
  confirmDialog,
  errorNotice,
  keyValueTable,
  labelChips,
  loading,
  notice,
  pageHeading,
  section,
  setBusy,
  time,
} from '../ui.js'

const SPACE_PAGE_SIZE = 50
const MEMORY_PAGE_SIZE = 50
/** The server's largest memory page (src/validation/memory.ts MAX_MEMORY_PAGE_SIZE). */
const MAX_MEMORY_PAGE_SIZE = 500
/** How often a page asks again while memories are processing or an embedder is back-filling. */
const REFRESH_INTERVAL_MS = 1500
/** The server's limits (src/validation/memory.ts), so the form says them before sending. */
const MAX_SPACE_NAME_LENGTH = 200
const MAX_RETRIEVAL_WEIGHT = 1000
const MEMORY_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const
const CONTENT_TYPES = ['text/plain', 'text/markdown', 'application/json'] as const

const spaceHref = (spaceId: string) => `#/spaces/${encodeURIComponent(spaceId)}`
const memoryHref = (memory: Pick<Memory, 'spaceId' | 'memoryId'>) =>
  `${spaceHref(memory.spaceId)}/memories/${encodeURIComponent(memory.memoryId)}`
const unfinished = (memory: Memory) => memory.processingStatus === 'PENDING' || memory.processingStatus === 'PROCESSING'

function unavailable(): HTMLElement {
  return notice('info', 'The spaces API is not available on this server (/v1/spaces answered 404).')
}

const STATUS_TONE: Record<Memory['processingStatus'], 'ok' | 'warn' | 'bad' | 'neutral'> = {
  PENDING: 'neutral',
  PROCESSING: 'warn',
  COMPLETED: 'ok',
  FAILED: 'bad',
}

/** The status badge, and for FAILED the reason the server gave. */
export function memoryStatus(memory: Memory): HTMLElement {
  return h(
    'div',
    { class: 'status-cell', 'data-status': memory.processingStatus },
    h(
      'span',
      { class: `badge ${STATUS_TONE[memory.processingStatus]}`, 'data-testid': 'memory-status' },
      memory.processingStatus,
    ),
    memory.processingError
      ? h('p', { class: 'field-error failure', 'data-testid': 'memory-error' }, memory.processingError)
      : null,
  )
}

/** Embedder names by id, for showing a space's embedders; empty when the list cannot be read. */
async function embedderNames(): Promise<Map<string, string>> {
  const all = await listAll<Registration>('List embedders', '/v1/embedders', 'embedders')
  return new Map(all.items.map((item) => [String(item.embedderId), String(item.displayName ?? item.embedderId)]))
}

function embedderState(entry: SpaceEmbedder): Child {
  const { completedMemories, totalMemories, error } = entry.backfillProgress
  return [
    badge(entry.indexState, entry.indexState === 'READY' ? 'ok' : 'warn'),
    entry.indexState !== 'READY' || totalMemories > 0
      ? h('span', { class: 'muted progress-text' }, ` ${completedMemories} / ${totalMemories} memories`)
      : null,
    entry.indexState !== 'READY'
      ? h('progress', { max: Math.max(totalMemories, 1), value: completedMemories, 'aria-label': 'back-fill progress' })
      : null,
    error ? h('p', { class: 'field-error' }, error) : null,
  ]
}

async function deleteSpace(space: Space): Promise<boolean> {
  const sure = await confirmDialog({
    title: `Delete space "${space.name}"?`,
    message: 'Its memories, chunks and vectors are deleted with it. This cannot be undone.',
    confirmLabel: 'Delete space',
    danger: true,
  })
  if (!sure) return false
  const result = await call('Delete space', 'DELETE', `/v1/spaces/${encodeURIComponent(space.spaceId)}`)
  if (!result.ok) {
    announce(`Not deleted: ${result.error!.message}`)
    return false
  }
  announce(`Space "${space.name}" deleted`)
  return true
}

async function deleteMemory(memory: Memory): Promise<boolean> {
  const sure = await confirmDialog({
    title: 'Delete this memory?',
    message: [
      'The memory ',
      h('code', null, memory.memoryId),
      ', its chunks and vectors are deleted. This cannot be undone.',
    ],
    confirmLabel: 'Delete memory',
    danger: true,
  })
  if (!sure) return false
  const result = await call('Delete memory', 'DELETE', `/v1/memories/${encodeURIComponent(memory.memoryId)}`)
  if (!result.ok) {
    announce(`Not deleted: ${result.error!.message}`)
    return false
  }
  announce('Memory deleted')
  return true
}

/** Calls `tick` every REFRESH_INTERVAL_MS while it answers true and the page is still shown. */
function refreshWhile(context: PageContext, tick: () => Promise<boolean>): void {
  const step = async () => {
    if (!context.isCurrent()) return
    if (await tick()) window.setTimeout(step, REFRESH_INTERVAL_MS)
  }
  window.setTimeout(step, REFRESH_INTERVAL_MS)
}

// ---------------------------------------------------------------- list

async function listView(context: PageContext): Promise<void> {
  const { root } = context
  let nextToken: string | undefined
  const tableSlot = h('div', null, loading('spaces'))
  const moreSlot = h('div', { class: 'actions' })
  const tbody = h('tbody')
  const names = await embedderNames()
  if (!context.isCurrent()) return

  const row = (space: Space): HTMLTableRowElement => {
    const tr: HTMLTableRowElement = h(
      'tr',
      { 'data-space-id': space.spaceId },
      h('th', { scope: 'row' }, h('a', { href: spaceHref(space.spaceId) }, space.name)),
      h(
        'td',
        null,
        h(
          'ul',
          { class: 'plain' },
          space.spaceEmbedders.map((entry) =>
            h(
              'li',
              null,
              names.get(entry.embedderId) ?? h('code', { class: 'small' }, entry.embedderId),
              ' ',
              h('span', { class: 'muted' }, `×${entry.defaultRetrievalWeight}`),
              ' ',
              badge(entry.indexState, entry.indexState === 'READY' ? 'ok' : 'warn'),
            ),
          ),
        ),
      ),
      h('td', null, space.publicRead ? badge('public read', 'warn') : badge('private', 'off')),
      h('td', { class: 'optional-col' }, labelChips(space.labels)),
      h('td', { class: 'optional-col' }, time(space.createdAt)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'div',
          { class: 'actions' },
          h('a', { class: 'button small', href: spaceHref(space.spaceId) }, 'Memories'),
          h(
            'button',
            {
              type: 'button',
              class: 'button small danger',
              onClick: async () => {
                if (!(await deleteSpace(space))) return
                const next = (tr.nextElementSibling ?? tr.previousElementSibling) as HTMLElement | null
                tr.remove()
                // The last one gone: say so, as for an empty list.
                if (tbody.children.length === 0) await load(true)
                ;(
                  next?.querySelector<HTMLElement>('a, button') ?? root.querySelector<HTMLElement>('.page-title')
                )?.focus()
              },
            },
            'Delete',
          ),
        ),
      ),
    )
    return tr
  }

  const load = async (reset: boolean) => {
    if (reset) nextToken = undefined
    const result = await call<{ spaces: Space[]; nextToken?: string }>(
      'List spaces',
      'GET',
      `/v1/spaces${query({ maxResults: SPACE_PAGE_SIZE, nextToken })}`,
    )
    if (!context.isCurrent()) return
    if (!result.ok || !result.data) {
      replace(
        tableSlot,
        result.status === 404 ? unavailable() : errorNotice(result.error!, 'Could not list the spaces'),
      )
      moreSlot.replaceChildren()
      return
    }
    if (reset) tbody.replaceChildren()
    for (const space of result.data.spaces) tbody.appendChild(row(space))
    nextToken = result.data.nextToken
    replace(
      tableSlot,
      tbody.children.length === 0
        ? notice('info', 'No spaces yet. A space holds memories and names the embedders that index them.')
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table', 'aria-label': 'Spaces' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['Name', 'Embedders', 'Access', 'Labels', 'Created', 'Actions'].map((title) =>
                    h(
                      'th',
                      { scope: 'col', class: title === 'Labels' || title === 'Created' ? 'optional-col' : undefined },
                      title,
                    ),
                  ),
                ),
              ),
              tbody,
            ),
          ),
    )
    replace(
      moreSlot,
      nextToken ? h('button', { type: 'button', class: 'button', onClick: () => load(false) }, 'Load more') : null,
    )
  }

  root.append(
    pageHeading('Spaces', h('a', { class: 'button primary', href: '#/spaces/new' }, 'Create a space')),
    h(
      'section',
      { class: 'panel', 'aria-label': 'Your spaces' },
      h('div', { class: 'panel-head' }, h('h3', null, 'Your spaces')),
      tableSlot,
      moreSlot,
    ),
  )
  await load(true)
}

// ---------------------------------------------------------------- create

async function createView(context: PageContext): Promise<void> {
  const { root } = context
  const holder = h('div', null, loading('the embedders'))
  root.append(
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/spaces' }, 'Spaces'), ' / '),
    pageHeading('Create a space'),
    holder,
  )
  const embedders = await listAll<Registration>('List embedders', '/v1/embedders', 'embedders')
  if (!context.isCurrent()) return
  if (embedders.error) return replace(holder, errorNotice(embedders.error, 'Could not list the embedders'))
  if (embedders.items.length === 0) {
    return replace(
      holder,
      notice(
        'info',
        'A space needs at least one embedder, and none is registered yet. ',
        h('a', { href: '#/embedders/new' }, 'Register an embedder'),
        ' first.',
      ),
    )
  }

  const errors = new FormErrors()
  const name = field(
    errors,
    { name: 'name', label: 'Name', required: true, hint: 'Unique among your spaces.' },
    input({ maxlength: MAX_SPACE_NAME_LENGTH, autocomplete: 'off' }),
  )
  const boxes = embedders.items.map((item, index) =>
    h('input', {
      type: 'checkbox',
      value: String(item.embedderId),
      checked: index === 0,
      'data-embedder': String(item.displayName),
    }),
  )
  const embedderGroup = groupField(
    errors,
    {
      name: 'spaceEmbedders',
      label: 'Embedders',
      hint: 'At least one. Every memory is embedded by each of them; the weight is its share in retrieval.',
    },
    boxes,
    embedders.items.map((item) => `${item.displayName} (${item.modelIdentifier}, ${item.dimensionality} dimensions)`),
  )
  const weights = boxes.map((box, index) => {
    const weight = input({
      type: 'number',
      min: 0,
      max: MAX_RETRIEVAL_WEIGHT,
      step: 'any',
      value: '1',
      inputmode: 'decimal',
      class: 'weight',
      name: `spaceEmbedders.${index}.defaultRetrievalWeight`,
      'aria-label': `Weight of ${box.dataset.embedder}`,
    })
    box.closest('.choice')!.append(weight)
    weight.disabled = !box.checked
    box.addEventListener('change', () => (weight.disabled = !box.checked))
    return weight
  })
  const chunking = chunkingFields(errors, 'defaultChunkingConfig', {
    inherit: false,
    legend: 'Default chunking',
    hint: 'How memories are cut into chunks unless a memory says otherwise. Empty sizes take the defaults.',
  })
  const publicRead = h('input', { type: 'checkbox', name: 'publicRead' })
  const access = groupField(
    errors,
    { name: 'publicRead', label: 'Access', hint: 'Other users may retrieve from a public space, never write to it.' },
    [publicRead],
    ['Public read'],
  )
  const labels = field(
    errors,
    { name: 'labels', label: 'Labels', hint: 'One key=value per line.' },
    textarea({ rows: 2, spellcheck: 'false', placeholder: 'team=search' }),
  )
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Create space')

  const form: HTMLFormElement = h(
    'form',
    {
      class: 'form',
      novalidate: true,
      'aria-label': 'Create a space',
      onSubmit: async (event: Event) => {
        event.preventDefault()
        const violations = nativeViolations(form)
        const parsedLabels = parseLabels(labels.control.value, 'labels')
        violations.push(...parsedLabels.violations)
        const spaceEmbedders = boxes.flatMap((box, index) =>
          box.checked ? [{ embedderId: box.value, defaultRetrievalWeight: Number(weights[index]!.value || 1) }] : [],
        )
        if (spaceEmbedders.length === 0)
          violations.push({ field: 'spaceEmbedders', description: 'choose at least one embedder' })
        if (violations.length) return errors.showClient(violations)
        errors.clear()
        const body: Record<string, unknown> = {
          name: name.control.value.trim(),
          spaceEmbedders,
          defaultChunkingConfig: chunking.collect(),
          publicRead: publicRead.checked,
        }
        if (Object.keys(parsedLabels.labels).length) body.labels = parsedLabels.labels
        setBusy(submit, true)
        const result = await call<Space>('Create space', 'POST', '/v1/spaces', { body })
        setBusy(submit, false)
        if (!result.ok || !result.data) {
          if (result.status === 404)
            return void errors.show({ ...result.error!, details: [] }, 'The spaces API is not available on this server')
          return void errors.show(result.error!, 'Not created')
        }
        announce(`Space "${result.data.name}" created`)
        context.navigate(spaceHref(result.data.spaceId))
      },
    },
    errors.summary,
    h('fieldset', { class: 'form-section' }, h('legend', null, 'Space'), name.wrapper, labels.wrapper, access),
    h('fieldset', { class: 'form-section embedder-choice' }, h('legend', null, 'Embedders'), embedderGroup),
    chunking.element,
    h('div', { class: 'actions form-end' }, h('a', { class: 'button', href: '#/spaces' }, 'Cancel'), submit),
  )
  replace(holder, h('p', { class: 'muted' }, 'Fields marked * are required.'), form)
}

// ---------------------------------------------------------------- one space and its memories

function memoryForm(context: PageContext, space: Space, onCreated: (memory: Memory) => void): HTMLElement {
  const errors = new FormErrors()
  const content = field(
    errors,
    {
      name: 'originalContent',
      label: 'Content',
      required: true,
      hint: 'The text to remember; it is chunked and embedded in the background.',
    },
    textarea({ rows: 5 }),
  )
  const contentType = field(errors, { name: 'contentType', label: 'Content type' }, select([...CONTENT_TYPES]))
  const metadata = field(
    errors,
    { name: 'metadata', label: 'Metadata (JSON)', hint: 'Optional: a JSON object, searchable with retrieval filters.' },
    textarea({ rows: 3, class: 'mono', spellcheck: 'false', placeholder: '{"source": "notes", "year": 2025}' }),
  )
  const chunking = chunkingFields(errors, 'chunkingConfig', {
    inherit: true,
    legend: 'Chunking',
    hint: `Optional: the space's default is ${describeChunking(space.defaultChunkingConfig)}.`,
  })
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Add memory')
  const form: HTMLFormElement = h(
    'form',
    {
      class: 'form',
      novalidate: true,
      'aria-label': 'Add a memory',
      onSubmit: async (event: Event) => {
        event.preventDefault()
        const violations = nativeViolations(form)
        let parsedMetadata: unknown
        if (metadata.control.value.trim()) {
          try {
            parsedMetadata = JSON.parse(metadata.control.value)
            if (parsedMetadata === null || typeof parsedMetadata !== 'object' || Array.isArray(parsedMetadata))
              violations.push({ field: 'metadata', description: 'must be a JSON object, e.g. {"source": "notes"}' })
          } catch (error) {
            violations.push({ field: 'metadata', description: `not valid JSON: ${(error as Error).message}` })
          }
        }
        if (violations.length) return errors.showClient(violations)
        errors.clear()
        const body: Record<string, unknown> = {
          spaceId: space.spaceId,
          originalContent: content.control.value,
          contentType: contentType.control.value,
        }
        if (parsedMetadata !== undefined) body.metadata = parsedMetadata
        const chunkingConfig = chunking.collect()
        if (chunkingConfig) body.chunkingConfig = chunkingConfig
        setBusy(submit, true)
        const result = await call<Memory>('Create memory', 'POST', '/v1/memories', { body })
        setBusy(submit, false)
        if (!context.isCurrent()) return
        if (!result.ok || !result.data) return void errors.show(result.error!, 'Not added')
        content.control.value = ''
        metadata.control.value = ''
        announce('Memory added; it is processed in the background')
        onCreated(result.data)
      },
    },
    errors.summary,
    content.wrapper,
    h('div', { class: 'row' }, contentType.wrapper, metadata.wrapper),
    h('details', { class: 'chunking-details' }, h('summary', null, 'Chunking (optional)'), chunking.element),
    h('div', { class: 'actions' }, submit),
  )
  return form
}

function memoriesPanel(
  context: PageContext,
  space: Space,
): { element: HTMLElement; add(memory: Memory): void; load(): Promise<void> } {
  const { root } = context
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
          h(
            'button',
            {
              type: 'button',
              class: 'button small danger',
              onClick: async () => {
                if (!(await deleteMemory(memory))) return
                const next = (tr.nextElementSibling ?? tr.previousElementSibling) as HTMLElement | null
                tr.remove()
                shown.delete(memory.memoryId)
                render()
                ;(
                  next?.querySelector<HTMLElement>('a, button') ?? root.querySelector<HTMLElement>('.page-title')
                )?.focus()
              },
            },
            'Delete',
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
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table', 'aria-label': 'Memories' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['Memory', 'Status', 'Chunks', 'Type', 'Metadata', 'Created', 'Actions'].map((title) =>
                    h(
                      'th',
                      { scope: 'col', class: title === 'Type' || title === 'Created' ? 'optional-col' : undefined },
                      title,
                    ),
                  ),
                ),
              ),
              tbody,
            ),
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
    const result = await call<{ memories: Memory[] }>(
      'Refresh memories',
      'GET',
      `/v1/spaces/${encodeURIComponent(space.spaceId)}/memories${query({ maxResults: Math.min(Math.max(shown.size, MEMORY_PAGE_SIZE), MAX_MEMORY_PAGE_SIZE), sortOrder: 'DESCENDING' })}`,
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
    const result = await call<{ memories: Memory[]; nextToken?: string }>(
      'List memories',
      'GET',
      `/v1/spaces/${encodeURIComponent(space.spaceId)}/memories${query({ maxResults: MEMORY_PAGE_SIZE, sortOrder: 'DESCENDING', statusFilter: statusFilter || undefined, nextToken })}`,
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
      nextToken ? h('button', { type: 'button', class: 'button', onClick: () => load(false) }, 'Load more') : null,
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
  const element = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'memories-title' },
    h(
      'div',
      { class: 'panel-head' },
      h('h3', { id: 'memories-title' }, 'Memories'),
      h(
        'div',
        { class: 'filters' },
        h('div', { class: 'inline-field' }, h('label', { for: 'status-filter' }, 'Status'), filter),
        h('button', { type: 'button', class: 'button small', onClick: () => load(true) }, 'Refresh'),
      ),
    ),
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

/** A space's embedders with their index state; for the owner, add one (back-filled in the background) or remove one. */
function embeddersPanel(
  context: PageContext,
  initial: Space,
  embedders: Registration[],
  canEdit: boolean,
): HTMLElement {
  const names = new Map(embedders.map((item) => [String(item.embedderId), String(item.displayName ?? item.embedderId)]))
  const path = `/v1/spaces/${encodeURIComponent(initial.spaceId)}`
  let space = initial
  let following = false
  const tableSlot = h('div')
  const formSlot = h('div')

  const removeButton = (entry: SpaceEmbedder) =>
    h(
      'button',
      {
        type: 'button',
        class: 'button small danger',
        onClick: async () => {
          const name = names.get(entry.embedderId) ?? entry.embedderId
          const sure = await confirmDialog({
            title: `Remove "${name}" from this space?`,
            message: 'Its vectors for this space are deleted; retrieval stops using it. The memories stay.',
            confirmLabel: 'Remove embedder',
            danger: true,
          })
          if (!sure) return
          const result = await call<Space>('Remove embedder from space', 'POST', `${path}:removeEmbedder`, {
            body: { embedderId: entry.embedderId },
          })
          if (!result.ok || !result.data) return announce(`Not removed: ${result.error!.message}`)
          announce(`"${name}" removed from the space`)
          show(result.data)
        },
      },
      'Remove',
    )

  const table = () =>
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table', 'aria-label': 'Embedders of this space' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Embedder', 'Weight', 'Index', 'ID', canEdit ? 'Actions' : null]
              .filter(Boolean)
              .map((title) => h('th', { scope: 'col', class: title === 'ID' ? 'optional-col' : undefined }, title)),
          ),
        ),
        h(
          'tbody',
          null,
          space.spaceEmbedders.map((entry) =>
            h(
              'tr',
              { 'data-embedder-id': entry.embedderId },
              h(
                'th',
                { scope: 'row' },
                names.has(entry.embedderId)
                  ? h('a', { href: `#/embedders/${encodeURIComponent(entry.embedderId)}` }, names.get(entry.embedderId))
                  : h('span', { class: 'muted' }, 'not readable'),
              ),
              h('td', null, String(entry.defaultRetrievalWeight)),
              h('td', { 'data-col': 'index' }, embedderState(entry)),
              h('td', { class: 'optional-col' }, h('code', { class: 'small' }, entry.embedderId)),
              canEdit
                ? h(
                    'td',
                    { class: 'row-actions' },
                    space.spaceEmbedders.length > 1
                      ? removeButton(entry)
                      : h('span', { class: 'muted small' }, 'the only one'),
                  )
                : null,
            ),
          ),
        ),
      ),
    )

  const addForm = (): HTMLElement | null => {
    const candidates = embedders.filter(
      (item) => !space.spaceEmbedders.some((entry) => entry.embedderId === item.embedderId),
    )
    if (candidates.length === 0) return null
    const errors = new FormErrors()
    const embedder = field(
      errors,
      { name: 'embedderId', label: 'Embedder to add' },
      select(
        candidates.map((item): [string, string] => [
          String(item.embedderId),
          `${item.displayName} (${item.dimensionality} dimensions)`,
        ]),
      ),
    )
    const weight = field(
      errors,
      { name: 'defaultRetrievalWeight', label: 'Weight' },
      input({ type: 'number', min: 0, max: MAX_RETRIEVAL_WEIGHT, step: 'any', value: '1', inputmode: 'decimal' }),
    )
    const submit = h('button', { type: 'submit', class: 'button' }, 'Add embedder')
    const form: HTMLFormElement = h(
      'form',
      {
        class: 'form add-embedder',
        novalidate: true,
        'aria-label': 'Add an embedder',
        onSubmit: async (event: Event) => {
          event.preventDefault()
          const violations = nativeViolations(form)
          if (violations.length) return errors.showClient(violations)
          errors.clear()
          setBusy(submit, true)
          const result = await call<Space>('Add embedder to space', 'POST', `${path}:addEmbedder`, {
            body: { embedderId: embedder.control.value, defaultRetrievalWeight: Number(weight.control.value || 1) },
          })
          setBusy(submit, false)
          if (!context.isCurrent()) return
          if (!result.ok || !result.data) return void errors.show(result.error!, 'Not added')
          announce('Embedder added; vectors for the existing memories are written in the background')
          show(result.data)
        },
      },
      errors.summary,
      h('div', { class: 'row' }, embedder.wrapper, weight.wrapper),
      h(
        'p',
        { class: 'hint' },
        "The space's existing memories are embedded with it in the background; retrieval uses it once READY.",
      ),
      h('div', { class: 'actions' }, submit),
    )
    return form
  }

  /** Back-filling embedders are followed until READY. */
  const follow = () => {
    if (following || space.spaceEmbedders.every((entry) => entry.indexState === 'READY')) return
    following = true
    refreshWhile(context, async () => {
      const again = await call<Space>('Get space', 'GET', path)
      if (!again.ok || !again.data || !context.isCurrent()) return (following = false)
      space = again.data
      replace(tableSlot, table())
      following = space.spaceEmbedders.some((entry) => entry.indexState !== 'READY')
      return following
    })
  }

  const show = (fresh: Space) => {
    space = fresh
    replace(tableSlot, table())
    if (canEdit) replace(formSlot, addForm())
    follow()
  }
  show(initial)
  return h('div', null, tableSlot, formSlot)
}

/** The space's settings; for the owner, an Edit form for what can change (name, access, labels). */
function settingsPanel(context: PageContext, space: Space, own: boolean, canEdit: boolean): HTMLElement {
  const view = keyValueTable([
    ['ID', h('code', null, space.spaceId)],
    ['Access', space.publicRead ? 'Public read: other users may retrieve from it' : 'Private'],
    ['Default chunking', describeChunking(space.defaultChunkingConfig)],
    ['Labels', labelChips(space.labels)],
    ['Owner', own ? 'you' : h('code', null, space.ownerId)],
    ['Created', time(space.createdAt)],
  ])
  if (!canEdit) return section('Settings', view)
  const errors = new FormErrors({ replaceLabels: 'labels' })
  const name = field(
    errors,
    { name: 'name', label: 'Name', required: true },
    input({ maxlength: MAX_SPACE_NAME_LENGTH, value: space.name, autocomplete: 'off' }),
  )
  const publicRead = h('input', { type: 'checkbox', name: 'publicRead', checked: space.publicRead })
  const access = groupField(
    errors,
    { name: 'publicRead', label: 'Access', hint: 'Other users may retrieve from a public space, never write to it.' },
    [publicRead],
    ['Public read'],
  )
  const labels = field(
    errors,
    { name: 'labels', label: 'Labels', hint: 'One key=value per line.' },
    textarea({ rows: 2, value: formatLabels(space.labels), spellcheck: 'false' }),
  )
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Save changes')
  const editButton = h(
    'button',
    { type: 'button', class: 'button small', 'aria-expanded': 'false', onClick: () => toggle(true) },
    'Edit',
  )
  const toggle = (editing: boolean) => {
    view.hidden = editing
    form.hidden = !editing
    editButton.hidden = editing
    editButton.setAttribute('aria-expanded', String(editing))
    if (editing) name.control.focus()
    else editButton.focus()
  }
  const form: HTMLFormElement = h(
    'form',
    {
      class: 'form',
      novalidate: true,
      hidden: true,
      'aria-label': 'Edit space',
      onSubmit: async (event: Event) => {
        event.preventDefault()
        const violations = nativeViolations(form)
        const parsedLabels = parseLabels(labels.control.value, 'labels')
        violations.push(...parsedLabels.violations)
        if (violations.length) return errors.showClient(violations)
        errors.clear()
        // Only what changed; labels are replaced as a whole.
        const body: Record<string, unknown> = {}
        if (name.control.value.trim() !== space.name) body.name = name.control.value.trim()
        if (publicRead.checked !== space.publicRead) body.publicRead = publicRead.checked
        if (JSON.stringify(parsedLabels.labels) !== JSON.stringify(space.labels))
          body.replaceLabels = parsedLabels.labels
        if (Object.keys(body).length === 0) return toggle(false)
        setBusy(submit, true)
        const result = await call<Space>('Update space', 'PUT', `/v1/spaces/${encodeURIComponent(space.spaceId)}`, {
          body,
        })
        setBusy(submit, false)
        if (!result.ok || !result.data) return void errors.show(result.error!)
        announce(`Saved "${result.data.name}"`)
        context.reload()
      },
    },
    errors.summary,
    name.wrapper,
    access,
    labels.wrapper,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'button', onClick: () => toggle(false) }, 'Cancel'),
      submit,
    ),
  )
  const titleId = 'settings-title'
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': titleId },
    h('div', { class: 'panel-head' }, h('h3', { id: titleId }, 'Settings'), editButton),
    view,
    form,
  )
}

async function spaceView(context: PageContext, spaceId: string): Promise<void> {
  const { root } = context
  const body = h('div', null, loading('the space'))
  root.append(body)
  const [result, embedders] = await Promise.all([
    call<Space>('Get space', 'GET', `/v1/spaces/${encodeURIComponent(spaceId)}`),
    listAll<Registration>('List embedders', '/v1/embedders', 'embedders'),
  ])
  if (!context.isCurrent()) return
  if (!result.ok || !result.data) {
    replace(
      body,
      pageHeading('Spaces'),
      errorNotice(result.error!, 'Could not read the space'),
      h('p', null, h('a', { href: '#/spaces' }, 'Back to the spaces')),
    )
    return
  }
  const space = result.data
  const own = space.ownerId === context.me.userId
  const canEdit = own || context.me.role === 'ADMIN'
  const memories = memoriesPanel(context, space)
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        if (await deleteSpace(space)) context.navigate('#/spaces')
      },
    },
    'Delete space',
  )
  replace(
    body,
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/spaces' }, 'Spaces'), ' / '),
    pageHeading(
      space.name,
      h(
        'a',
        { class: 'button', href: `#/retrieve?space=${encodeURIComponent(space.spaceId)}` },
        'Retrieve from this space',
      ),
      canEdit ? deleteButton : null,
    ),
    h(
      'div',
      { class: 'two-col' },
      settingsPanel(context, space, own, canEdit),
      section('Embedders', embeddersPanel(context, space, embedders.items, canEdit)),
    ),
    canEdit
      ? section(
          'Add a memory',
          memoryForm(context, space, (memory) => memories.add(memory)),
        )
      : null,
    memories.element,
  )
  await memories.load()
}

// ---------------------------------------------------------------- one memory

async function memoryView(context: PageContext, spaceId: string, memoryId: string): Promise<void> {
  const { root } = context
  const body = h('div', null, loading('the memory'))
  root.append(body)
  const path = `/v1/memories/${encodeURIComponent(memoryId)}`
  const [result, content, space] = await Promise.all([
    call<Memory>('Get memory', 'GET', path),
    call<MemoryContent>('Get memory content', 'GET', `${path}/content`),
    call<Space>('Get space', 'GET', `/v1/spaces/${encodeURIComponent(spaceId)}`),
  ])
  if (!context.isCurrent()) return
  const back = h(
    'p',
    { class: 'breadcrumb' },
    h('a', { href: '#/spaces' }, 'Spaces'),
    ' / ',
    h('a', { href: spaceHref(spaceId) }, space.data?.name ?? 'Space'),
    ' / ',
  )
  if (!result.ok || !result.data) {
    replace(body, back, pageHeading('Memory'), errorNotice(result.error!, 'Could not read the memory'))
    return
  }
  const memory = result.data
  const statusSlot = h('div', null, memoryStatus(memory))
  const chunksSlot = h('span', null, String(memory.chunkCount))
  if (unfinished(memory)) {
    refreshWhile(context, async () => {
      const again = await call<Memory>('Get memory', 'GET', path)
      if (!again.ok || !again.data || !context.isCurrent()) return false
      replace(statusSlot, memoryStatus(again.data))
      chunksSlot.textContent = String(again.data.chunkCount)
      return unfinished(again.data)
    })
  }
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        if (await deleteMemory(memory)) context.navigate(spaceHref(memory.spaceId))
      },
    },
    'Delete memory',
  )
  replace(
    body,
    back,
    pageHeading('Memory', deleteButton),
    section(
      'Details',
      keyValueTable([
        ['ID', h('code', null, memory.memoryId)],
        ['Status', statusSlot],
        ['Chunks', chunksSlot],
        ['Content type', memory.contentType],
        ['Chunking', describeChunking(memory.chunkingConfig)],
        [
          'Metadata',
          Object.keys(memory.metadata).length
            ? h('pre', { class: 'code small' }, JSON.stringify(memory.metadata, null, 2))
            : h('span', { class: 'muted' }, 'none'),
        ],
        ['SHA-256', h('code', { class: 'small' }, memory.originalContentSha256)],
        ['Created', time(memory.createdAt)],
      ]),
    ),
    section(
      'Content',
      content.ok && content.data
        ? h(
            'pre',
            { class: 'content', 'data-testid': 'memory-content', tabindex: '0', 'aria-label': 'memory content' },
            content.data.originalContent,
          )
        : errorNotice(content.error!, 'Could not read the content'),
    ),
  )
}

export async function spacesPage(context: PageContext): Promise<void> {
  const [first, second, third] = context.params
  if (!first) return listView(context)
  if (first === 'new') return createView(context)
  if (second === 'memories' && third) return memoryView(context, first, third)
  return spaceView(context, first)
}
