// API keys: create (labels, expiry; the raw key shown once), list, activate/deactivate,
// edit labels, delete with confirmation. Admins can pick whose keys they manage.
import { MAX_LABEL_KEY_LENGTH, MAX_LABELS, MAX_PAGE_SIZE } from '../../validation/limits.js'
import { type ApiResult, call, describeError, query } from '../api.js'
import { h, replace } from '../dom.js'
import { FormErrors, field, formatLabels, input, parseLabels, select, textarea } from '../forms.js'
import { session } from '../session.js'
import type { ApiKey, PageContext, User } from '../types.js'
import {
  announce,
  badge,
  confirmDialog,
  copyButton,
  dataTable,
  errorNotice,
  labelChips,
  listPanel,
  loading,
  loadMoreButton,
  notice,
  pageHeading,
  section,
  setBusy,
  time,
} from '../ui.js'

const PAGE_SIZE = 50
const LABELS_HINT = `One key=value per line. Keys: 1-${MAX_LABEL_KEY_LENGTH} of a-z 0-9 . _ -; at most ${MAX_LABELS} labels.`

const isSessionKey = (key: ApiKey) => session.apiKey?.slice(0, key.keyPrefix.length) === key.keyPrefix

function expiryCell(key: ApiKey): HTMLElement {
  if (key.expiresAt === undefined) return h('span', { class: 'muted' }, 'never')
  const expired = Number(key.expiresAt) <= Date.now()
  return h('span', null, time(key.expiresAt), expired ? [' ', badge('expired', 'bad')] : null)
}

/** A modal form for a key's labels; resolves with the updated key, or undefined if cancelled. */
function editLabelsDialog(key: ApiKey): Promise<ApiKey | undefined> {
  return new Promise((resolve) => {
    const opener = document.activeElement as HTMLElement | null
    const errors = new FormErrors({ replaceLabels: 'labels' })
    const labels = field(
      errors,
      { name: 'labels', label: 'Labels', hint: LABELS_HINT },
      textarea({ rows: 5, value: formatLabels(key.labels), spellcheck: 'false' }),
    )
    const save = h('button', { type: 'submit', class: 'button primary' }, 'Save labels')
    const finish = (result: ApiKey | undefined) => {
      dialog.close()
      dialog.remove()
      opener?.focus()
      resolve(result)
    }
    const form = h(
      'form',
      {
        class: 'form',
        novalidate: true,
        onSubmit: async (event: Event) => {
          event.preventDefault()
          const parsed = parseLabels(labels.control.value, 'labels')
          if (parsed.violations.length) return errors.showClient(parsed.violations)
          setBusy(save, true)
          const result = await call<ApiKey>(
            'Edit API key labels',
            'PUT',
            `/v1/apikeys/${encodeURIComponent(key.apiKeyId)}`,
            { body: { replaceLabels: parsed.labels } },
          )
          setBusy(save, false)
          if (!result.ok) return void errors.show(result.error!)
          finish(result.data)
        },
      },
      errors.summary,
      labels.wrapper,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'button', onClick: () => finish(undefined) }, 'Cancel'),
        save,
      ),
    )
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': 'labels-dialog-title' },
      h('h2', { id: 'labels-dialog-title' }, `Labels of ${key.keyPrefix}…`),
      form,
    )
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault()
      finish(undefined)
    })
    document.body.appendChild(dialog)
    dialog.showModal()
    labels.control.focus()
  })
}

/** What the pieces of the page share: whose keys are shown, the filter, and the page's slots. */
interface KeysView {
  context: PageContext
  ownerId: string
  statusFilter: string
  nextToken: string | undefined
  tbody: HTMLTableSectionElement
  tableSlot: HTMLElement
  moreSlot: HTMLElement
  newKeySlot: HTMLElement
  /** Where focus goes when the row it was in is gone. */
  createButton: HTMLButtonElement
}

export async function apiKeysPage(context: PageContext): Promise<void> {
  const { root, me } = context
  const view: KeysView = {
    context,
    ownerId: (me.role === 'ADMIN' && context.query.get('owner')) || me.userId,
    statusFilter: context.query.get('status') ?? '',
    nextToken: undefined,
    tbody: h('tbody'),
    tableSlot: h('div', null, loading('API keys')),
    moreSlot: h('div', { class: 'actions' }),
    newKeySlot: h('div'),
    createButton: h('button', { type: 'submit', class: 'button primary' }, 'Create API key'),
  }
  const owner = await ownerControls(view)
  if (!context.isCurrent()) return
  root.append(
    pageHeading('API keys'),
    h('p', { class: 'muted' }, owner.note),
    section('Create an API key', createKeyForm(view)),
    view.newKeySlot,
    listPanel(
      'keys-title',
      'Keys',
      [
        owner.picker,
        h('div', { class: 'inline-field' }, h('label', { for: 'status-filter' }, 'Status'), statusFilterSelect(view)),
      ],
      view.tableSlot,
      view.moreSlot,
    ),
  )
  await loadKeys(view, true)
}

/** Labels and expiry; on success the raw key is shown once and the key tops the list. */
function createKeyForm(view: KeysView): HTMLFormElement {
  const { me } = view.context
  const errors = new FormErrors()
  const labels = field(
    errors,
    { name: 'labels', label: 'Labels', hint: LABELS_HINT },
    textarea({ rows: 3, placeholder: 'env=dev\nteam=search', spellcheck: 'false' }),
  )
  const expires = field(
    errors,
    {
      name: 'expiresAt',
      label: 'Expires at (optional)',
      hint: 'Your local time. Leave empty for a key that does not expire.',
    },
    input({ type: 'datetime-local' }),
  )
  const createButton = view.createButton
  return h(
    'form',
    {
      class: 'form',
      novalidate: true,
      'aria-label': 'Create an API key',
      onSubmit: async (event: Event) => {
        event.preventDefault()
        errors.clear()
        const parsed = parseLabels(labels.control.value, 'labels')
        if (parsed.violations.length) return errors.showClient(parsed.violations)
        const body: Record<string, unknown> = {}
        if (Object.keys(parsed.labels).length) body.labels = parsed.labels
        if (expires.control.value) {
          const at = new Date(expires.control.value).getTime()
          if (Number.isNaN(at))
            return errors.showClient([{ field: 'expiresAt', description: 'not a valid date and time' }])
          body.expiresAt = at
        }
        if (view.ownerId !== me.userId) body.ownerId = view.ownerId
        setBusy(createButton, true, 'Creating…')
        const result = await call<{ apiKeyMetadata: ApiKey; rawApiKey: string }>(
          'Create API key',
          'POST',
          '/v1/apikeys',
          { body },
        )
        setBusy(createButton, false, 'Create API key')
        if (!result.ok || !result.data) return void errors.show(result.error!)
        labels.control.value = ''
        expires.control.value = ''
        showNewKey(view, result.data.rawApiKey, result.data.apiKeyMetadata)
        // Shown at the top of the list without listing again, so the create stays the newest debug entry.
        const created = result.data.apiKeyMetadata
        if (view.tbody.isConnected && (!view.statusFilter || view.statusFilter === created.status))
          view.tbody.prepend(keyRow(view, created))
        else if (!view.tbody.isConnected) await loadKeys(view, true)
      },
    },
    errors.summary,
    h('div', { class: 'row' }, labels.wrapper, expires.wrapper),
    h('div', { class: 'actions' }, createButton),
  )
}

/** The raw key, once, with a copy button; hidden again on request. */
function showNewKey(view: KeysView, raw: string, key: ApiKey): void {
  const id = 'new-key-value'
  replace(
    view.newKeySlot,
    h(
      'section',
      { class: 'panel one-time', 'aria-labelledby': 'new-key-title', 'data-testid': 'new-key' },
      h('h3', { id: 'new-key-title', tabindex: '-1' }, `New API key ${key.keyPrefix}…`),
      h(
        'div',
        { class: 'notice warning', role: 'alert' },
        h('strong', null, 'Copy this key now. '),
        'It is shown only once; the server keeps only a hash of it.',
      ),
      h('label', { for: id }, 'API key'),
      h(
        'div',
        { class: 'copy-row' },
        h('input', { id, type: 'text', class: 'secret mono', readonly: true, value: raw, spellcheck: 'false' }),
        copyButton('Copy key', () => raw),
      ),
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'button',
            onClick: () => {
              view.newKeySlot.replaceChildren()
              view.createButton.focus()
              announce('The new key is no longer shown')
            },
          },
          'Done: hide the key',
        ),
      ),
    ),
  )
  view.newKeySlot.querySelector<HTMLElement>('h3')?.focus()
}

function keyRow(view: KeysView, key: ApiKey): HTMLTableRowElement {
  const active = key.status === 'ACTIVE'
  const mine = isSessionKey(key)
  const tr: HTMLTableRowElement = h(
    'tr',
    { 'data-key-id': key.apiKeyId, 'data-key-prefix': key.keyPrefix },
    h(
      'th',
      { scope: 'row' },
      h('code', null, `${key.keyPrefix}…`),
      mine ? h('span', { class: 'tag' }, 'this session') : null,
    ),
    h('td', { 'data-col': 'status' }, badge(active ? 'Active' : 'Inactive', active ? 'ok' : 'off')),
    h('td', null, labelChips(key.labels)),
    h('td', null, expiryCell(key)),
    h('td', null, time(key.lastUsedAt)),
    h('td', { class: 'optional-col' }, time(key.createdAt)),
  )
  const actions = [statusButton(view, key, tr), editLabelsButton(view, key, tr), deleteButton(view, key, tr)]
  tr.append(h('td', { class: 'row-actions' }, h('div', { class: 'actions' }, ...actions)))
  return tr
}

/** Activate or deactivate; deactivating the session's own key asks first, since it signs the console out. */
function statusButton(view: KeysView, key: ApiKey, tr: HTMLTableRowElement): HTMLButtonElement {
  const active = key.status === 'ACTIVE'
  const toggle = rowButton({ action: 'toggle-status', label: active ? 'Deactivate' : 'Activate' }, async () => {
    if (active && isSessionKey(key)) {
      const sure = await confirmDialog({
        title: 'Deactivate the key you are signed in with?',
        message: 'This console uses this key. Deactivating it signs you out at once.',
        confirmLabel: 'Deactivate and sign out',
        danger: true,
      })
      if (!sure) return
    }
    setBusy(toggle, true)
    const result = await call<ApiKey>(
      active ? 'Deactivate API key' : 'Activate API key',
      'PUT',
      `/v1/apikeys/${encodeURIComponent(key.apiKeyId)}`,
      { body: { status: active ? 'INACTIVE' : 'ACTIVE' } },
    )
    if (!result.ok || !result.data) {
      setBusy(toggle, false)
      return announceError(view, result)
    }
    replaceRow(tr, keyRow(view, result.data), 'toggle-status')
    announce(`${key.keyPrefix}… is now ${result.data.status === 'ACTIVE' ? 'active' : 'inactive'}`)
  })
  return toggle
}

function editLabelsButton(view: KeysView, key: ApiKey, tr: HTMLTableRowElement): HTMLButtonElement {
  return rowButton({ action: 'edit-labels', label: 'Edit labels' }, async () => {
    const updated = await editLabelsDialog(key)
    if (updated) {
      replaceRow(tr, keyRow(view, updated), 'edit-labels')
      announce(`Labels of ${key.keyPrefix}… saved`)
    }
  })
}

/** Deletes after confirmation; focus moves to a neighbouring row, or to the create button. */
function deleteButton(view: KeysView, key: ApiKey, tr: HTMLTableRowElement): HTMLButtonElement {
  return rowButton({ action: 'delete', label: 'Delete', danger: true }, async () => {
    const sure = await confirmDialog({
      title: `Delete API key ${key.keyPrefix}…?`,
      message: [
        'Anything using this key stops working immediately. This cannot be undone.',
        isSessionKey(key)
          ? h('p', null, h('strong', null, 'This is the key you are signed in with: you will be signed out.'))
          : null,
      ],
      confirmLabel: 'Delete key',
      danger: true,
    })
    if (!sure) return
    const result = await call('Delete API key', 'DELETE', `/v1/apikeys/${encodeURIComponent(key.apiKeyId)}`)
    if (!result.ok) return announceError(view, result)
    const next = (tr.nextElementSibling ?? tr.previousElementSibling) as HTMLElement | null
    tr.remove()
    announce(`API key ${key.keyPrefix}… deleted`)
    ;(next?.querySelector<HTMLElement>('button') ?? view.createButton).focus()
  })
}

/** A button of a key's row; replaceRow finds the redrawn row's button by `action`, to keep the focus on it. */
function rowButton(
  { action, label, danger = false }: { action: string; label: string; danger?: boolean },
  onClick: () => Promise<void>,
): HTMLButtonElement {
  const className = danger ? 'button small danger' : 'button small'
  return h('button', { type: 'button', class: className, 'data-action': action, onClick }, label)
}

function replaceRow(old: HTMLTableRowElement, fresh: HTMLTableRowElement, focusAction: string): void {
  old.replaceWith(fresh)
  fresh.querySelector<HTMLElement>(`[data-action="${focusAction}"]`)?.focus()
}

function announceError(view: KeysView, result: ApiResult<unknown>): void {
  announce(`Failed: ${describeError(result.error!)}`)
  replace(view.moreSlot, errorNotice(result.error!))
}

/** A page of keys (the first again when `reset`), with "Load more" while the server has more. */
async function loadKeys(view: KeysView, reset: boolean): Promise<void> {
  const { context, tbody } = view
  if (reset) view.nextToken = undefined
  const ownerId = view.ownerId !== context.me.userId ? view.ownerId : undefined
  const result = await call<{ keys: ApiKey[]; nextToken?: string }>(
    'List API keys',
    'GET',
    `/v1/apikeys${query({ maxResults: PAGE_SIZE, status: view.statusFilter || undefined, ownerId, nextToken: view.nextToken })}`,
  )
  if (!context.isCurrent()) return
  if (!result.ok || !result.data) {
    replace(view.tableSlot, errorNotice(result.error!, 'Could not list the API keys'))
    return
  }
  if (reset) tbody.replaceChildren()
  for (const key of result.data.keys) tbody.appendChild(keyRow(view, key))
  view.nextToken = result.data.nextToken
  if (tbody.children.length === 0) {
    replace(
      view.tableSlot,
      notice('info', view.statusFilter ? `No ${view.statusFilter.toLowerCase()} keys.` : 'No API keys yet.'),
    )
  } else {
    replace(
      view.tableSlot,
      dataTable(
        'API keys',
        ['Key', 'Status', 'Labels', 'Expires', 'Last used', 'Created', 'Actions'],
        ['Created'],
        tbody,
      ),
    )
  }
  replace(
    view.moreSlot,
    loadMoreButton(view.nextToken, () => loadKeys(view, false)),
  )
}

function statusFilterSelect(view: KeysView): HTMLSelectElement {
  const statusSelect = select(
    [
      ['', 'All'],
      ['ACTIVE', 'Active'],
      ['INACTIVE', 'Inactive'],
    ],
    {
      id: 'status-filter',
      value: view.statusFilter,
      onChange: () => {
        view.statusFilter = statusSelect.value
        void loadKeys(view, true)
      },
    },
  )
  statusSelect.value = view.statusFilter
  return statusSelect
}

/** For admins with other users: a picker of whose keys to manage. And a line saying whose keys these are. */
async function ownerControls(view: KeysView): Promise<{ picker: HTMLElement; note: string }> {
  const { context, ownerId } = view
  const { me } = context
  const picker = h('div', { class: 'inline-field' })
  let users: User[] = []
  if (me.role === 'ADMIN') {
    const usersResult = await call<{ users: User[] }>(
      'List users',
      'GET',
      `/v1/users${query({ maxResults: MAX_PAGE_SIZE })}`,
    )
    users = usersResult.data?.users ?? []
    if (users.length > 1) {
      const choice = select(
        users.map((user) => [user.userId, `${user.username}${user.userId === me.userId ? ' (you)' : ''}`]),
        {
          id: 'owner-picker',
          onChange: () =>
            context.navigate(
              `#/apikeys${choice.value === me.userId ? '' : `?owner=${encodeURIComponent(choice.value)}`}`,
            ),
        },
      )
      choice.value = ownerId
      replace(picker, h('label', { for: 'owner-picker' }, 'Keys of'), choice)
    }
  }
  const owner = users.find((user) => user.userId === ownerId)
  const note =
    ownerId === me.userId
      ? 'Keys you own.'
      : `Keys of ${owner?.username ?? ownerId}: new keys are created for this user.`
  return { picker, note }
}
