// The credentials section of the registration form, the same for every kind.
import { h } from '../../dom.js'
import { type FormErrors, field, groupField, input, lines, textarea } from '../../forms.js'
import type { Credentials, Registration } from '../../types.js'
import type { FieldMakers } from './form-parts.js'

/**
 * The credential form (none, inline API key, cloud ADC) with the panel of the chosen form; a stored
 * secret is kept unless a new one is typed.
 */
export function credentialsSection(
  errors: FormErrors,
  make: FieldMakers,
  initial: Registration | undefined,
): { section: HTMLElement; collect(): Credentials } {
  const credentials: Credentials = initial?.credentials ?? { kind: 'NONE' }
  const kinds = [
    ['NONE', 'None (e.g. a local deployment)'],
    ['API_KEY', 'Inline API key'],
    ['CLOUD_ADC', 'Cloud application default credentials'],
  ] as const
  const kindRadios = kinds.map(([value]) =>
    h('input', { type: 'radio', name: 'credentials.kind', value, checked: credentials.kind === value }),
  )
  const kindGroup = groupField(
    errors,
    { name: 'credentials', label: 'Credential form' },
    kindRadios,
    kinds.map(([, label]) => label),
  )
  const storedFingerprint = credentials.kind === 'API_KEY' ? credentials.apiKey?.secretFingerprint : undefined
  const inlineSecret = field(
    errors,
    {
      name: 'credentials.apiKey.inlineSecret',
      label: 'API key (secret)',
      hint: storedFingerprint
        ? `Leave empty to keep the stored secret (fingerprint ${storedFingerprint}). It is never shown again.`
        : 'Stored encrypted; never shown again.',
    },
    input({ type: 'password', autocomplete: 'new-password', spellcheck: 'false' }),
  )
  const headerName = make.text('credentials.apiKey.headerName', 'Header name', {
    value: credentials.apiKey?.headerName ?? 'Authorization',
  })
  const prefix = make.text('credentials.apiKey.prefix', 'Prefix', {
    value: credentials.apiKey?.prefix ?? 'Bearer',
    hint: 'Put before the secret in the header, e.g. "Bearer".',
  })
  const scopes = field(
    errors,
    { name: 'credentials.cloudAdc.scopes', label: 'Additional OAuth scopes', hint: 'One per line; optional.' },
    textarea({ rows: 2, value: (credentials.cloudAdc?.scopes ?? []).join('\n'), spellcheck: 'false' }),
  )
  const quotaProjectId = make.text('credentials.cloudAdc.quotaProjectId', 'Quota project', {
    value: credentials.cloudAdc?.quotaProjectId ?? '',
    hint: 'Optional.',
  })
  const apiKeyPanel = h(
    'div',
    { class: 'sub-panel', 'data-kind': 'API_KEY' },
    inlineSecret.wrapper,
    h('div', { class: 'row' }, headerName.wrapper, prefix.wrapper),
  )
  const adcPanel = h('div', { class: 'sub-panel', 'data-kind': 'CLOUD_ADC' }, scopes.wrapper, quotaProjectId.wrapper)
  const selectedKind = () => (kindRadios.find((radio) => radio.checked)?.value ?? 'NONE') as Credentials['kind']
  const showCredentialPanels = () => {
    apiKeyPanel.hidden = selectedKind() !== 'API_KEY'
    adcPanel.hidden = selectedKind() !== 'CLOUD_ADC'
    inlineSecret.control.required = selectedKind() === 'API_KEY' && !storedFingerprint
  }
  for (const radio of kindRadios) radio.addEventListener('change', showCredentialPanels)
  showCredentialPanels()
  return {
    section: h(
      'fieldset',
      { class: 'form-section' },
      h('legend', null, 'Credentials'),
      kindGroup,
      apiKeyPanel,
      adcPanel,
    ),
    collect() {
      const kindValue = selectedKind()
      const value: Credentials = { kind: kindValue }
      if (kindValue === 'API_KEY') {
        value.apiKey = { headerName: headerName.control.value.trim(), prefix: prefix.control.value }
        if (inlineSecret.control.value) value.apiKey.inlineSecret = inlineSecret.control.value
      } else if (kindValue === 'CLOUD_ADC') {
        value.cloudAdc = { scopes: lines(scopes.control.value) }
        if (quotaProjectId.control.value.trim()) value.cloudAdc.quotaProjectId = quotaProjectId.control.value.trim()
      }
      return value
    },
  }
}
