// The settings panel of a space; for the owner, an Edit form for its name, access, OCR default and labels.
import { MAX_SPACE_NAME_LENGTH } from '../../../validation/limits.js'
import { call } from '../../api.js'
import { describeChunking } from '../../chunking-fields.js'
import { h } from '../../dom.js'
import { checkedForm, FormErrors, field, input, parseLabels } from '../../forms.js'
import type { PageContext, Space } from '../../types.js'
import { announce, keyValueTable, labelChips, section, setBusy, time } from '../../ui.js'
import { accessAndLabels, ocrDefaultField } from './space-fields.js'

/** The space's settings; for the owner, an Edit form for what can change (name, access, OCR default, labels). */
export function settingsPanel(context: PageContext, space: Space, own: boolean, canEdit: boolean): HTMLElement {
  const view = keyValueTable([
    ['ID', h('code', null, space.spaceId)],
    ['Access', space.publicRead ? 'Public read: other users may retrieve from it' : 'Private'],
    ['Default chunking', describeChunking(space.defaultChunkingConfig)],
    ['Keyword language', space.textSearchLanguage],
    ['OCR default', space.defaultOcr],
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
  const { publicRead, access, labels } = accessAndLabels(errors, space)
  const ocr = ocrDefaultField(errors, space)
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
  const form = checkedForm(
    'form',
    {
      errors,
      attrs: { hidden: true, 'aria-label': 'Edit space' },
      check: (violations) => {
        const parsedLabels = parseLabels(labels.control.value, 'labels')
        violations.push(...parsedLabels.violations)
        return parsedLabels
      },
      send: async (parsedLabels) => {
        // Only what changed; labels are replaced as a whole.
        const body: Record<string, unknown> = {}
        if (name.control.value.trim() !== space.name) body.name = name.control.value.trim()
        if (publicRead.checked !== space.publicRead) body.publicRead = publicRead.checked
        if (ocr.control.value !== space.defaultOcr) body.defaultOcr = ocr.control.value
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
    name.wrapper,
    access,
    ocr.wrapper,
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
