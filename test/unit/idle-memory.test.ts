// When the server gives its grown heap back (src/runtime/idle-memory.ts): only once it has been
// idle for a while, only when the heap has grown, and not more often than its spacing. What the
// collection gives back is measured by the bench (bench/README.md, "Memory after load").

import { describe, expect, it } from 'vitest'
import { createLogger } from '../../src/observability/logger.js'
import { IdleReclaimPolicy, startIdleMemoryReclaimer } from '../../src/runtime/idle-memory.js'

const MIB = 1024 * 1024
const START_HEAP = 40 * MIB
const GROWN_HEAP = 150 * MIB
const BUSY = 0.8
const IDLE = 0.01
const CHECK_MS = 2_000

/** Feeds checks two seconds apart from `startMs`; returns which of them asked for a collection. */
function run(
  policy: IdleReclaimPolicy,
  checks: Array<[utilization: number, heapBytes: number]>,
  startMs = 0,
): boolean[] {
  return checks.map(([utilization, heapBytes], index) =>
    policy.shouldCollect({ utilization, heapBytes, nowMs: startMs + index * CHECK_MS }),
  )
}

describe('giving the heap back when idle', () => {
  it('collects after two idle checks in a row once the heap has grown', () => {
    const policy = new IdleReclaimPolicy(START_HEAP)
    expect(
      run(policy, [
        [BUSY, GROWN_HEAP],
        [IDLE, GROWN_HEAP],
        [IDLE, GROWN_HEAP],
      ]),
    ).toEqual([false, false, true])
  })

  it('never collects while the server is busy', () => {
    const policy = new IdleReclaimPolicy(START_HEAP)
    expect(
      run(
        policy,
        Array.from({ length: 20 }, () => [BUSY, GROWN_HEAP]),
      ),
    ).not.toContain(true)
  })

  it('does not collect a heap that has not grown', () => {
    const policy = new IdleReclaimPolicy(START_HEAP)
    expect(
      run(
        policy,
        Array.from({ length: 10 }, () => [IDLE, START_HEAP + 10 * MIB]),
      ),
    ).not.toContain(true)
  })

  it('does not take a one-check pause in the load for its end', () => {
    const policy = new IdleReclaimPolicy(START_HEAP)
    expect(
      run(policy, [
        [BUSY, GROWN_HEAP],
        [IDLE, GROWN_HEAP],
        [BUSY, GROWN_HEAP],
        [IDLE, GROWN_HEAP],
        [BUSY, GROWN_HEAP],
      ]),
    ).not.toContain(true)
  })

  it('waits thirty seconds after a collection before the next', () => {
    const policy = new IdleReclaimPolicy(START_HEAP)
    policy.collected(30 * MIB, 0)
    const idleAndGrown = Array.from({ length: 16 }, (): [number, number] => [IDLE, GROWN_HEAP])
    const asked = run(policy, idleAndGrown, CHECK_MS)
    expect(asked.indexOf(true) * CHECK_MS + CHECK_MS).toBe(30_000)
  })

  it('measures growth from the heap the last collection left', () => {
    const policy = new IdleReclaimPolicy(START_HEAP)
    policy.collected(100 * MIB, 0)
    const later = 60_000
    expect(
      run(
        policy,
        Array.from({ length: 5 }, () => [IDLE, 110 * MIB]),
        later,
      ),
    ).not.toContain(true)
    expect(run(policy, [[IDLE, 120 * MIB]], later + 10 * CHECK_MS)).toEqual([true])
  })

  it('starts and stops in a plain Node process', () => {
    const reclaimer = startIdleMemoryReclaimer(createLogger('error'))
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined')
    reclaimer.stop()
  })
})
