import crypto from 'node:crypto'
import { conflictOf } from '../db/conflicts.js'
import type { CredentialColumns } from '../db/sql/credential-columns.js'
import type { StoredProbe } from '../db/sql/probes.js'
import type { RegistrationRow } from '../db/sql/registration-table.js'
import { alreadyExists, invalidArgument, notFound } from '../errors/app-error.js'
import type { SecretBox } from '../secrets/secret-box.js'
import { MAX_LABELS } from '../validation/common.js'
import type { CredentialKind, CredentialsInput, Modality } from '../validation/registry.js'
import { hasPermission, type Permission, type Principal, requireOwnership } from './permissions.js'

/**
 * What embedders, LLMs and rerankers share: credentials (sealed at rest, never returned),
 * ownership that hides other users' registrations, label updates, duplicate mapping.
 */

export type RegistryResource = 'EMBEDDER' | 'LLM' | 'RERANKER'

/** Credentials as responses carry them: never the secret, only its short keyed fingerprint. */
export interface CredentialsView {
  kind: CredentialKind
  apiKey?: { headerName: string; prefix: string; secretFingerprint: string }
  cloudAdc?: { scopes: string[]; quotaProjectId?: string }
}

export const DEFAULT_HEADER_NAME = 'Authorization'
export const DEFAULT_BEARER_PREFIX = 'Bearer'

/** The AES-GCM associated data: a sealed secret opens only in the row it was sealed for. */
export const secretContext = (table: string, id: string) => `${table}/${id}/credential`

function adcFingerprint(scopes: string[], quotaProjectId: string | undefined): string {
  const canonical = JSON.stringify([[...new Set(scopes)].sort(), quotaProjectId ?? null])
  return `adc:${crypto.createHash('sha256').update(canonical).digest('hex')}`
}

/**
 * Turns validated credentials into the stored columns, sealing an inline secret for
 * `context`. On update an API_KEY input without a secret keeps the current one.
 */
export function storeCredentials(
  box: SecretBox,
  input: CredentialsInput | undefined,
  context: string,
  current?: CredentialColumns,
): CredentialColumns {
  const credentials = input ?? { kind: 'NONE' as const }
  switch (credentials.kind) {
    case 'NONE':
      return { credential_kind: 'NONE', credential: {}, credential_secret: null, credential_fingerprint: 'none' }
    case 'CLOUD_ADC': {
      const scopes = credentials.cloudAdc?.scopes ?? []
      const quotaProjectId = credentials.cloudAdc?.quotaProjectId
      return {
        credential_kind: 'CLOUD_ADC',
        credential: quotaProjectId === undefined ? { scopes } : { scopes, quotaProjectId },
        credential_secret: null,
        credential_fingerprint: adcFingerprint(scopes, quotaProjectId),
      }
    }
    case 'API_KEY': {
      const apiKey = credentials.apiKey!
      const headerName = apiKey.headerName ?? DEFAULT_HEADER_NAME
      // The spec's form is "Authorization: Bearer <key>"; another header gets the bare key unless a prefix is given.
      const prefix =
        apiKey.prefix ?? (headerName.toLowerCase() === DEFAULT_HEADER_NAME.toLowerCase() ? DEFAULT_BEARER_PREFIX : '')
      if (apiKey.inlineSecret === undefined) {
        if (current?.credential_kind !== 'API_KEY' || !current.credential_secret) {
          throw invalidArgument('credentials.apiKey.inlineSecret', 'is required (no stored secret to keep)')
        }
        // Only the credential columns: `current` is the whole row, and spreading it would undo the update's other fields.
        return {
          credential_kind: 'API_KEY',
          credential: { ...current.credential, headerName, prefix },
          credential_secret: current.credential_secret,
          credential_fingerprint: current.credential_fingerprint,
        }
      }
      return {
        credential_kind: 'API_KEY',
        credential: { headerName, prefix, secretFingerprint: box.shortFingerprint(apiKey.inlineSecret) },
        credential_secret: box.seal(apiKey.inlineSecret, context),
        credential_fingerprint: `api_key:${box.fingerprint(apiKey.inlineSecret)}`,
      }
    }
  }
}

export function credentialsView(row: CredentialColumns): CredentialsView {
  const stored = row.credential
  switch (row.credential_kind) {
    case 'API_KEY':
      return {
        kind: 'API_KEY',
        apiKey: {
          headerName: stored.headerName ?? DEFAULT_HEADER_NAME,
          prefix: stored.prefix ?? '',
          secretFingerprint: stored.secretFingerprint ?? '',
        },
      }
    case 'CLOUD_ADC':
      return {
        kind: 'CLOUD_ADC',
        cloudAdc:
          stored.quotaProjectId === undefined
            ? { scopes: stored.scopes ?? [] }
            : { scopes: stored.scopes ?? [], quotaProjectId: stored.quotaProjectId },
      }
    default:
      return { kind: 'NONE' }
  }
}

/** The response fields every registration has, in the order responses list them (the id comes first, under each kind's own name). */
export interface RegistrationView<ProviderType extends string> {
  ownerId: string
  displayName: string
  description?: string
  providerType: ProviderType
  endpointUrl: string
  apiPath: string
  modelIdentifier: string
  supportedModalities: Modality[]
  labels: Record<string, string>
  version?: string
  monitoringEndpoint?: string
  credentials: CredentialsView
  /** The last connectivity probe, once one has run. */
  lastProbe?: StoredProbe
  createdAt: number
  updatedAt: number
  createdById: string
  updatedById: string
}

export function registrationView<ProviderType extends string>(row: RegistrationRow): RegistrationView<ProviderType> {
  return {
    ownerId: row.owner_id,
    displayName: row.display_name,
    description: row.description ?? undefined,
    providerType: row.provider_type as ProviderType,
    endpointUrl: row.endpoint_url,
    apiPath: row.api_path,
    modelIdentifier: row.model_identifier,
    supportedModalities: row.supported_modalities as Modality[],
    labels: row.labels,
    version: row.version ?? undefined,
    monitoringEndpoint: row.monitoring_endpoint ?? undefined,
    credentials: credentialsView(row),
    lastProbe: row.probe ?? undefined,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    createdById: row.created_by,
    updatedById: row.updated_by,
  }
}

/**
 * Another user's registration is NOT_FOUND to a caller without the _ANY permission,
 * exactly as if it did not exist: a USER never learns that it does.
 */
export function requireVisible<Row extends { owner_id: string }>(
  principal: Principal,
  resource: RegistryResource,
  action: 'GET' | 'UPDATE' | 'DELETE',
  row: Row | undefined,
  what: string,
): Row {
  if (!row) throw notFound(what)
  if (row.owner_id !== principal.userId && !hasPermission(principal, `${action}_${resource}_ANY` as Permission))
    throw notFound(what)
  requireOwnership(principal, resource, action, row.owner_id)
  return row
}

export function nextLabels(
  current: Record<string, string>,
  update: { replaceLabels?: Record<string, string>; mergeLabels?: Record<string, string> },
): Record<string, string> {
  const labels = update.replaceLabels ?? (update.mergeLabels ? { ...current, ...update.mergeLabels } : current)
  if (Object.keys(labels).length > MAX_LABELS)
    throw invalidArgument('mergeLabels', `the merged label set would have more than ${MAX_LABELS} labels`)
  return labels
}

/** JSON with object keys sorted at every depth, so stored jsonb and fresh objects compare equal. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item) || Buffer.isBuffer(item)) return item
    if (item instanceof Date) return item
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    )
  })
}

/** True when `next` changes nothing in the columns an update may touch (the sealed secret aside: its fingerprint stands for it). */
export function sameColumns(
  current: Record<string, unknown>,
  next: Record<string, unknown>,
  columns: readonly string[],
): boolean {
  return columns.every((column) => stableJson(current[column] ?? null) === stableJson(next[column] ?? null))
}

/** Maps the database's uniqueness and owner constraints to the API's errors. */
export function registrationConflict(error: unknown, noun: string, id: string, ownerId: string): unknown {
  switch (conflictOf(error)) {
    case 'duplicate-registration-id':
      return alreadyExists(`an ${noun} with id ${id} already exists`)
    case 'duplicate-registration':
      return alreadyExists(
        `this owner already has an identical ${noun} registration (same provider type, endpoint URL, API path, ` +
          `model${noun === 'embedder' ? ', dimensionality' : ''} and credentials)`,
      )
    case 'missing-reference':
      return notFound(`user ${ownerId}`)
    default:
      return error
  }
}
