// The embedders panel of a space: each with its index state (followed while back-filling);
// for the owner, add one or remove one.
import { call } from '../../api.js'
import { type Child, h, replace } from '../../dom.js'
import { checkedForm, FormErrors, field, select } from '../../forms.js'
import type { PageContext, Registration, Space, SpaceEmbedder } from '../../types.js'
import { announce, badge, confirmDialog, dataTable, setBusy } from '../../ui.js'
import { refreshWhile } from './shared.js'
import { weightInput, weightOf } from './space-fields.js'

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

/** A space's embedders with their index state; for the owner, add one (back-filled in the background) or remove one. */
export function embeddersPanel(
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
            message:
              'Its vectors for this space are deleted; retrieval stops using it. The memories stay.' +
              (space.spaceEmbedders.length === 1
                ? ' With no embedder left, the space is searched by keywords only.'
                : ''),
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
    space.spaceEmbedders.length === 0
      ? h('p', { class: 'muted', 'data-embedders': 'none' }, 'None: the space is searched by keywords only.')
      : dataTable(
          'Embedders of this space',
          ['Embedder', 'Weight', 'Index', 'ID', ...(canEdit ? ['Actions'] : [])],
          ['ID'],
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
                    ? h(
                        'a',
                        { href: `#/embedders/${encodeURIComponent(entry.embedderId)}` },
                        names.get(entry.embedderId),
                      )
                    : h('span', { class: 'muted' }, 'not readable'),
                ),
                h('td', null, String(entry.defaultRetrievalWeight)),
                h('td', { 'data-col': 'index' }, embedderState(entry)),
                h('td', { class: 'optional-col' }, h('code', { class: 'small' }, entry.embedderId)),
                canEdit ? h('td', { class: 'row-actions' }, removeButton(entry)) : null,
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
    const weight = field(errors, { name: 'defaultRetrievalWeight', label: 'Weight' }, weightInput())
    const submit = h('button', { type: 'submit', class: 'button' }, 'Add embedder')
    return checkedForm(
      'form add-embedder',
      {
        errors,
        attrs: { 'aria-label': 'Add an embedder' },
        send: async () => {
          setBusy(submit, true)
          const result = await call<Space>('Add embedder to space', 'POST', `${path}:addEmbedder`, {
            body: {
              embedderId: embedder.control.value,
              defaultRetrievalWeight: weightOf(weight.control),
            },
          })
          setBusy(submit, false)
          if (!context.isCurrent()) return
          if (!result.ok || !result.data) return void errors.show(result.error!, 'Not added')
          announce('Embedder added; vectors for the existing memories are written in the background')
          show(result.data)
        },
      },
      h('div', { class: 'row' }, embedder.wrapper, weight.wrapper),
      h(
        'p',
        { class: 'hint' },
        "The space's existing memories are embedded with it in the background; retrieval uses it once READY.",
      ),
      h('div', { class: 'actions' }, submit),
    )
  }

  /** Back-filling embedders are followed until READY. */
  const follow = () => {
    if (following || space.spaceEmbedders.every((entry) => entry.indexState === 'READY')) return
    following = true
    refreshWhile(context, async () => {
      const again = await call<Space>('Get space', 'GET', path)
      if (!again.ok || !again.data || !context.isCurrent()) {
        following = false
        return false
      }
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
