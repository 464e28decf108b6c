import { EventEmitter } from 'node:events'

export type LifecycleState = 'STARTING' | 'READY' | 'DRAINING' | 'QUIESCED'

export const LIFECYCLE_STATES: LifecycleState[] = ['STARTING', 'READY', 'DRAINING', 'QUIESCED']

const ALLOWED_TRANSITIONS: Record<LifecycleState, LifecycleState[]> = {
  STARTING: ['READY', 'DRAINING'],
  READY: ['DRAINING'],
  DRAINING: ['QUIESCED'],
  QUIESCED: [],
}

export interface LifecycleSnapshot {
  state: LifecycleState
  databaseReachable: boolean
  databaseDiskFull: boolean
  ready: boolean
}

/**
 * The server's lifecycle: STARTING → READY → DRAINING → QUIESCED, plus whether the
 * database answers. Readiness needs both READY and a reachable database, so a lost
 * database flips /readyz and gRPC health without a state change or a restart.
 */
export class Lifecycle extends EventEmitter<{ change: [LifecycleSnapshot] }> {
  #state: LifecycleState = 'STARTING'
  #databaseReachable = false
  #databaseDiskFull = false
  #inFlight = 0
  #idleWaiters: Array<() => void> = []

  get state(): LifecycleState {
    return this.#state
  }

  /** A full disk takes the server out of rotation too: it can read but not write. */
  get ready(): boolean {
    return this.#state === 'READY' && this.#databaseReachable && !this.#databaseDiskFull
  }

  /** Past STARTING: what /startupz reports. */
  get started(): boolean {
    return this.#state !== 'STARTING'
  }

  get databaseReachable(): boolean {
    return this.#databaseReachable
  }

  get databaseDiskFull(): boolean {
    return this.#databaseDiskFull
  }

  /** Whether new work is accepted: not once draining has begun. */
  get acceptingWork(): boolean {
    return this.#state === 'STARTING' || this.#state === 'READY'
  }

  get inFlight(): number {
    return this.#inFlight
  }

  snapshot(): LifecycleSnapshot {
    return {
      state: this.#state,
      databaseReachable: this.#databaseReachable,
      databaseDiskFull: this.#databaseDiskFull,
      ready: this.ready,
    }
  }

  /** Moves forward; a repeated or backward move is ignored and reported as false. */
  transition(next: LifecycleState): boolean {
    if (!ALLOWED_TRANSITIONS[this.#state].includes(next)) return false
    this.#state = next
    this.emit('change', this.snapshot())
    return true
  }

  setDatabaseReachable(reachable: boolean): void {
    if (this.#databaseReachable === reachable) return
    this.#databaseReachable = reachable
    this.emit('change', this.snapshot())
  }

  setDatabaseDiskFull(full: boolean): void {
    if (this.#databaseDiskFull === full) return
    this.#databaseDiskFull = full
    this.emit('change', this.snapshot())
  }

  /** Counts a request in flight; call the returned function exactly once when it ends. */
  beginRequest(): () => void {
    this.#inFlight++
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.#inFlight--
      if (this.#inFlight === 0) this.#releaseIdleWaiters()
    }
  }

  /** Resolves true once nothing is in flight, or false when the timeout passes first. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#idleWaiters = this.#idleWaiters.filter((waiter) => waiter !== onIdle)
        resolve(false)
      }, timeoutMs)
      const onIdle = () => {
        clearTimeout(timer)
        resolve(true)
      }
      this.#idleWaiters.push(onIdle)
    })
  }

  #releaseIdleWaiters(): void {
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const waiter of waiters) waiter()
  }
}
