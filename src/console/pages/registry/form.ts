// The registration form, for create and edit: the fields every kind has, the kind's own
// fields and the credentials; the server's validation errors appear next to the field they name.
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_MODEL_IDENTIFIER_LENGTH,
  MAX_VERSION_LENGTH,
} from '../../../validation/limits.js'
import { h } from '../../dom.js'
import {
  FormErrors,
  field,
  formatLabels,
  groupField,
  nativeViolations,
  parseLabels,
  select,
  textarea,
} from '../../forms.js'
import { endpointPlaceholder, LOCAL_PROVIDER_TYPE, MODALITIES, type RegistryKind } from '../../registry-kinds.js'
import type { PageContext, Registration } from '../../types.js'
import { setBusy } from '../../ui.js'
import { credentialsSection } from './fields-credentials.js'
import { embedderFields } from './fields-embedder.js'
import { llmFields } from './fields-llm.js'
import { rerankerFields } from './fields-reranker.js'
import { type FormValue, fieldMakers, type KindFieldsMaker, str } from './form-parts.js'
import { itemHref, providerLabel } from './shared.js'

export interface RegistryForm {
  element: HTMLFormElement
  errors: FormErrors
  collect(): { value: FormValue; violations: Array<{ field: string; description: string }> }
}

const OWN_FIELDS: Record<RegistryKind['kind'], KindFieldsMaker> = {
  embedder: embedderFields,
  llm: llmFields,
  reranker: rerankerFields,
}

const MODEL_PLACEHOLDERS: Record<RegistryKind['kind'], string> = {
  embedder: 'e.g. BAAI/bge-small-en-v1.5',
  llm: 'e.g. llama-3.1-8b-instruct',
  reranker: 'e.g. BAAI/bge-reranker-base',
}

/** Endpoint URL and API path follow the provider: placeholder, hint, and the default path until it is edited by hand. */
function followProviderDefaults(
  kind: RegistryKind,
  isEdit: boolean,
  provider: HTMLSelectElement,
  endpointUrl: HTMLInputElement,
  apiPath: HTMLInputElement,
  apiPathHint: HTMLElement,
): void {
  let lastDefault = kind.defaultApiPath(provider.value)
  const update = () => {
    const fresh = kind.defaultApiPath(provider.value)
    apiPathHint.textContent = `Default for ${providerLabel(provider.value)}: ${fresh}`
    endpointUrl.placeholder = endpointPlaceholder(provider.value)
    if (!isEdit && (apiPath.value === '' || apiPath.value === lastDefault)) apiPath.value = fresh
    lastDefault = fresh
  }
  provider.addEventListener('change', update)
  update()
}

export function buildForm(
  kind: RegistryKind,
  context: PageContext,
  initial: Registration | undefined,
  onSubmit: (form: RegistryForm) => Promise<void>,
): RegistryForm {
  const isEdit = initial !== undefined
  const errors = new FormErrors({ replaceLabels: 'labels', mergeLabels: 'labels' })
  const make = fieldMakers(errors)
  const { text } = make

  // ---- basics
  const provider0 = str(initial?.providerType) || kind.providers[0]!
  const displayName = text('displayName', 'Display name', {
    required: true,
    value: str(initial?.displayName),
    max: MAX_DISPLAY_NAME_LENGTH,
  })
  const description = field(
    errors,
    { name: 'description', label: 'Description' },
    textarea({ rows: 2, value: str(initial?.description), maxlength: MAX_DESCRIPTION_LENGTH }),
  )
  const providerType = field(
    errors,
    {
      name: 'providerType',
      label: 'Provider type',
      required: true,
      hint: isEdit ? 'The provider type of a registration cannot change.' : undefined,
    },
    select(
      kind.providers.map((value): [string, string] => [value, providerLabel(value)]),
      { disabled: isEdit },
    ),
  )
  providerType.control.value = provider0
  const modelIdentifier = text('modelIdentifier', 'Model identifier', {
    required: true,
    value: str(initial?.modelIdentifier),
    max: MAX_MODEL_IDENTIFIER_LENGTH,
    placeholder: MODEL_PLACEHOLDERS[kind.kind],
  })
  const version = text('version', 'Version', {
    value: str(initial?.version),
    max: MAX_VERSION_LENGTH,
    hint: 'Optional version information.',
  })

  // ---- endpoint
  const apiPathHint = h('span')
  const endpointUrl = text('endpointUrl', 'Endpoint URL', {
    required: true,
    type: 'url',
    value: str(initial?.endpointUrl),
    placeholder: endpointPlaceholder(provider0),
    hint: 'http or https, without a user name or password (use the credentials below).',
  })
  const apiPath = text('apiPath', 'API path', {
    value: isEdit ? str(initial?.apiPath) : kind.defaultApiPath(provider0),
    hint: apiPathHint,
  })
  const monitoringEndpoint = text('monitoringEndpoint', 'Monitoring endpoint', {
    type: 'url',
    value: str(initial?.monitoringEndpoint),
    hint: 'Optional URL.',
  })
  followProviderDefaults(kind, isEdit, providerType.control, endpointUrl.control, apiPath.control, apiPathHint)

  // ---- model, the kind's own fields, credentials
  const modalitiesValue = (initial?.supportedModalities as string[] | undefined) ?? ['TEXT']
  const modalityBoxes = MODALITIES.map((modality) =>
    h('input', {
      type: 'checkbox',
      name: 'supportedModalities',
      value: modality,
      checked: modalitiesValue.includes(modality),
    }),
  )
  const modalities = groupField(
    errors,
    { name: 'supportedModalities', label: 'Supported modalities', hint: 'At least one.' },
    modalityBoxes,
    MODALITIES.map((modality) => modality[0] + modality.slice(1).toLowerCase()),
  )
  const own = OWN_FIELDS[kind.kind](errors, make, initial, modalities)
  const credentials = credentialsSection(errors, make, initial)
  const endpointSection = h(
    'fieldset',
    { class: 'form-section' },
    h('legend', null, 'Endpoint'),
    endpointUrl.wrapper,
    h('div', { class: 'row' }, apiPath.wrapper, monitoringEndpoint.wrapper),
  )
  // A LOCAL embedder runs its model inside memsvc: no endpoint, path or credentials to give.
  const isLocal = () => providerType.control.value === LOCAL_PROVIDER_TYPE
  const followLocal = () => {
    endpointSection.hidden = isLocal()
    credentials.section.hidden = isLocal()
    endpointUrl.control.required = !isLocal()
    modelIdentifier.control.placeholder = isLocal()
      ? 'a model directory name (memsvc model list)'
      : MODEL_PLACEHOLDERS[kind.kind]
    own.providerChanged?.(providerType.control.value)
  }
  providerType.control.addEventListener('change', followLocal)
  followLocal()

  // ---- labels, ownership, id
  const labels = field(
    errors,
    { name: 'labels', label: 'Labels', hint: 'One key=value per line.' },
    textarea({ rows: 3, value: formatLabels(initial?.labels), spellcheck: 'false', placeholder: 'team=search' }),
  )
  const ownerId =
    !isEdit && context.me.role === 'ADMIN'
      ? text('ownerId', 'Owner (user ID)', { hint: 'Optional; register for another user. Empty: yourself.' })
      : undefined
  const clientId = !isEdit
    ? text(kind.idField, 'ID', { hint: 'Optional UUID; the server makes one if empty.' })
    : undefined

  const submit = h(
    'button',
    { type: 'submit', class: 'button primary' },
    isEdit ? 'Save changes' : `Register ${kind.singular}`,
  )
  const form: RegistryForm = {
    element: undefined as unknown as HTMLFormElement,
    errors,
    collect() {
      const violations = nativeViolations(form.element)
      const parsedLabels = parseLabels(labels.control.value, 'labels')
      violations.push(...parsedLabels.violations)
      const value: FormValue = {
        displayName: displayName.control.value.trim(),
        description: description.control.value,
        providerType: providerType.control.value,
        endpointUrl: endpointUrl.control.value.trim(),
        apiPath: apiPath.control.value.trim(),
        modelIdentifier: modelIdentifier.control.value.trim(),
        supportedModalities: modalityBoxes.filter((box) => box.checked).map((box) => box.value),
        labels: parsedLabels.labels,
        version: version.control.value.trim(),
        monitoringEndpoint: monitoringEndpoint.control.value.trim(),
      }
      own.collect(value)
      value.credentials = credentials.collect()
      if (isLocal()) {
        value.endpointUrl = undefined
        value.apiPath = undefined
        value.credentials = undefined
      }
      if (ownerId?.control.value.trim()) value.ownerId = ownerId.control.value.trim()
      if (clientId?.control.value.trim()) value[kind.idField] = clientId.control.value.trim()
      return { value, violations }
    },
  }
  form.element = h(
    'form',
    {
      class: 'form registry-form',
      novalidate: true,
      'aria-label': isEdit ? `Edit ${kind.singular}` : `Register ${kind.singular}`,
      onSubmit: async (event: Event) => {
        event.preventDefault()
        setBusy(submit, true)
        try {
          await onSubmit(form)
        } finally {
          setBusy(submit, false)
        }
      },
    },
    errors.summary,
    h(
      'fieldset',
      { class: 'form-section' },
      h('legend', null, 'Basics'),
      h('div', { class: 'row' }, displayName.wrapper, providerType.wrapper),
      h('div', { class: 'row' }, modelIdentifier.wrapper, version.wrapper),
      description.wrapper,
    ),
    endpointSection,
    h('fieldset', { class: 'form-section' }, h('legend', null, 'Model'), own.modelFields),
    own.sections,
    credentials.section,
    h(
      'fieldset',
      { class: 'form-section' },
      h('legend', null, 'Labels and ownership'),
      labels.wrapper,
      ownerId?.wrapper,
      clientId?.wrapper,
    ),
    h(
      'div',
      { class: 'actions form-end' },
      h('a', { class: 'button', href: isEdit ? itemHref(kind, initial!) : `#/${kind.route}` }, 'Cancel'),
      submit,
    ),
  )
  return form
}
