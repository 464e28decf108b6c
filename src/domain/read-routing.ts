import type { Counter } from 'prom-client'
import type { ChangeFeed, Database, Sql } from '../db/database.js'
import { isReplicaReadFailure, type ReadReplicas, type ReplicaPools, type ReplicaStatus } from '../db/read-replicas.js'
import type { Principal } from './permissions.js'

export type { ReplicaStatus }

/** Where a read use case sends its statements: a replica, or the primary. */
export interface ReadConnection {
  /**
   * Runs one read. On a replica that fails as if gone (or cancels it for a recovery
   * conflict), the same read runs again on the primary, and so does every later one of the
   * same request: a reader never fails while the primary is up.
   */
  run<T>(read: (sql: Sql) => Promise<T>): Promise<T>
}

/** Why a read went where it went; the label of memsvc_db_reads_total. */
export type ReadRoute =
  | 'replica'
  | 'replica-after-wait'
  | 'primary-no-replica'
  | 'primary-own-write'
  | 'primary-replica-failed'

/**
 * How long after an API key's write its reads ask for the primary's WAL position and wait
 * for a replica to have replayed it. A write's end is not seen here (only its start, when
 * it authenticates), so this is longer than any write runs: a request, even a large import,
 * ends well within it.
 */
const OWN_WRITES_WINDOW_MS = 10 * 60_000
/** Writers remembered before the oldest marks are swept. */
const WRITERS_SWEPT_AT = 10_000
/** Every process sharing the primary announces here which API key is about to write. */
export const KEY_WRITES_CHANNEL = 'memsvc_key_writes'

/**
 * Chooses each read's connection. Without replicas every read is the primary's. With them a
 * read goes to the next replica in rotation, except that an API key's reads after its own
 * writes go only to a replica that has replayed them (waiting up to the bound), else to the
 * primary: a writer never reads an answer older than its write. Other keys read what the
 * replica has, at most the lag bound behind.
 */
export class ReadRouting {
  readonly #lastWriteAt = new Map<string, number>()
  #peers: ChangeFeed | undefined
  /**
   * While the other processes' announcements may have been missed (before the feed first
   * listens, while it is down), every key counts as a recent writer: until every replica in
   * rotation has replayed what the primary had once the feed listened again ('unknown' until
   * that position is known).
   */
  #peersUncertainUntil: bigint | 'unknown' | undefined

  constructor(
    private readonly primary: () => Sql,
    private readonly replicas: ReadReplicas | undefined,
    private readonly reads?: Counter<'route'>,
  ) {}

  /** Each read replica's state; undefined without replicas. */
  replicaStatus(): ReplicaStatus[] | undefined {
    return this.replicas?.status()
  }

  /**
   * Hears the other memsvc processes' writers, so that a key's read here waits for its write
   * there: behind a load balancer, a key's requests may reach any process.
   */
  listenToPeers(database: Database): void {
    const replicas = this.replicas
    if (!replicas) return
    this.#peersUncertainUntil = 'unknown'
    this.#peers = database.subscribe([KEY_WRITES_CHANNEL], {
      onMessage: (_channel, apiKeyId) => this.#markWriter(apiKeyId),
      onLiveChange: (live) => {
        this.#peersUncertainUntil = 'unknown'
        if (!live) return
        replicas.primaryPosition().then(
          (position) => {
            if (this.#peersUncertainUntil === 'unknown') this.#peersUncertainUntil = position
          },
          () => {},
        )
      },
    })
  }

  async close(): Promise<void> {
    await this.#peers?.close()
  }

  /**
   * The key is about to write (it authenticated for a use case that is not a read): its
   * reads here and, once announced, in every other process wait for a replica to have it.
   */
  async noteWrite(principal: Principal): Promise<void> {
    if (!this.replicas) return
    this.#markWriter(principal.apiKeyId)
    if (!this.#peers) return
    // Announced before the write runs: the other processes know by the time it is answered.
    // A failure here is the primary's, which the write itself then reports.
    await this.primary()`select pg_notify(${KEY_WRITES_CHANNEL}, ${principal.apiKeyId})`.catch(() => {})
  }

  #markWriter(apiKeyId: string): void {
    if (this.#lastWriteAt.size >= WRITERS_SWEPT_AT) this.#sweep()
    this.#lastWriteAt.set(apiKeyId, Date.now())
  }

  async #mayHaveWritten(apiKeyId: string, replicas: ReadReplicas): Promise<boolean> {
    const wroteAt = this.#lastWriteAt.get(apiKeyId)
    if (wroteAt !== undefined && Date.now() - wroteAt <= OWN_WRITES_WINDOW_MS) return true
    const until = this.#peersUncertainUntil
    if (until === undefined) return false
    if (until !== 'unknown' && (await replicas.allReplayed(until))) {
      if (this.#peersUncertainUntil === until) this.#peersUncertainUntil = undefined
      return false
    }
    return true
  }

  async connection(principal: Principal, signal?: AbortSignal): Promise<ReadConnection> {
    const replicas = this.replicas
    if (!replicas) return this.#onPrimary()
    if (!(await this.#mayHaveWritten(principal.apiKeyId, replicas))) {
      const replica = replicas.next()
      return replica ? this.#onReplica(replicas, replica, 'replica') : this.#onPrimary('primary-no-replica')
    }
    if (!replicas.next()) return this.#onPrimary('primary-no-replica')
    const replica = await replicas.replayedTo(await replicas.primaryPosition(), signal)
    return replica ? this.#onReplica(replicas, replica, 'replica-after-wait') : this.#onPrimary('primary-own-write')
  }

  #onPrimary(route?: ReadRoute): ReadConnection {
    if (route) this.reads?.inc({ route })
    return { run: (read) => read(this.primary()) }
  }

  #onReplica(replicas: ReadReplicas, replica: ReplicaPools, route: ReadRoute): ReadConnection {
    this.reads?.inc({ route })
    let failedOver = false
    return {
      run: async (read) => {
        if (failedOver) return read(this.primary())
        try {
          return await read(replica.reads)
        } catch (error) {
          if (!isReplicaReadFailure(error)) throw error
          replicas.readFailed(replica, error)
          failedOver = true
          this.reads?.inc({ route: 'primary-replica-failed' })
          return read(this.primary())
        }
      },
    }
  }

  #sweep(): void {
    const oldest = Date.now() - OWN_WRITES_WINDOW_MS
    for (const [key, at] of this.#lastWriteAt) if (at < oldest) this.#lastWriteAt.delete(key)
  }
}

/** The primary as a read connection, for a read inside a use case that writes. */
export function primaryReads(context: { readonly sql: Sql }): ReadConnection {
  return { run: (read) => read(context.sql) }
}
