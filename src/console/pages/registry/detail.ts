// One registration: every setting, its last probe, and Probe now, Edit and Delete.
import { call } from '../../api.js'
import { type Child, h, replace } from '../../dom.js'
import { CAPABILITIES, type RegistryKind } from '../../registry-kinds.js'
import type { Credentials, PageContext, Registration } from '../../types.js'
import {
  announce,
  badge,
  errorNotice,
  keyValueTable,
  labelChips,
  loading,
  pageHeading,
  section,
  setBusy,
  time,
} from '../../ui.js'
import { deleteItem, itemHref, lastProbeOf, providerLabel, requestProbe } from './shared.js'

/** After "Probe now", the detail page reads the registration again this often, this many times, for the new result. */
const PROBE_POLL_MS = 1_000
const PROBE_POLL_ATTEMPTS = 20

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

export async function detailView(kind: RegistryKind, context: PageContext, id: string): Promise<void> {
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
