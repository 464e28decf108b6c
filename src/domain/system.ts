import crypto from 'node:crypto'
import * as systemSql from '../db/sql/system.js'
import * as usersSql from '../db/sql/users.js'
import type { LifecycleState } from '../lifecycle/lifecycle.js'
import { RUNTIME, type RuntimeInfo } from '../runtime/environment.js'
import { LOCAL_PROVIDER_TYPE } from '../validation/registry-values.js'
import { issueApiKey } from './api-keys.js'
import type { DomainContext, ServerContext } from './context.js'
import { createEmbedder } from './embedders.js'
import type { LicenseSummary } from './licenses.js'
import { DEFAULT_EMBEDDER_LABEL } from './local-embedders.js'
import { nowMillis } from './paging.js'

export interface SystemInfo {
  version: string
  lifecycleState: LifecycleState
  initialized: boolean
  license: LicenseSummary
  storage: string
  tlsEnabled: boolean
  /** Debug installs: where the embedded database answers psql; "" when not exposed. */
  debugDatabaseListen: string
  /** Node.js, its OpenSSL (which also serves TLS on the REST port) and uWebSockets.js. */
  runtime: RuntimeInfo
  /** Memories need pgvector; this says whether it is there, and if not, what to install. */
  memories: { available: boolean; reason?: string; pgvectorVersion?: string }
}

/** Public (no credential): enough for an operator or the console to see what is running. */
export async function getSystemInfo(server: ServerContext): Promise<SystemInfo> {
  const { facts, domainIfOpen: domain } = server
  return {
    version: facts.version,
    lifecycleState: facts.lifecycle.state,
    initialized: domain ? await systemSql.isInitialized(domain.sql) : false,
    license: facts.licenses,
    storage: domain?.storage ?? 'unknown',
    tlsEnabled: facts.tlsEnabled,
    debugDatabaseListen: domain?.database.debugListen ?? '',
    runtime: RUNTIME,
    memories: !domain
      ? { available: false, reason: 'the server has not reached its database yet' }
      : domain.vectorSupport.available
        ? { available: true, pgvectorVersion: domain.vectorSupport.version }
        : { available: false, reason: domain.vectorSupport.reason },
  }
}

export interface InitializeSystemResult {
  alreadyInitialized: boolean
  message: string
  rootApiKey?: string
  userId?: string
}

export const ROOT_USERNAME = 'root'

/**
 * Public (no credential), and safe to call any number of times: only the first call
 * creates the root admin and returns its key; concurrent callers serialise on a lock.
 */
export async function initializeSystem(context: DomainContext): Promise<InitializeSystemResult> {
  const result = await createRootAdmin(context)
  if (!result.rootApiKey) return result
  const registered = await registerLocalModels(context, result.rootApiKey)
  if (registered.length === 0) return result
  return { ...result, message: `${result.message}; local embedders registered: ${registered.join(', ')}` }
}

/**
 * Each model under the models directories (the data directory's, then the bundled ones)
 * becomes a LOCAL embedder of the root admin, labelled as the default of spaces created
 * without embedders: on a fresh host, memories are embedded from the first minute with
 * nothing else running. A model that does not load is logged and left out; init succeeds.
 */
async function registerLocalModels(context: DomainContext, rootApiKey: string): Promise<string[]> {
  const call = { requestId: 'system-init', transport: 'rest' as const, authorization: `Bearer ${rootApiKey}` }
  const registered: string[] = []
  for (const model of context.localModels.list()) {
    if (model.problem) {
      context.log.warn('local model not registered at init', { model: model.name, reason: model.problem })
      continue
    }
    try {
      const embedder = await createEmbedder(context, call, {
        displayName: `${model.name} (local)`,
        providerType: LOCAL_PROVIDER_TYPE,
        modelIdentifier: model.name,
        labels: DEFAULT_EMBEDDER_LABEL,
      })
      registered.push(`${model.name} (${embedder.dimensionality} dimensions, embedder ${embedder.embedderId})`)
    } catch (error) {
      context.log.warn('local model not registered at init', { model: model.name, reason: (error as Error).message })
    }
  }
  return registered
}

async function createRootAdmin(context: DomainContext): Promise<InitializeSystemResult> {
  return context.sql.begin(async (tx) => {
    await systemSql.lockInitialization(tx)
    if (await systemSql.isInitialized(tx)) {
      return {
        alreadyInitialized: true,
        message: 'the system is already initialised; sign in with an existing API key (an admin can create more)',
      }
    }
    const now = nowMillis()
    const rootUserId = crypto.randomUUID()
    await usersSql.insertUser(tx, {
      id: rootUserId,
      username: ROOT_USERNAME,
      display_name: 'Root administrator',
      role: 'ADMIN',
      created_at: now,
      updated_at: now,
    })
    const { rawApiKey } = await issueApiKey(tx, {
      ownerId: rootUserId,
      creatorId: rootUserId,
      labels: { purpose: 'root' },
    })
    await systemSql.markInitialized(tx, rootUserId)
    context.log.info('system initialised: root admin created', { userId: rootUserId })
    return {
      alreadyInitialized: false,
      message: 'system initialised; store the root API key now: it is shown only this once',
      rootApiKey: rawApiKey,
      userId: rootUserId,
    }
  }) as Promise<InitializeSystemResult>
}
