// Create a space: its name, keyword language, OCR default, embedders with their weights (none: keyword-only),
// default chunking, access, labels.
import {
  DEFAULT_TEXT_SEARCH_LANGUAGE,
  MAX_SPACE_NAME_LENGTH,
  MAX_TEXT_SEARCH_LANGUAGE_LENGTH,
} from '../../../validation/limits.js'
import { call } from '../../api.js'
import { chunkingFields } from '../../chunking-fields.js'
import { h, replace } from '../../dom.js'
import { checkedForm, FormErrors, field, groupField, input, parseLabels } from '../../forms.js'
import { listAll } from '../../list-all.js'
import type { PageContext, Registration, Space } from '../../types.js'
import { announce, errorNotice, loading, notice, pageHeading, setBusy } from '../../ui.js'
import { spaceHref } from './shared.js'
import { accessAndLabels, ocrDefaultField, weightInput, weightOf } from './space-fields.js'

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

  const errors = new FormErrors()
  const name = field(
    errors,
    { name: 'name', label: 'Name', required: true, hint: 'Unique among your spaces.' },
    input({ maxlength: MAX_SPACE_NAME_LENGTH, autocomplete: 'off' }),
  )
  const language = field(
    errors,
    {
      name: 'textSearchLanguage',
      label: 'Keyword language',
      hint: 'Stop words and stemming of its keyword search: english, french, german, spanish… or simple (neither). Fixed once created.',
    },
    input({
      value: DEFAULT_TEXT_SEARCH_LANGUAGE,
      maxlength: MAX_TEXT_SEARCH_LANGUAGE_LENGTH,
      autocomplete: 'off',
      spellcheck: 'false',
    }),
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
      hint:
        'Every memory is embedded by each of them; the weight is its share in retrieval. ' +
        'With none, the space is searched by keywords until an embedder is added.',
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
  const ocr = ocrDefaultField(errors, undefined)
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
        return { parsedLabels, spaceEmbedders }
      },
      send: async ({ parsedLabels, spaceEmbedders }) => {
        const body: Record<string, unknown> = {
          name: name.control.value.trim(),
          spaceEmbedders,
          defaultChunkingConfig: chunking.collect(),
          publicRead: publicRead.checked,
          textSearchLanguage: language.control.value.trim() || DEFAULT_TEXT_SEARCH_LANGUAGE,
          defaultOcr: ocr.control.value,
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
    h(
      'fieldset',
      { class: 'form-section' },
      h('legend', null, 'Space'),
      name.wrapper,
      language.wrapper,
      ocr.wrapper,
      labels.wrapper,
      access,
    ),
    h(
      'fieldset',
      { class: 'form-section embedder-choice' },
      h('legend', null, 'Embedders'),
      embedders.items.length > 0
        ? embedderGroup
        : notice(
            'info',
            'No embedder is registered: this space will be searched by keywords only. ',
            h('a', { href: '#/embedders/new' }, 'Register an embedder'),
            ' to search by meaning too; adding it to the space later embeds the memories already there.',
          ),
    ),
    chunking.element,
    h('div', { class: 'actions form-end' }, h('a', { class: 'button', href: '#/spaces' }, 'Cancel'), submit),
  )
  replace(holder, h('p', { class: 'muted' }, 'Fields marked * are required.'), form)
}
