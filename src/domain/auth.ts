import crypto from 'node:crypto'
import type { ChangeFeed, Database } from '../db/database.js'
import * as apiKeysSql from '../db/sql/api-keys.js'
import { unauthenticated } from '../errors/app-error.js'
import type { Logger } from '../observability/logger.js'
import { hashApiKey, isWellFormedApiKey } from './api-key-format.js'
import type { Principal } from './permissions.js'

/** Upper bound on how long a cached key can outlive a change whose notification was lost. */
export const AUTH_CACHE_TTL_MS = 10_000
const AUTH_CACHE_MAX_ENTRIES = 10_000
/** lastUsedAt is coarse on purpose: authentication must not write on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000
const USAGE_FLUSH_INTERVAL_MS = 5_000
export const AUTH_CHANGE_CHANNEL = 'memsvc_auth'
const AUTH_ACK_CHANNEL = 'memsvc_auth_ack'
/** How long a revoking write waits for every peer to confirm; a peer slower than this still has the TTL bound. */
export const REVOCATION_SYNC_TIMEOUT_MS = 2_000

interface CachedCredential {
  principal: Principal
  expiresAt: number | null
  cachedAt: number
}

/** RFC 9110 token68: what may follow the scheme. An API key is a narrower form of it. */
const TOKEN68 = '[A-Za-z0-9._~+/-]+=*'
/**
 * RFC 9110 section 11: `credentials = auth-scheme [ 1*SP token68 ]`, the scheme matched
 * case-insensitively (so `bearer` and `BEARER`, and two spaces, are valid); a tab or any
 * other separator is not. The spec also lets client libraries send the key with no scheme.
 */
const BEARER_CREDENTIALS = new RegExp(`^Bearer +(${TOKEN68})$`, 'i')
const BARE_KEY = new RegExp(`^${TOKEN68}$`)
const SPACE = 0x20

/** The key in an Authorization value (HTTP has already trimmed the optional whitespace around it), or undefined. */
export function apiKeyFromAuthorization(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined
  // The trim is a regex replace: skipped for the usual value, which has no space at either end.
  const trimmed =
    authorization.charCodeAt(0) === SPACE || authorization.charCodeAt(authorization.length - 1) === SPACE
      ? authorization.replace(/^ +| +$/g, '')
      : authorization
  const bearer = BEARER_CREDENTIALS.exec(trimmed)
  if (bearer) return bearer[1]
  return BARE_KEY.test(trimmed) ? trimmed : undefined
}

/**
 * Turns an Authorization value into a Principal. Valid keys are cached by hash so
 * the hot path does no database work. A change to a key or its user (any process,
 * any tool: a trigger sends NOTIFY) evicts it at once; while the LISTEN connection
 * is down the cache is bypassed, so revocation never waits for the TTL.
 */
export class Authenticator {
  readonly #cache = new Map<string, CachedCredential>()
  readonly #pendingUsage = new Map<string, Date>()
  readonly #lastUsageWrite = new Map<string, number>()
  #feed: ChangeFeed | undefined
  #usageSink: ((usage: Array<{ id: string; usedAt: number }>) => Promise<void>) | undefined
  #flushTimer: NodeJS.Timeout | undefined
  readonly #syncWaiters = new Map<string, { pending: Set<string>; done: () => void }>()

  constructor(
    readonly database: Database,
    readonly log: Logger,
  ) {}

  start(): void {
    this.#feed = this.database.subscribe([AUTH_CHANGE_CHANNEL, AUTH_ACK_CHANNEL], {
      onMessage: (channel, payload) => (channel === AUTH_ACK_CHANNEL ? this.#onAck(payload) : this.#onChange(payload)),
      onLiveChange: (live) => {
        // Whatever changed while we were not listening is unknown: forget everything.
        this.#cache.clear()
        this.log.info(
          live ? 'listening for API key changes' : 'API key change feed down; authenticating without cache',
          { live },
        )
      },
    })
    this.#flushTimer = setInterval(() => void this.flushUsage(), USAGE_FLUSH_INTERVAL_MS)
    this.#flushTimer.unref()
  }

  async stop(): Promise<void> {
    if (this.#flushTimer) clearInterval(this.#flushTimer)
    await this.flushUsage()
    await this.#feed?.close()
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const key = apiKeyFromAuthorization(authorization)
    if (key === undefined) throw unauthenticated('missing API key: send Authorization: Bearer <key>')
    // The cache is looked up first, with a one-shot digest straight to its base64 key:
    // only keys that were well-formed and matched a stored hash are ever cached, so a hit
    // needs no format check, and createHash()+digest()+toString() cost several times more
    // per request (bench: profile of GET /v1/apikeys).
    const cacheKey = crypto.hash('sha256', key, 'base64')
    const now = Date.now()
    let cached = this.#cache.get(cacheKey)
    if (cached && (now - cached.cachedAt > AUTH_CACHE_TTL_MS || !this.#feed?.live)) {
      this.#cache.delete(cacheKey)
      cached = undefined
    }
    if (!cached) {
      if (!isWellFormedApiKey(key)) throw unauthenticated('invalid API key')
      const row = await apiKeysSql.findCredentialByHash(this.database.primary, hashApiKey(key))
      if (!row) throw unauthenticated('invalid API key')
      if (row.status !== 'ACTIVE') throw unauthenticated('API key is inactive')
      cached = {
        principal: {
          userId: row.user_id,
          role: row.role,
          apiKeyId: row.key_id,
          user: {
            username: row.username,
            displayName: row.display_name,
            createdAt: row.user_created_at.getTime(),
            updatedAt: row.user_updated_at.getTime(),
          },
        },
        expiresAt: row.expires_at ? row.expires_at.getTime() : null,
        cachedAt: now,
      }
      if (this.#feed?.live) {
        if (this.#cache.size >= AUTH_CACHE_MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!)
        this.#cache.set(cacheKey, cached)
      }
    }
    if (cached.expiresAt !== null && cached.expiresAt <= now) throw unauthenticated('API key has expired')
    this.#noteUsage(cached.principal.apiKeyId, now)
    return cached.principal
  }

  /** In-process eviction, for writes made by this server (the trigger covers the others). */
  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.#cache) if (entry.principal.apiKeyId === keyId) this.#cache.delete(hash)
  }

  forgetUser(userId: string): void {
    for (const [hash, entry] of this.#cache) if (entry.principal.userId === userId) this.#cache.delete(hash)
  }

  #onChange(payload: string): void {
    const [kind, id] = payload.split(':')
    if (kind === 'key' && id) this.forgetKey(id)
    else if (kind === 'user' && id) this.forgetUser(id)
    else if (kind === 'sync' && id) {
      // Notifications arrive in commit order, so every eviction before this sync is done: confirm it.
      void this.database.primary`select pg_notify(${AUTH_ACK_CHANNEL}, ${`${id}:${this.database.listenerName}`})`.catch(
        () => {},
      )
    } else this.#cache.clear()
  }

  #onAck(payload: string): void {
    const separator = payload.indexOf(':')
    const waiter = this.#syncWaiters.get(payload.slice(0, separator))
    if (!waiter) return
    waiter.pending.delete(payload.slice(separator + 1))
    if (waiter.pending.size === 0) waiter.done()
  }

  /**
   * Called after a write that revokes access has committed: returns once every
   * server listening on the database has evicted what the write invalidated, so the
   * caller's very next request fails on any of them. Embedded mode has no peers.
   */
  async propagateRevocation(): Promise<void> {
    if (this.database.engine === 'embedded') return
    const peers = await this.database.primary<Array<{ name: string }>>`
      select application_name as name from pg_stat_activity
      where datname = current_database() and application_name like 'memsvc-listen-%'`
    if (peers.length === 0) return
    const nonce = crypto.randomUUID()
    const pending = new Set(peers.map((peer) => peer.name))
    const confirmed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), REVOCATION_SYNC_TIMEOUT_MS)
      const done = () => {
        clearTimeout(timer)
        resolve(true)
      }
      this.#syncWaiters.set(nonce, { pending, done })
    })
    try {
      await this.database.primary`select pg_notify(${AUTH_CHANGE_CHANNEL}, ${`sync:${nonce}`})`
      if (!(await confirmed)) {
        this.log.warn(
          'some servers did not confirm a key revocation in time; they will refuse the key within the cache bound',
          {
            unconfirmed: [...pending].join(','),
            boundMs: AUTH_CACHE_TTL_MS,
          },
        )
      }
    } finally {
      this.#syncWaiters.delete(nonce)
    }
  }

  #noteUsage(keyId: string, now: number): void {
    const lastWrite = this.#lastUsageWrite.get(keyId) ?? 0
    if (now - lastWrite < LAST_USED_RESOLUTION_MS) return
    this.#lastUsageWrite.set(keyId, now)
    this.#pendingUsage.set(keyId, new Date(now))
  }

  /**
   * A key whose last stamp is older than the resolution would be stamped again anyway, so
   * its entry can go: the map then holds the keys used in the last minute, not every key
   * this process has ever seen (a long-running server with many short-lived keys).
   */
  #forgetOldUsageWrites(now: number): void {
    for (const [keyId, lastWrite] of this.#lastUsageWrite)
      if (now - lastWrite >= LAST_USED_RESOLUTION_MS) this.#lastUsageWrite.delete(keyId)
  }

  /** Keys whose last stamp is kept (for tests: bounded by the keys used within LAST_USED_RESOLUTION_MS). */
  get usageWritesKept(): number {
    return this.#lastUsageWrite.size
  }

  /** Where usage batches go: the job queue, once the server has one. Until then they wait in memory. */
  setUsageSink(sink: (usage: Array<{ id: string; usedAt: number }>) => Promise<void>): void {
    this.#usageSink = sink
  }

  /** Hands the usage stamps collected since the last flush to a background job, off the request path. */
  async flushUsage(): Promise<void> {
    this.#forgetOldUsageWrites(Date.now())
    if (this.#pendingUsage.size === 0 || !this.#usageSink) return
    const batch = [...this.#pendingUsage].map(([id, usedAt]) => ({ id, usedAt: usedAt.getTime() }))
    this.#pendingUsage.clear()
    try {
      await this.#usageSink(batch)
    } catch (error) {
      this.log.warn('could not queue API key usage; will retry', { error: error as Error, keys: batch.length })
      for (const entry of batch)
        if (!this.#pendingUsage.has(entry.id)) this.#pendingUsage.set(entry.id, new Date(entry.usedAt))
    }
  }
}
