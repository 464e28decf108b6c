// Edit a registration: the form filled in with its settings; only what changed is sent.
import { call } from '../../api.js'
import { h, replace } from '../../dom.js'
import { CAPABILITIES, MODALITIES, type RegistryKind, SAMPLING } from '../../registry-kinds.js'
import type { Credentials, PageContext, Registration } from '../../types.js'
import { announce, errorNotice, loading, pageHeading } from '../../ui.js'
import { buildForm } from './form.js'
import type { FormValue } from './form-parts.js'
import { itemHref } from './shared.js'

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

export async function editView(kind: RegistryKind, context: PageContext, id: string): Promise<void> {
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
