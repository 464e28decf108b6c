import { setTimeout as sleep } from 'node:timers/promises'
import type postgres from 'postgres'
import { isDatabaseUnreachable } from '../errors/app-error.js'
import type { Logger } from '../observability/logger.js'

/** database.ts's Sql, named here without importing it: database.ts builds these pools. */
type Sql = postgres.Sql<Record<string, never>>

/** Why a replica is or is not read from. Plain data: /readyz and the metrics show it as it is. */
export type ReplicaState = 'STARTING' | 'IN_ROTATION' | 'LAGGING' | 'DOWN' | 'NOT_A_REPLICA'

export interface ReplicaStatus {
  /** host:port/database, never a password. */
  name: string
  state: ReplicaState
  inRotation: boolean
  /** How long the replica has lacked WAL the primary had; absent while it cannot be asked. */
  lagSeconds?: number
  /** pg_last_wal_replay_lsn() at the last check. */
  replayLsn?: string
  /** The last failure, for DOWN and NOT_A_REPLICA. */
  reason?: string
  /** Epoch ms of the last change of state. */
  since: number
}

export interface ReadReplicaSettings {
  /** A replica further behind than this leaves the rotation until it has caught up. */
  maxLagMs: number
  /** How long a read waits for a replica to replay its caller's own writes before it reads from the primary. */
  readYourWritesWaitMs: number
  /** How often each replica's position and the primary's are read. */
  checkIntervalMs: number
}

/** A replica's pools: one for reads, one of a single connection for checks (never queued behind reads). */
export interface ReplicaPools {
  name: string
  reads: Sql
  checks: Sql
}

/** A check that takes longer than this counts the replica as down. */
const REPLICA_CHECK_TIMEOUT_MS = 1_000
/** How often a read waiting for its writer's WAL asks the replica again. */
const REPLAY_POLL_MS = 5
/** Checks kept beyond the lag bound, so a replica behind all of them is known to be over it. */
const EXTRA_SAMPLES = 3

/** PostgreSQL's "X/Y" WAL position as one number, to compare. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)
}

function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`
}

/**
 * Failures after which the same read is sent to the primary: the replica is gone (a
 * connection error, a shutdown), or it cancelled the statement for a conflict with the WAL
 * it replays (40001, "canceling statement due to conflict with recovery").
 */
const RECOVERY_CONFLICT = '40001'
const CONNECTION_EXCEPTION_CLASS = '08'
const CRASH_SHUTDOWN = '57P02'

export function isReplicaReadFailure(error: unknown): boolean {
  if (isDatabaseUnreachable(error)) return true
  const code = (error as { code?: unknown } | null)?.code
  return (
    typeof code === 'string' &&
    (code === RECOVERY_CONFLICT || code === CRASH_SHUTDOWN || code.startsWith(CONNECTION_EXCEPTION_CLASS))
  )
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** The primary's WAL position at one moment. */
interface PrimarySample {
  at: number
  lsn: bigint
}

class Replica {
  state: ReplicaState = 'STARTING'
  since = Date.now()
  replayed: bigint | undefined
  lagMs: number | undefined
  reason: string | undefined
  #freshReplay: Promise<bigint | undefined> | undefined

  constructor(readonly pools: ReplicaPools) {}

  get inRotation(): boolean {
    return this.state === 'IN_ROTATION'
  }

  /** The replica's replay position now; concurrent callers share one query. */
  freshReplay(): Promise<bigint | undefined> {
    this.#freshReplay ??= this.pools.checks<
      Array<{ replayed: string | null }>
    >`select pg_last_wal_replay_lsn()::text as replayed`
      .then(([row]) => {
        if (row?.replayed) this.replayed = parseLsn(row.replayed)
        return this.replayed
      })
      .catch(() => undefined)
      .finally(() => {
        this.#freshReplay = undefined
      })
    return this.#freshReplay
  }

  status(): ReplicaStatus {
    return {
      name: this.pools.name,
      state: this.state,
      inRotation: this.inRotation,
      ...(this.lagMs === undefined ? {} : { lagSeconds: this.lagMs / 1000 }),
      ...(this.replayed === undefined ? {} : { replayLsn: formatLsn(this.replayed) }),
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      since: this.since,
    }
  }
}

/**
 * Streaming replicas that reads may go to. Each is checked every `checkIntervalMs`: one that
 * does not answer, is not in recovery, or lacks WAL the primary had more than `maxLagMs` ago
 * leaves the rotation, and comes back once a check finds it answering and caught up. The lag
 * is measured against the primary's own positions at earlier checks, so an idle primary (no
 * new WAL, an old last-replayed timestamp) never makes a healthy replica look behind.
 */
export class ReadReplicas {
  readonly #replicas: Replica[]
  readonly #samples: PrimarySample[] = []
  #next = 0
  #timer: NodeJS.Timeout | undefined
  #checking: Promise<void> | undefined

  constructor(
    readonly primary: Sql,
    replicas: ReplicaPools[],
    readonly settings: ReadReplicaSettings,
    private readonly log: Logger,
  ) {
    this.#replicas = replicas.map((pools) => new Replica(pools))
  }

  /** Checks at once, then every interval; resolves after the first check. */
  async start(): Promise<void> {
    await this.check()
    this.#timer = setInterval(() => void this.check(), this.settings.checkIntervalMs)
    this.#timer.unref()
  }

  status(): ReplicaStatus[] {
    return this.#replicas.map((replica) => replica.status())
  }

  /** The primary's WAL insert position: every write committed before this call lies at or before it. */
  async primaryPosition(): Promise<bigint> {
    const [row] = await this.primary<Array<{ lsn: string }>>`select pg_current_wal_insert_lsn()::text as lsn`
    return parseLsn(row!.lsn)
  }

  /** The next replica in rotation, round robin; undefined when none is. */
  next(): ReplicaPools | undefined {
    const count = this.#replicas.length
    for (let tried = 0; tried < count; tried++) {
      const replica = this.#replicas[this.#next++ % count]!
      if (replica.inRotation) return replica.pools
    }
    return undefined
  }

  /**
   * A replica in rotation that has replayed `position`, waiting up to the read-your-writes
   * bound for one to get there; undefined when none does in time (the caller reads from the
   * primary).
   */
  async replayedTo(position: bigint, signal?: AbortSignal): Promise<ReplicaPools | undefined> {
    const caughtUp = () => this.#inRotation().find((replica) => (replica.replayed ?? 0n) >= position)
    const ready = caughtUp()
    if (ready) return ready.pools
    const deadline = performance.now() + this.settings.readYourWritesWaitMs
    while (performance.now() < deadline && !signal?.aborted) {
      const candidates = this.#inRotation()
      if (candidates.length === 0) return undefined
      await Promise.all(candidates.map((replica) => replica.freshReplay()))
      const found = caughtUp()
      if (found) return found.pools
      await sleep(REPLAY_POLL_MS)
    }
    return undefined
  }

  /**
   * Whether every replica in rotation has replayed `position` (asked again where its last check
   * says not); false while none is in rotation.
   */
  async allReplayed(position: bigint): Promise<boolean> {
    const inRotation = this.#inRotation()
    if (inRotation.length === 0) return false
    const positions = await Promise.all(
      inRotation.map((replica) => ((replica.replayed ?? 0n) >= position ? replica.replayed : replica.freshReplay())),
    )
    return positions.every((replayed) => (replayed ?? 0n) >= position)
  }

  /** A read on this replica failed as if it were gone: out of rotation until a check finds it back. */
  readFailed(pools: ReplicaPools, error: unknown): void {
    const replica = this.#replicas.find((entry) => entry.pools === pools)
    if (!replica || !isDatabaseUnreachable(error)) return
    this.#enter(replica, 'DOWN', describe(error))
  }

  async close(): Promise<void> {
    clearInterval(this.#timer)
    await this.#checking
    await Promise.all(
      this.#replicas.flatMap((replica) => [
        replica.pools.reads.end({ timeout: 5 }),
        replica.pools.checks.end({ timeout: 1 }),
      ]),
    )
  }

  #inRotation(): Replica[] {
    return this.#replicas.filter((replica) => replica.inRotation)
  }

  /** One round of checks; a round still running when the next is due is not doubled. */
  check(): Promise<void> {
    this.#checking ??= this.#checkAll().finally(() => {
      this.#checking = undefined
    })
    return this.#checking
  }

  async #checkAll(): Promise<void> {
    try {
      const [row] = await withTimeout(
        this.primary<Array<{ lsn: string }>>`select pg_current_wal_lsn()::text as lsn`,
        REPLICA_CHECK_TIMEOUT_MS,
        'the primary',
      )
      this.#samples.push({ at: Date.now(), lsn: parseLsn(row!.lsn) })
    } catch {
      // Without the primary's position lag cannot be judged; the replicas keep their state.
      return
    }
    const keepFrom = Date.now() - this.settings.maxLagMs - EXTRA_SAMPLES * this.settings.checkIntervalMs
    while (this.#samples.length > 1 && this.#samples[0]!.at < keepFrom) this.#samples.shift()
    await Promise.all(this.#replicas.map((replica) => this.#checkReplica(replica)))
  }

  async #checkReplica(replica: Replica): Promise<void> {
    let row: { recovering: boolean; replayed: string | null } | undefined
    try {
      ;[row] = await withTimeout(
        replica.pools.checks<Array<{ recovering: boolean; replayed: string | null }>>`
          select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as replayed`,
        REPLICA_CHECK_TIMEOUT_MS,
        `read replica ${replica.pools.name}`,
      )
    } catch (error) {
      replica.lagMs = undefined
      this.#enter(replica, 'DOWN', describe(error))
      return
    }
    if (!row?.recovering || !row.replayed) {
      this.#enter(
        replica,
        'NOT_A_REPLICA',
        'not in recovery: it is a primary, or a promoted replica; reads would miss writes',
      )
      return
    }
    replica.replayed = parseLsn(row.replayed)
    replica.lagMs = this.#lagMs(replica.replayed)
    if (replica.lagMs > this.settings.maxLagMs)
      this.#enter(replica, 'LAGGING', `behind the primary by more than ${this.settings.maxLagMs} ms`)
    else this.#enter(replica, 'IN_ROTATION', undefined)
  }

  /** Since when the replica has lacked WAL the primary had: the earliest check whose position it has not replayed. */
  #lagMs(replayed: bigint): number {
    const firstMissed = this.#samples.find((sample) => sample.lsn > replayed)
    return firstMissed ? Date.now() - firstMissed.at : 0
  }

  #enter(replica: Replica, state: ReplicaState, reason: string | undefined): void {
    replica.reason = reason
    if (replica.state === state) return
    const was = replica.state
    replica.state = state
    replica.since = Date.now()
    const fields = {
      replica: replica.pools.name,
      state,
      was,
      ...(replica.lagMs === undefined ? {} : { lagSeconds: replica.lagMs / 1000 }),
      ...(reason ? { reason } : {}),
    }
    if (state === 'IN_ROTATION') this.log.info('read replica in rotation', fields)
    else this.log.warn('read replica out of rotation: reads go to the other replicas or the primary', fields)
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message
}
