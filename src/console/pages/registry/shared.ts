// What the registry's views share: a registration's id and address, its last probe, and the
// actions the list and the detail page both offer (probe again, delete).
import { call } from '../../api.js'
import type { RegistryKind } from '../../registry-kinds.js'
import type { Registration } from '../../types.js'
import { announce, confirmAndDelete } from '../../ui.js'

export const idOf = (kind: RegistryKind, item: Registration) => String(item[kind.idField] ?? '')
export const itemHref = (kind: RegistryKind, item: Registration, suffix = '') =>
  `#/${kind.route}/${encodeURIComponent(idOf(kind, item))}${suffix}`
export const providerLabel = (provider: string) => provider.replaceAll('_', ' ')

interface LastProbe {
  status: string
  checkedAt: number
  latencyMs?: number
  error?: string
  observedDimensionality?: number
}

export const lastProbeOf = (item: Registration) => item.lastProbe as LastProbe | undefined

/** Queues the connectivity probe again (POST …/{id}:probe); answers the job id, or undefined after announcing why not. */
export async function requestProbe(kind: RegistryKind, item: Registration): Promise<string | undefined> {
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

export function deleteItem(kind: RegistryKind, item: Registration): Promise<boolean> {
  return confirmAndDelete({
    confirm: {
      title: `Delete ${kind.singular} "${item.displayName}"?`,
      message: `The registration and its stored credentials are removed. This cannot be undone.`,
      confirmLabel: `Delete ${kind.singular}`,
    },
    action: `Delete ${kind.singular}`,
    path: `${kind.path}/${encodeURIComponent(idOf(kind, item))}`,
    deleted: `${kind.singular[0]!.toUpperCase()}${kind.singular.slice(1)} "${item.displayName}" deleted`,
  })
}
