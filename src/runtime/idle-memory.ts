import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import vm from 'node:vm'
import type { Logger } from '../observability/logger.js'

/**
 * Gives the JS heap back once a burst of load is over.
 *
 * Under load V8 grows its young generation (up to 128 MiB on Node 24) and lets the old one
 * fill with garbage before it collects; when the load stops nothing allocates, so nothing
 * collects, and the process keeps that memory. V8's own memory reducer returns it at some
 * point, but only once a later collection re-arms it: after the bench's API-key scenarios the
 * server held 305 MiB for more than 30 s (116 MiB before the load), and 135 MiB only some 90 s
 * later (bench/README.md, "Memory after load").
 *
 * So the server watches its own event loop: once it has been nearly idle for IDLE_CHECKS
 * checks in a row, with the heap grown well past its size after the last collection, it runs
 * one collection that shrinks the heap (V8's "last resort": everything collectable, the young
 * generation back to its smallest). It took 58–132 ms on 60–155 MiB heaps (it collects
 * several times over), runs only while idle, and at most once per RECLAIM_SPACING_MS, so load
 * that comes and goes costs at most that much of a core.
 */
const CHECK_INTERVAL_MS = 2_000
/** Event-loop utilisation under which an interval counts as idle (the bench's loads keep it at 0.5–1). */
const IDLE_UTILIZATION = 0.05
/** Idle checks in a row before collecting: a pause of a second or two in a load is not the end of it. */
const IDLE_CHECKS = 2
/**
 * The heap must have grown this much past its size after the last collection. Under the
 * bench's loads the server on PostgreSQL (a 32 MiB young generation, small-host-process.ts)
 * grows from some 22 MiB to 60; the embedded one, with 2 MiB, less.
 */
const HEAP_GROWTH_BYTES = 16 * 1024 * 1024
/** At most one collection this often. */
const RECLAIM_SPACING_MS = 30_000
const BYTES_PER_MIB = 1024 * 1024

/** What one check sees. */
export interface IdleCheck {
  /** Event-loop utilisation since the previous check (0–1). */
  utilization: number
  /** V8's heap as committed now (total_heap_size). */
  heapBytes: number
  nowMs: number
}

/** When to collect: idle for a while, the heap grown, and not too soon after the last collection. */
export class IdleReclaimPolicy {
  #heapAfterCollection: number
  #lastCollectionMs = Number.NEGATIVE_INFINITY
  #idleChecks = 0

  constructor(initialHeapBytes: number) {
    this.#heapAfterCollection = initialHeapBytes
  }

  shouldCollect(check: IdleCheck): boolean {
    this.#idleChecks = check.utilization <= IDLE_UTILIZATION ? this.#idleChecks + 1 : 0
    return (
      this.#idleChecks >= IDLE_CHECKS &&
      check.heapBytes >= this.#heapAfterCollection + HEAP_GROWTH_BYTES &&
      check.nowMs - this.#lastCollectionMs >= RECLAIM_SPACING_MS
    )
  }

  /** Later growth is measured from the heap's size after this collection. */
  collected(heapBytes: number, nowMs: number): void {
    this.#heapAfterCollection = heapBytes
    this.#lastCollectionMs = nowMs
    this.#idleChecks = 0
  }
}

type GarbageCollector = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void

/** Starts watching (its timer does not hold the process open); a no-op where V8 would not hand out its collector. */
export function startIdleMemoryReclaimer(log: Logger): { stop(): void } {
  const collect = garbageCollector()
  if (!collect) {
    log.debug('idle memory reclaim unavailable: V8 gave no garbage collector')
    return { stop: () => {} }
  }
  const heapBytes = () => v8.getHeapStatistics().total_heap_size
  const policy = new IdleReclaimPolicy(heapBytes())
  let previous = performance.eventLoopUtilization()
  const timer = setInterval(() => {
    const current = performance.eventLoopUtilization()
    const check = {
      utilization: performance.eventLoopUtilization(current, previous).utilization,
      heapBytes: heapBytes(),
      nowMs: performance.now(),
    }
    previous = current
    if (!policy.shouldCollect(check)) return
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    const after = heapBytes()
    const doneMs = performance.now()
    policy.collected(after, doneMs)
    // The collection's own time must not count as load at the next check.
    previous = performance.eventLoopUtilization()
    log.debug('idle: heap given back', {
      heapBeforeMiB: Math.round(check.heapBytes / BYTES_PER_MIB),
      heapAfterMiB: Math.round(after / BYTES_PER_MIB),
      ms: Math.round(doneMs - check.nowMs),
    })
  }, CHECK_INTERVAL_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

/**
 * V8's collector without --expose-gc on the command line (a standalone executable has no
 * command line of its own for Node): the flag is on only while one context is created to
 * fetch it, so no other code sees a global gc().
 */
function garbageCollector(): GarbageCollector | undefined {
  try {
    v8.setFlagsFromString('--expose-gc')
    const collect: unknown = vm.runInNewContext('gc')
    return typeof collect === 'function' ? (collect as GarbageCollector) : undefined
  } catch {
    return undefined
  } finally {
    v8.setFlagsFromString('--no-expose-gc')
  }
}
