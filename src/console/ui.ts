// Shared pieces: copy buttons, confirmation dialogs, notices, badges, dates.
import { type ApiError, call, describeError } from './api.js'
import { type Child, h, replace } from './dom.js'

/** Announces a short message to screen readers and shows it as a toast. */
let statusRegion: HTMLElement | undefined
export function statusElement(): HTMLElement {
  statusRegion ??= h('div', { class: 'toast', role: 'status', 'aria-live': 'polite' })
  return statusRegion
}

let toastTimer: number | undefined
export function announce(message: string): void {
  const region = statusElement()
  region.textContent = message
  region.classList.add('visible')
  window.clearTimeout(toastTimer)
  toastTimer = window.setTimeout(() => region.classList.remove('visible'), 4000)
}

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    // No clipboard API (e.g. plain http on another host): the old way.
    const area = h('textarea', { class: 'visually-hidden', readonly: true, 'aria-hidden': 'true' })
    area.value = text
    document.body.appendChild(area)
    area.select()
    const copied = document.execCommand('copy')
    area.remove()
    return copied
  }
}

export function copyButton(label: string, text: () => string, extra: Record<string, unknown> = {}): HTMLButtonElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'button small',
      ...extra,
      onClick: async () => {
        const copied = await copyText(text())
        button.textContent = copied ? 'Copied' : 'Copy failed'
        announce(copied ? 'Copied to the clipboard' : 'Could not copy; select the text and copy it yourself')
        window.setTimeout(() => (button.textContent = label), 2000)
      },
    },
    label,
  )
  return button
}

export interface ConfirmOptions {
  title: string
  message: Child
  confirmLabel: string
  danger?: boolean
  /** Extra content (e.g. a reason field) shown above the buttons. */
  body?: Child
  /** Element to focus first (default: the cancel button, the safe choice). */
  focus?: HTMLElement
}

/** A modal <dialog>: Escape or Cancel resolves false. Focus returns to where it was. */
export function confirmDialog(options: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const opener = document.activeElement as HTMLElement | null
    const titleId = `dialog-title-${Date.now()}`
    let settled = false
    const close = (answer: boolean) => {
      if (settled) return
      settled = true
      dialog.close()
      dialog.remove()
      opener?.focus()
      resolve(answer)
    }
    const cancel = h('button', { type: 'button', class: 'button', onClick: () => close(false) }, 'Cancel')
    const confirm = h(
      'button',
      { type: 'button', class: options.danger ? 'button danger' : 'button primary', onClick: () => close(true) },
      options.confirmLabel,
    )
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': titleId },
      h('h2', { id: titleId }, options.title),
      h('div', { class: 'dialog-message' }, options.message),
      options.body,
      h('div', { class: 'actions' }, cancel, confirm),
    )
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault()
      close(false)
    })
    document.body.appendChild(dialog)
    dialog.showModal()
    ;(options.focus ?? cancel).focus()
  })
}

/** What to ask before a delete, and what to say after it. */
export interface DeleteSpec {
  confirm: Pick<ConfirmOptions, 'title' | 'message' | 'confirmLabel'>
  /** The debug log's name for the call, e.g. "Delete space". */
  action: string
  path: string
  /** Announced once the item is gone. */
  deleted: string
}

/** Deletes after a (danger) confirmation; the outcome is announced. Answers whether the item is gone. */
export async function confirmAndDelete(spec: DeleteSpec): Promise<boolean> {
  const sure = await confirmDialog({ ...spec.confirm, danger: true })
  if (!sure) return false
  const result = await call(spec.action, 'DELETE', spec.path)
  if (!result.ok) {
    announce(`Not deleted: ${result.error!.message}`)
    return false
  }
  announce(spec.deleted)
  return true
}

export function errorNotice(error: ApiError, prefix = 'The server rejected the request'): HTMLElement {
  return h('div', { class: 'notice error', role: 'alert' }, h('strong', null, `${prefix}: `), describeError(error))
}

export function notice(kind: 'info' | 'warning' | 'success' | 'error', ...children: Child[]): HTMLElement {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : undefined }, ...children)
}

export function loading(what: string): HTMLElement {
  return h('p', { class: 'loading', role: 'status' }, `Loading ${what}…`)
}

export function badge(text: string, tone: 'ok' | 'off' | 'warn' | 'bad' | 'neutral' = 'neutral'): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text)
}

export function labelChips(labels: Record<string, string> | undefined): HTMLElement {
  const entries = Object.entries(labels ?? {})
  if (entries.length === 0) return h('span', { class: 'muted' }, 'none')
  return h(
    'ul',
    { class: 'chips', 'aria-label': 'labels' },
    entries.map(([key, value]) => h('li', { class: 'chip' }, `${key}=${value}`)),
  )
}

const pad = (value: number) => String(value).padStart(2, '0')

/** Local date and time, e.g. 2025-03-01 14:05; the title attribute carries the ISO form. */
export function time(ms: number | string | undefined, empty = 'never'): HTMLElement {
  if (ms === undefined || ms === null || ms === '') return h('span', { class: 'muted' }, empty)
  const date = new Date(Number(ms))
  const text = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, text)
}

/** A page's heading; focused after navigation so keyboard and screen reader users land on it. */
export function pageHeading(text: string, ...actions: Child[]): HTMLElement {
  return h(
    'div',
    { class: 'page-head' },
    h('h2', { tabindex: '-1', class: 'page-title' }, text),
    actions.length ? h('div', { class: 'actions' }, ...actions) : null,
  )
}

export function setBusy(button: HTMLButtonElement, busy: boolean, busyLabel?: string): void {
  button.disabled = busy
  button.setAttribute('aria-busy', String(busy))
  if (busyLabel !== undefined) {
    button.dataset.label ??= button.textContent ?? ''
    button.textContent = busy ? busyLabel : button.dataset.label
  }
}

export function keyValueTable(rows: Array<[string, Child]>): HTMLElement {
  return h(
    'dl',
    { class: 'kv' },
    rows.map(([term, value]) => [h('dt', null, term), h('dd', null, value)]),
  )
}

/** A table with its header row, in a wrapper that scrolls; the `optional` columns are hidden where it is narrow. */
export function dataTable(label: string, columns: string[], optional: string[], tbody: HTMLElement): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table', 'aria-label': label },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((title) =>
            h('th', { scope: 'col', class: optional.includes(title) ? 'optional-col' : undefined }, title),
          ),
        ),
      ),
      tbody,
    ),
  )
}

/** "Load more" while the server says there is more (a next page token), else nothing. */
export function loadMoreButton(nextToken: string | undefined, loadMore: () => unknown): HTMLElement | null {
  return nextToken ? h('button', { type: 'button', class: 'button', onClick: loadMore }, 'Load more') : null
}

/**
 * Removes a table row after its item was deleted. Answers the step that moves the focus to where the
 * row was: the next (or else the previous) row's first link or button, or the page's title.
 */
function removeRow(row: HTMLTableRowElement, root: HTMLElement): () => void {
  const next = (row.nextElementSibling ?? row.previousElementSibling) as HTMLElement | null
  row.remove()
  return () =>
    (next?.querySelector<HTMLElement>('a, button') ?? root.querySelector<HTMLElement>('.page-title'))?.focus()
}

/**
 * A table row's Delete button. Once `remove` answers that the item is gone, its row goes, `afterwards`
 * may redraw the list, and the focus moves to where the row was (see removeRow).
 */
export function deleteRowButton(
  root: HTMLElement,
  remove: () => Promise<boolean>,
  afterwards?: () => unknown,
): HTMLButtonElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'button small danger',
      onClick: async () => {
        if (!(await remove())) return
        const refocus = removeRow(button.closest('tr')!, root)
        if (afterwards) await afterwards()
        refocus()
      },
    },
    'Delete',
  )
  return button
}

/** A list's panel: a head with the list's title and its filters, then the list itself. */
export function listPanel(titleId: string, title: string, filters: Child[], ...content: Child[]): HTMLElement {
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': titleId },
    h('div', { class: 'panel-head' }, h('h3', { id: titleId }, title), h('div', { class: 'filters' }, ...filters)),
    ...content,
  )
}

export function section(title: string, ...children: Child[]): HTMLElement {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
  return h('section', { class: 'panel', 'aria-labelledby': id }, h('h3', { id }, title), ...children)
}

export { replace }
