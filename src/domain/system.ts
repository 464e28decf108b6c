import crypto from 'node:crypto'
import * as systemSql from '../db/sql/system.js'
import * as usersSql from '../db/sql/users.js'
import type { LifecycleState } from '../lifecycle/lifecycle.js'
import { RUNTIME, type RuntimeInfo } from '../runtime/environment.js'
import { issueApiKey } from './api-keys.js'
import type { DomainContext, ServerContext } from './context.js'
import type { LicenseSummary } from './licenses.js'
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
