// Embedders, LLMs and rerankers: list, detail, create and edit forms covering every
// setting, delete, and a probe run again on demand. The server's validation errors
// appear next to the field they name.
import { call, query } from '../api.js'
import { type Child, h, replace } from '../dom.js'
import {
  FormErrors,
  field,
  formatLabels,
  groupField,
  input,
  lines,
  nativeViolations,
  parseLabels,
  select,
  textarea,
} from '../forms.js'
import {
  CAPABILITIES,
  DISTRIBUTION_TYPES,
  endpointPlaceholder,
  INT32_MAX,
  MODALITIES,
  type RegistryKind,
  SAMPLING,
} from '../registry-kinds.js'
import type { Credentials, PageContext, Registration } from '../types.js'
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

const PAGE_SIZE = 50
/** After "Probe now", the detail page reads the registration again this often, this many times, for the new result. */
const PROBE_POLL_MS = 1_000
const PROBE_POLL_ATTEMPTS = 20

const idOf = (kind: RegistryKind, item: Registration) => String(item[kind.idField] ?? '')
const itemHref = (kind: RegistryKind, item: Registration, suffix = '') =>
  `#/${kind.route}/${encodeURIComponent(idOf(kind, item))}${suffix}`
const providerLabel = (provider: string) => provider.replaceAll('_', ' ')

function unavailable(kind: RegistryKind): HTMLElement {
  return notice('info', `The ${kind.plural} API is not available on this server (${kind.path} answered 404).`)
}

function credentialsSummary(credentials: Credentials | undefined): Child {
  switch (credentials?.kind) {
    case 'API_KEY':
      return [
        `Inline API key in ${credentials.apiKey?.headerName ?? 'Authorization'}`,
        credentials.apiKey?.prefix ? ` (${credentials.apiKey.prefix} …)` : '',
        credentials.apiKey?.secretFingerprint
          ? h('span', { class: 'muted' }, ` · fingerprint ${credentials.apiKey.secretFingerprint}`)
          : null,
      ]
    case 'CLOUD_ADC':
      return [
        'Cloud application default credentials',
        credentials.cloudAdc?.scopes?.length ? ` · scopes: ${credentials.cloudAdc.scopes.join(', ')}` : '',
        credentials.cloudAdc?.quotaProjectId ? ` · quota project ${credentials.cloudAdc.quotaProjectId}` : '',
      ]
    case 'NONE':
      return 'None'
    default:
      return h('span', { class: 'muted' }, 'unknown')
  }
}

interface LastProbe {
  status: string
  checkedAt: number
  latencyMs?: number
  error?: string
  observedDimensionality?: number
}

const lastProbeOf = (item: Registration) => item.lastProbe as LastProbe | undefined

/** The last connectivity probe: its status, latency, when, and why it failed. */
function probeSummary(item: Registration): Child {
  const probe = lastProbeOf(item)
  if (!probe) return h('span', { class: 'muted' }, 'not probed yet')
  return [
    badge(probe.status, probe.status === 'OK' ? 'ok' : 'bad'),
    probe.latencyMs === undefined ? '' : ` in ${probe.latencyMs} ms`,
    probe.observedDimensionality === undefined ? '' : ` · ${probe.observedDimensionality} dimensions`,
    ' · ',
    time(probe.checkedAt),
    probe.error ? h('span', { class: 'muted' }, ` · ${probe.error}`) : null,
  ]
}

/** Queues the connectivity probe again (POST …/{id}:probe); answers the job id, or undefined after announcing why not. */
async function requestProbe(kind: RegistryKind, item: Registration): Promise<string | undefined> {
  const result = await call<{ jobId: string }>(
    `Probe ${kind.singular}`,
    'POST',
    `${kind.path}/${encodeURIComponent(idOf(kind, item))}:probe`,
  )
  if (!result.ok || !result.data) {
    announce(`Not probed: ${result.error!.message}`)
    return undefined
  }
  announce(`Probe of "${item.displayName}" queued`)
  return result.data.jobId
}

/** The column after the endpoint: what tells registrations of this kind apart at a glance. */
function kindColumn(kind: RegistryKind): { title: string; cell(item: Registration): Child } {
  switch (kind.kind) {
    case 'embedder':
      return { title: 'Dimensions', cell: (item) => String(item.dimensionality ?? '') }
    case 'llm':
      return {
        title: 'Context',
        cell: (item) =>
          item.maxContextLength !== undefined ? String(item.maxContextLength) : h('span', { class: 'muted' }, '—'),
      }
    default:
      return {
        title: 'Last probe',
        cell: (item) =>
          lastProbeOf(item)
            ? badge(lastProbeOf(item)!.status, lastProbeOf(item)!.status === 'OK' ? 'ok' : 'bad')
            : h('span', { class: 'muted' }, '—'),
      }
  }
}

async function deleteItem(kind: RegistryKind, item: Registration): Promise<boolean> {
  const sure = await confirmDialog({
    title: `Delete ${kind.singular} "${item.displayName}"?`,
    message: `The registration and its stored credentials are removed. This cannot be undone.`,
    confirmLabel: `Delete ${kind.singular}`,
    danger: true,
  })
  if (!sure) return false
  const result = await call(`Delete ${kind.singular}`, 'DELETE', `${kind.path}/${encodeURIComponent(idOf(kind, item))}`)
  if (!result.ok) {
    announce(`Not deleted: ${result.error!.message}`)
    return false
  }
  announce(`${kind.singular[0]!.toUpperCase()}${kind.singular.slice(1)} "${item.displayName}" deleted`)
  return true
}

// ---------------------------------------------------------------- list

async function listView(kind: RegistryKind, context: PageContext): Promise<void> {
  const { root } = context
  let provider = context.query.get('provider') ?? ''
  let nextToken: string | undefined
  const tableSlot = h('div', null, loading(kind.plural))
  const moreSlot = h('div', { class: 'actions' })
  const tbody = h('tbody')
  const ownColumn = kindColumn(kind)

  const row = (item: Registration): HTMLTableRowElement => {
    const tr: HTMLTableRowElement = h(
      'tr',
      { 'data-id': idOf(kind, item) },
      h('th', { scope: 'row' }, h('a', { href: itemHref(kind, item) }, String(item.displayName ?? '(unnamed)'))),
      h('td', null, providerLabel(String(item.providerType ?? ''))),
      h('td', null, h('code', null, String(item.modelIdentifier ?? ''))),
      h('td', { class: 'wrap' }, h('code', null, `${item.endpointUrl ?? ''}${item.apiPath ?? ''}`)),
      h('td', null, ownColumn.cell(item)),
      h('td', { class: 'optional-col' }, badge(String(item.credentials?.kind ?? '?').replace('_', ' '), 'neutral')),
      h('td', { class: 'optional-col' }, labelChips(item.labels)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'div',
          { class: 'actions' },
          h('a', { class: 'button small', href: itemHref(kind, item, '/edit') }, 'Edit'),
          h('button', { type: 'button', class: 'button small', onClick: () => requestProbe(kind, item) }, 'Probe'),
          h(
            'button',
            {
              type: 'button',
              class: 'button small danger',
              onClick: async () => {
                if (await deleteItem(kind, item)) {
                  const next = (tr.nextElementSibling ?? tr.previousElementSibling) as HTMLElement | null
                  tr.remove()
                  ;(
                    next?.querySelector<HTMLElement>('a, button') ?? root.querySelector<HTMLElement>('.page-title')
                  )?.focus()
                }
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
    const result = await call<Record<string, unknown>>(
      `List ${kind.plural}`,
      'GET',
      `${kind.path}${query({ maxResults: PAGE_SIZE, providerType: provider || undefined, nextToken })}`,
    )
    if (!context.isCurrent()) return
    if (!result.ok || !result.data) {
      replace(
        tableSlot,
        result.status === 404 ? unavailable(kind) : errorNotice(result.error!, `Could not list the ${kind.plural}`),
      )
      moreSlot.replaceChildren()
      return
    }
    if (reset) tbody.replaceChildren()
    for (const item of (result.data[kind.listField] as Registration[] | undefined) ?? []) tbody.appendChild(row(item))
    nextToken = result.data.nextToken as string | undefined
    replace(
      tableSlot,
      tbody.children.length === 0
        ? notice('info', `No ${kind.plural} registered${provider ? ` for ${providerLabel(provider)}` : ''} yet.`)
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table', 'aria-label': kind.title },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['Name', 'Provider', 'Model', 'Endpoint', ownColumn.title, 'Credentials', 'Labels', 'Actions'].map(
                    (title) =>
                      h(
                        'th',
                        {
                          scope: 'col',
                          class: title === 'Credentials' || title === 'Labels' ? 'optional-col' : undefined,
                        },
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

  const providerFilter = select(
    [['', 'All providers'], ...kind.providers.map((value): [string, string] => [value, providerLabel(value)])],
    {
      id: 'provider-filter',
      onChange: () => {
        provider = providerFilter.value
        void load(true)
      },
    },
  )
  providerFilter.value = provider
  root.append(
    pageHeading(
      kind.title,
      h('a', { class: 'button primary', href: `#/${kind.route}/new` }, `Register ${kind.article}`),
    ),
    h(
      'section',
      { class: 'panel', 'aria-label': `Registered ${kind.plural}` },
      h(
        'div',
        { class: 'panel-head' },
        h('h3', null, `Your ${kind.plural}`),
        h(
          'div',
          { class: 'filters' },
          h('div', { class: 'inline-field' }, h('label', { for: 'provider-filter' }, 'Provider'), providerFilter),
        ),
      ),
      tableSlot,
      moreSlot,
    ),
  )
  await load(true)
}

// ---------------------------------------------------------------- detail

async function detailView(kind: RegistryKind, context: PageContext, id: string): Promise<void> {
  const { root } = context
  const body = h('div', null, loading(`the ${kind.singular}`))
  root.append(body)
  const result = await call<Registration>(`Get ${kind.singular}`, 'GET', `${kind.path}/${encodeURIComponent(id)}`)
  if (!context.isCurrent()) return
  if (!result.ok || !result.data) {
    replace(
      body,
      pageHeading(kind.title),
      errorNotice(result.error!, `Could not read the ${kind.singular}`),
      h('p', null, h('a', { href: `#/${kind.route}` }, `Back to the ${kind.plural}`)),
    )
    return
  }
  const item = result.data
  const isEmbedder = kind.kind === 'embedder'
  const sampling = (item.defaultSamplingParams ?? {}) as Record<string, unknown>
  const capabilities = (item.capabilities ?? {}) as Record<string, boolean>
  const optional = (value: unknown): Child =>
    value === undefined || value === null || value === '' ? h('span', { class: 'muted' }, 'not set') : String(value)
  const rows: Array<[string, Child]> = [
    ['ID', h('code', null, id)],
    ['Provider', providerLabel(String(item.providerType))],
    ['Model identifier', h('code', null, String(item.modelIdentifier))],
    ['Endpoint URL', h('code', null, String(item.endpointUrl))],
    ['API path', h('code', null, String(item.apiPath))],
    ['Description', optional(item.description)],
    ['Version', optional(item.version)],
    ['Monitoring endpoint', optional(item.monitoringEndpoint)],
    ['Modalities', ((item.supportedModalities as string[] | undefined) ?? []).join(', ')],
  ]
  if (isEmbedder) {
    rows.push(
      ['Dimensionality', String(item.dimensionality)],
      ['Distribution', String(item.distributionType)],
      ['Max sequence length', optional(item.maxSequenceLength)],
    )
  } else if (kind.kind === 'llm') {
    rows.push(
      ['Max context length', optional(item.maxContextLength)],
      [
        'Capabilities',
        h(
          'ul',
          { class: 'chips' },
          CAPABILITIES.map(([name, label]) =>
            h(
              'li',
              { class: `chip ${capabilities[name] ? 'on' : 'off'}` },
              `${label}: ${capabilities[name] ? 'yes' : 'no'}`,
            ),
          ),
        ),
      ],
      [
        'Default sampling',
        Object.keys(sampling).length
          ? h(
              'ul',
              { class: 'chips' },
              Object.entries(sampling).map(([name, value]) =>
                h('li', { class: 'chip' }, `${name}=${Array.isArray(value) ? JSON.stringify(value) : String(value)}`),
              ),
            )
          : h('span', { class: 'muted' }, 'not set'),
      ],
      [
        'Client config',
        item.clientConfig
          ? h('pre', { class: 'code small' }, String(item.clientConfig))
          : h('span', { class: 'muted' }, 'not set'),
      ],
    )
  }
  rows.push(['Credentials', credentialsSummary(item.credentials)], ['Labels', labelChips(item.labels)])
  const probeCell = h('span', { 'data-testid': 'last-probe' }, probeSummary(item))
  rows.push(['Last probe', probeCell])
  rows.push(
    ['Owner', h('code', null, String(item.ownerId))],
    ['Created', time(item.createdAt as number)],
    ['Updated', time(item.updatedAt as number)],
  )

  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        if (await deleteItem(kind, item)) context.navigate(`#/${kind.route}`)
      },
    },
    'Delete',
  )
  const probeButton: HTMLButtonElement = h(
    'button',
    {
      type: 'button',
      class: 'button',
      onClick: async () => {
        setBusy(probeButton, true)
        try {
          const before = lastProbeOf(item)?.checkedAt ?? 0
          if (!(await requestProbe(kind, item))) return
          // The probe runs as a background job: read the registration again until its result lands.
          for (let attempt = 0; attempt < PROBE_POLL_ATTEMPTS && context.isCurrent(); attempt++) {
            await new Promise((resolve) => setTimeout(resolve, PROBE_POLL_MS))
            // The user may have left the page (and deleted the registration) while we waited.
            if (!context.isCurrent()) return
            const again = await call<Registration>(
              `Get ${kind.singular}`,
              'GET',
              `${kind.path}/${encodeURIComponent(id)}`,
            )
            if (!again.ok || !again.data) return
            if ((lastProbeOf(again.data)?.checkedAt ?? 0) > before) {
              replace(probeCell, probeSummary(again.data))
              announce(`Probe: ${lastProbeOf(again.data)!.status}`)
              return
            }
          }
        } finally {
          setBusy(probeButton, false)
        }
      },
    },
    'Probe now',
  )
  replace(
    body,
    h('p', { class: 'breadcrumb' }, h('a', { href: `#/${kind.route}` }, kind.title), ' / '),
    pageHeading(
      String(item.displayName),
      h('a', { class: 'button primary', href: itemHref(kind, item, '/edit') }, 'Edit'),
      probeButton,
      deleteButton,
    ),
    section('Settings', keyValueTable(rows)),
    h(
      'details',
      { class: 'panel raw' },
      h('summary', null, 'Raw JSON'),
      h('pre', { class: 'code' }, JSON.stringify(item, null, 2)),
    ),
  )
}

// ---------------------------------------------------------------- form

/** Everything the form holds, in the API's create shape; empty texts are "". */
interface FormValue {
  [name: string]: unknown
}

interface RegistryForm {
  element: HTMLFormElement
  errors: FormErrors
  collect(): { value: FormValue; violations: Array<{ field: string; description: string }> }
}

const numberOrUndefined = (control: HTMLInputElement): number | undefined =>
  control.value.trim() === '' ? undefined : Number(control.value)

type TextOptions = {
  required?: boolean
  hint?: Child
  value?: string
  type?: string
  placeholder?: string
  max?: number
}
type NumberOptions = { min: number; max: number; step: string; hint?: string; required?: boolean; value?: unknown }

/** Text and number fields whose server errors show in `errors`. */
function fieldMakers(errors: FormErrors) {
  const text = (name: string, label: string, options: TextOptions = {}) =>
    field(
      errors,
      { name, label, required: options.required, hint: options.hint },
      input({
        type: options.type ?? 'text',
        value: options.value ?? '',
        placeholder: options.placeholder,
        maxlength: options.max,
        spellcheck: 'false',
      }),
    )
  const number = (name: string, label: string, options: NumberOptions) =>
    field(
      errors,
      { name, label, required: options.required, hint: options.hint },
      input({
        type: 'number',
        min: options.min,
        max: options.max,
        step: options.step,
        inputmode: options.step === '1' ? 'numeric' : 'decimal',
        value: options.value === undefined ? '' : String(options.value),
      }),
    )
  return { text, number }
}

type FieldMakers = ReturnType<typeof fieldMakers>

const str = (value: unknown) => (value === undefined || value === null ? '' : String(value))

/** The fields only one kind has: where they go in the form, and how they add to its value. */
interface KindFields {
  /** In the "Model" section, after the shared ones. */
  modelFields: Child[]
  /** Sections after "Model". */
  sections: Child[]
  collect(value: FormValue): void
}

function embedderFields(
  errors: FormErrors,
  make: FieldMakers,
  initial: Registration | undefined,
  modalities: HTMLElement,
): KindFields {
  const dimensionality = make.number('dimensionality', 'Dimensionality', {
    min: 1,
    max: INT32_MAX,
    step: '1',
    required: true,
    hint: 'Output vector dimensions.',
    value: initial?.dimensionality,
  })
  const distributionType = field(
    errors,
    { name: 'distributionType', label: 'Distribution type' },
    select([...DISTRIBUTION_TYPES]),
  )
  distributionType.control.value = str(initial?.distributionType) || 'DENSE'
  const maxSequenceLength = make.number('maxSequenceLength', 'Max sequence length', {
    min: 1,
    max: INT32_MAX,
    step: '1',
    hint: 'Optional; maximum input sequence length in tokens.',
    value: initial?.maxSequenceLength,
  })
  return {
    modelFields: [
      h('div', { class: 'row' }, dimensionality.wrapper, distributionType.wrapper, maxSequenceLength.wrapper),
      modalities,
    ],
    sections: [],
    collect(value) {
      value.dimensionality = numberOrUndefined(dimensionality.control)
      value.distributionType = distributionType.control.value
      value.maxSequenceLength = numberOrUndefined(maxSequenceLength.control)
    },
  }
}

function llmFields(
  errors: FormErrors,
  make: FieldMakers,
  initial: Registration | undefined,
  modalities: HTMLElement,
): KindFields {
  const maxContextLength = make.number('maxContextLength', 'Max context length', {
    min: 1,
    max: INT32_MAX,
    step: '1',
    hint: 'Optional; in tokens.',
    value: initial?.maxContextLength,
  })
  const capabilities = (initial?.capabilities ?? {}) as Record<string, boolean | undefined>
  const capabilityBoxes = CAPABILITIES.map(([name, , fallback]) =>
    h('input', {
      type: 'checkbox',
      name: `capabilities.${name}`,
      value: name,
      checked: capabilities[name] ?? fallback,
    }),
  )
  const capabilityGroup = groupField(
    errors,
    {
      name: 'capabilities',
      label: 'Capabilities',
      hint: 'Chat, sampling parameters and system messages are on by default.',
    },
    capabilityBoxes,
    CAPABILITIES.map(([, label]) => label),
  )
  const sampling = (initial?.defaultSamplingParams ?? {}) as Record<string, unknown>
  const samplingFields: Record<string, HTMLInputElement> = {}
  const samplingWrappers = SAMPLING.map((spec) => {
    const made = make.number(`defaultSamplingParams.${spec.name}`, spec.label, {
      min: spec.min,
      max: spec.max,
      step: spec.step,
      hint: spec.hint,
      value: sampling[spec.name],
    })
    samplingFields[spec.name] = made.control
    return made.wrapper
  })
  const stopSequences = field(
    errors,
    { name: 'defaultSamplingParams.stopSequences', label: 'Stop sequences', hint: 'One per line; at most 16.' },
    textarea({
      rows: 2,
      value: ((sampling.stopSequences as string[] | undefined) ?? []).join('\n'),
      spellcheck: 'false',
    }),
  )
  const clientConfig = field(
    errors,
    {
      name: 'clientConfig',
      label: 'Client config (JSON)',
      hint: 'Optional provider-specific configuration: a JSON object.',
    },
    textarea({
      rows: 3,
      class: 'mono',
      value: str(initial?.clientConfig),
      spellcheck: 'false',
      placeholder: '{"timeoutMs": 30000}',
    }),
  )
  return {
    modelFields: [maxContextLength.wrapper, modalities],
    sections: [
      h('div', { class: 'form-section capabilities' }, capabilityGroup),
      h(
        'fieldset',
        { class: 'form-section', 'data-field': 'defaultSamplingParams' },
        h('legend', null, 'Default sampling'),
        h('p', { class: 'hint' }, 'Each is optional; leave a field empty to leave it unset.'),
        h('div', { class: 'grid3' }, samplingWrappers),
        stopSequences.wrapper,
      ),
      h('fieldset', { class: 'form-section' }, h('legend', null, 'Client'), clientConfig.wrapper),
    ],
    collect(value) {
      value.maxContextLength = numberOrUndefined(maxContextLength.control)
      value.clientConfig = clientConfig.control.value.trim()
      value.capabilities = Object.fromEntries(capabilityBoxes.map((box) => [box.value, box.checked]))
      const chosen: Record<string, unknown> = {}
      for (const spec of SAMPLING) {
        const given = numberOrUndefined(samplingFields[spec.name]!)
        if (given !== undefined) chosen[spec.name] = given
      }
      const stops = lines(stopSequences.control.value)
      if (stops.length) chosen.stopSequences = stops
      value.defaultSamplingParams = chosen
    },
  }
}

/** A reranker has only the fields every registration has: the modalities stand alone in "Model". */
function rerankerFields(
  _errors: FormErrors,
  _make: FieldMakers,
  _initial: Registration | undefined,
  modalities: HTMLElement,
): KindFields {
  return { modelFields: [modalities], sections: [], collect() {} }
}

const OWN_FIELDS: Record<RegistryKind['kind'], typeof embedderFields> = {
  embedder: embedderFields,
  llm: llmFields,
  reranker: rerankerFields,
}

const MODEL_PLACEHOLDERS: Record<RegistryKind['kind'], string> = {
  embedder: 'e.g. BAAI/bge-small-en-v1.5',
  llm: 'e.g. llama-3.1-8b-instruct',
  reranker: 'e.g. BAAI/bge-reranker-base',
}

/** The credential form (none, inline API key, cloud ADC) with the panel of the chosen form; a stored secret is kept unless a new one is typed. */
function credentialsSection(
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

function buildForm(
  kind: RegistryKind,
  context: PageContext,
  initial: Registration | undefined,
  onSubmit: (form: RegistryForm) => Promise<void>,
): RegistryForm {
  const isEdit = initial !== undefined
  const isEmbedder = kind.kind === 'embedder'
  const errors = new FormErrors({ replaceLabels: 'labels', mergeLabels: 'labels' })
  const make = fieldMakers(errors)
  const { text } = make

  // ---- basics
  const provider0 = str(initial?.providerType) || kind.providers[0]!
  const displayName = text('displayName', 'Display name', {
    required: true,
    value: str(initial?.displayName),
    max: 200,
  })
  const description = field(
    errors,
    { name: 'description', label: 'Description' },
    textarea({ rows: 2, value: str(initial?.description), maxlength: 2000 }),
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
    max: 256,
    placeholder: MODEL_PLACEHOLDERS[kind.kind],
  })
  const version = text('version', 'Version', {
    value: str(initial?.version),
    max: 128,
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
    h(
      'fieldset',
      { class: 'form-section' },
      h('legend', null, 'Endpoint'),
      endpointUrl.wrapper,
      h('div', { class: 'row' }, apiPath.wrapper, monitoringEndpoint.wrapper),
    ),
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

/** Create: empty texts, unset numbers and empty sampling are left out (the server's defaults apply). */
function createBody(value: FormValue): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, item] of Object.entries(value)) {
    if (item === '' || item === undefined) continue
    if (name === 'labels' && Object.keys(item as object).length === 0) continue
    if (name === 'defaultSamplingParams' && Object.keys(item as object).length === 0) continue
    body[name] = item
  }
  return body
}

/** Edit: only what changed; labels as replaceLabels; an inline secret only if one was typed. */
function updateBody(
  value: FormValue,
  original: FormValue,
): { body: Record<string, unknown>; violations: Array<{ field: string; description: string }> } {
  const body: Record<string, unknown> = {}
  const violations: Array<{ field: string; description: string }> = []
  for (const [name, item] of Object.entries(value)) {
    if (name === 'providerType') continue
    if (JSON.stringify(item) === JSON.stringify(original[name])) continue
    if (item === undefined) {
      violations.push({ field: name, description: 'cannot be cleared once set; enter a value' })
      continue
    }
    body[name === 'labels' ? 'replaceLabels' : name] = item
  }
  return { body, violations }
}

/** The form's value for a stored registration, so that an untouched form sends nothing. */
function originalValue(kind: RegistryKind, item: Registration): FormValue {
  const value: FormValue = {
    displayName: item.displayName ?? '',
    description: item.description ?? '',
    providerType: item.providerType,
    endpointUrl: item.endpointUrl ?? '',
    apiPath: item.apiPath ?? '',
    modelIdentifier: item.modelIdentifier ?? '',
    supportedModalities: MODALITIES.filter((modality) =>
      ((item.supportedModalities as string[] | undefined) ?? []).includes(modality),
    ),
    labels: item.labels ?? {},
    version: item.version ?? '',
    monitoringEndpoint: item.monitoringEndpoint ?? '',
  }
  if (kind.kind === 'embedder') {
    value.dimensionality = item.dimensionality
    value.distributionType = item.distributionType
    value.maxSequenceLength = item.maxSequenceLength
  } else if (kind.kind === 'llm') {
    value.maxContextLength = item.maxContextLength
    value.clientConfig = item.clientConfig ?? ''
    const capabilities = (item.capabilities ?? {}) as Record<string, boolean>
    value.capabilities = Object.fromEntries(
      CAPABILITIES.map(([name, , fallback]) => [name, capabilities[name] ?? fallback]),
    )
    const sampling = { ...((item.defaultSamplingParams ?? {}) as Record<string, unknown>) }
    if (Array.isArray(sampling.stopSequences) && sampling.stopSequences.length === 0) delete sampling.stopSequences
    const ordered: Record<string, unknown> = {}
    for (const spec of SAMPLING) if (sampling[spec.name] !== undefined) ordered[spec.name] = sampling[spec.name]
    if (sampling.stopSequences) ordered.stopSequences = sampling.stopSequences
    value.defaultSamplingParams = ordered
  }
  const stored = item.credentials ?? { kind: 'NONE' }
  const credentials: Credentials = { kind: stored.kind }
  if (stored.kind === 'API_KEY')
    credentials.apiKey = {
      headerName: stored.apiKey?.headerName ?? 'Authorization',
      prefix: stored.apiKey?.prefix ?? '',
    }
  if (stored.kind === 'CLOUD_ADC') {
    credentials.cloudAdc = { scopes: stored.cloudAdc?.scopes ?? [] }
    if (stored.cloudAdc?.quotaProjectId) credentials.cloudAdc.quotaProjectId = stored.cloudAdc.quotaProjectId
  }
  value.credentials = credentials
  return value
}

async function createView(kind: RegistryKind, context: PageContext): Promise<void> {
  const form = buildForm(kind, context, undefined, async (built) => {
    const { value, violations } = built.collect()
    if (violations.length) return built.errors.showClient(violations)
    built.errors.clear()
    const result = await call<Registration>(`Register ${kind.singular}`, 'POST', kind.path, { body: createBody(value) })
    if (!result.ok || !result.data) {
      if (result.status === 404)
        return void built.errors.show(
          { ...result.error!, details: [] },
          `The ${kind.plural} API is not available on this server`,
        )
      return void built.errors.show(result.error!, 'Not registered')
    }
    announce(`${kind.singular[0]!.toUpperCase()}${kind.singular.slice(1)} "${result.data.displayName}" registered`)
    context.navigate(itemHref(kind, result.data))
  })
  context.root.append(
    h('p', { class: 'breadcrumb' }, h('a', { href: `#/${kind.route}` }, kind.title), ' / '),
    pageHeading(`Register ${kind.article}`),
    h('p', { class: 'muted' }, 'Fields marked * are required. Defaults for the chosen provider are filled in.'),
    form.element,
  )
}

async function editView(kind: RegistryKind, context: PageContext, id: string): Promise<void> {
  const holder = h('div', null, loading(`the ${kind.singular}`))
  context.root.append(holder)
  const result = await call<Registration>(`Get ${kind.singular}`, 'GET', `${kind.path}/${encodeURIComponent(id)}`)
  if (!context.isCurrent()) return
  if (!result.ok || !result.data) {
    replace(holder, pageHeading(kind.title), errorNotice(result.error!, `Could not read the ${kind.singular}`))
    return
  }
  const item = result.data
  const original = originalValue(kind, item)
  const form = buildForm(kind, context, item, async (built) => {
    const { value, violations } = built.collect()
    const update = updateBody(value, original)
    violations.push(...update.violations)
    if (violations.length) return built.errors.showClient(violations)
    built.errors.clear()
    if (Object.keys(update.body).length === 0) {
      announce('Nothing changed')
      context.navigate(itemHref(kind, item))
      return
    }
    const saved = await call<Registration>(`Update ${kind.singular}`, 'PUT', `${kind.path}/${encodeURIComponent(id)}`, {
      body: update.body,
    })
    if (!saved.ok || !saved.data) return void built.errors.show(saved.error!)
    announce(`Saved "${saved.data.displayName}"`)
    context.navigate(itemHref(kind, saved.data))
  })
  replace(
    holder,
    h(
      'p',
      { class: 'breadcrumb' },
      h('a', { href: `#/${kind.route}` }, kind.title),
      ' / ',
      h('a', { href: itemHref(kind, item) }, String(item.displayName)),
      ' / ',
    ),
    pageHeading(`Edit ${item.displayName}`),
    form.element,
  )
}

export async function registryPage(kind: RegistryKind, context: PageContext): Promise<void> {
  const [first, second] = context.params
  if (!first) return listView(kind, context)
  if (first === 'new') return createView(kind, context)
  if (second === 'edit') return editView(kind, context, first)
  return detailView(kind, context, first)
}
