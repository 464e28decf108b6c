// Create a space: its name, embedders with their weights, default chunking, access, labels.
import { MAX_SPACE_NAME_LENGTH } from '../../../validation/limits.js'
import { call } from '../../api.js'
import { chunkingFields } from '../../chunking-fields.js'
import { h, replace } from '../../dom.js'
import { checkedForm, FormErrors, field, groupField, input, parseLabels } from '../../forms.js'
import { listAll } from '../../list-all.js'
import type { PageContext, Registration, Space } from '../../types.js'
import { announce, errorNotice, loading, notice, pageHeading, setBusy } from '../../ui.js'
import { spaceHref } from './shared.js'
import { accessAndLabels, weightInput, weightOf } from './space-fields.js'

export async function createView(context: PageContext): Promise<void> {
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
    const weight = weightInput({
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
  const { publicRead, access, labels } = accessAndLabels(errors, undefined)
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Create space')

  const form = checkedForm(
    'form',
    {
      errors,
      attrs: { 'aria-label': 'Create a space' },
      check: (violations) => {
        const parsedLabels = parseLabels(labels.control.value, 'labels')
        violations.push(...parsedLabels.violations)
        const spaceEmbedders = boxes.flatMap((box, index) =>
          box.checked ? [{ embedderId: box.value, defaultRetrievalWeight: weightOf(weights[index]!) }] : [],
        )
        if (spaceEmbedders.length === 0)
          violations.push({ field: 'spaceEmbedders', description: 'choose at least one embedder' })
        return { parsedLabels, spaceEmbedders }
      },
      send: async ({ parsedLabels, spaceEmbedders }) => {
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
    h('fieldset', { class: 'form-section' }, h('legend', null, 'Space'), name.wrapper, labels.wrapper, access),
    h('fieldset', { class: 'form-section embedder-choice' }, h('legend', null, 'Embedders'), embedderGroup),
    chunking.element,
    h('div', { class: 'actions form-end' }, h('a', { class: 'button', href: '#/spaces' }, 'Cancel'), submit),
  )
  replace(holder, h('p', { class: 'muted' }, 'Fields marked * are required.'), form)
}
