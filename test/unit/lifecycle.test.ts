import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  LIFECYCLE_STATES,
  Lifecycle,
  type LifecycleSnapshot,
  type LifecycleState,
} from '../../src/lifecycle/lifecycle.js'

/** Drives a fresh lifecycle to `state` through allowed transitions. */
function lifecycleIn(state: LifecycleState): Lifecycle {
  const lifecycle = new Lifecycle()
  const path: Record<LifecycleState, LifecycleState[]> = {
    STARTING: [],
    READY: ['READY'],
    DRAINING: ['READY', 'DRAINING'],
    QUIESCED: ['READY', 'DRAINING', 'QUIESCED'],
  }
  for (const next of path[state]) expect(lifecycle.transition(next)).toBe(true)
  return lifecycle
}

function recordChanges(lifecycle: Lifecycle): LifecycleSnapshot[] {
  const events: LifecycleSnapshot[] = []
  lifecycle.on('change', (snapshot) => events.push(snapshot))
  return events
}

afterEach(() => {
  vi.useRealTimers()
})

describe('lifecycle states', () => {
  it('starts in STARTING: not ready, not started, accepting work, database unknown', () => {
    const lifecycle = new Lifecycle()
    expect(lifecycle.snapshot()).toEqual({
      state: 'STARTING',
      databaseReachable: false,
      databaseDiskFull: false,
      ready: false,
    })
    expect(lifecycle.started).toBe(false)
    expect(lifecycle.acceptingWork).toBe(true)
    expect(lifecycle.inFlight).toBe(0)
  })

  it('lists the four states in order', () => {
    expect(LIFECYCLE_STATES).toEqual(['STARTING', 'READY', 'DRAINING', 'QUIESCED'])
  })
})

describe('allowed transitions', () => {
  it.each([
    ['STARTING', 'READY'],
    ['STARTING', 'DRAINING'],
    ['READY', 'DRAINING'],
    ['DRAINING', 'QUIESCED'],
  ] as Array<[LifecycleState, LifecycleState]>)('%s → %s moves and emits one change', (from, to) => {
    const lifecycle = lifecycleIn(from)
    const events = recordChanges(lifecycle)
    expect(lifecycle.transition(to)).toBe(true)
    expect(lifecycle.state).toBe(to)
    expect(events).toEqual([lifecycle.snapshot()])
    expect(events[0]!.state).toBe(to)
  })

  it('STARTING → DRAINING (shutdown before ready) is past STARTING', () => {
    const lifecycle = lifecycleIn('STARTING')
    lifecycle.transition('DRAINING')
    expect(lifecycle.started).toBe(true)
    expect(lifecycle.acceptingWork).toBe(false)
  })
})

describe('ignored transitions', () => {
  const ignored: Array<[LifecycleState, LifecycleState]> = []
  const allowed = new Set(['STARTING>READY', 'STARTING>DRAINING', 'READY>DRAINING', 'DRAINING>QUIESCED'])
  for (const from of LIFECYCLE_STATES)
    for (const to of LIFECYCLE_STATES) if (!allowed.has(`${from}>${to}`)) ignored.push([from, to])

  it('every pair not in the allowed list is ignored (12 of 16)', () => {
    expect(ignored).toHaveLength(12)
  })

  it.each(ignored)('%s → %s returns false, keeps the state and emits nothing', (from, to) => {
    const lifecycle = lifecycleIn(from)
    const before = lifecycle.snapshot()
    const events = recordChanges(lifecycle)
    expect(lifecycle.transition(to)).toBe(false)
    expect(lifecycle.snapshot()).toEqual(before)
    expect(events).toEqual([])
  })
})

describe('readiness', () => {
  it('needs READY and a reachable database', () => {
    const lifecycle = new Lifecycle()
    lifecycle.setDatabaseReachable(true)
    expect(lifecycle.ready).toBe(false) // still STARTING
    lifecycle.transition('READY')
    expect(lifecycle.ready).toBe(true)
    lifecycle.setDatabaseReachable(false)
    expect(lifecycle.ready).toBe(false)
    expect(lifecycle.state).toBe('READY') // a lost database flips readiness, not the state
    lifecycle.setDatabaseReachable(true)
    expect(lifecycle.ready).toBe(true)
  })

  it('a full database disk turns readiness off without changing the state, and space freed turns it back on', () => {
    const lifecycle = new Lifecycle()
    lifecycle.setDatabaseReachable(true)
    lifecycle.transition('READY')
    const events = recordChanges(lifecycle)
    lifecycle.setDatabaseDiskFull(true)
    expect([lifecycle.ready, lifecycle.state, lifecycle.databaseReachable]).toEqual([false, 'READY', true])
    lifecycle.setDatabaseDiskFull(true) // repeated: no second event
    lifecycle.setDatabaseDiskFull(false)
    expect(lifecycle.ready).toBe(true)
    expect(events.map((event) => [event.databaseDiskFull, event.ready])).toEqual([
      [true, false],
      [false, true],
    ])
  })

  it('READY without a database is not ready', () => {
    const lifecycle = lifecycleIn('READY')
    expect(lifecycle.databaseReachable).toBe(false)
    expect(lifecycle.ready).toBe(false)
  })

  it.each(['DRAINING', 'QUIESCED'] as LifecycleState[])('%s is not ready even with the database', (state) => {
    const lifecycle = lifecycleIn(state)
    lifecycle.setDatabaseReachable(true)
    expect(lifecycle.ready).toBe(false)
    expect(lifecycle.started).toBe(true)
    expect(lifecycle.acceptingWork).toBe(false)
  })

  it('database reachability changes emit change events; repeats do not', () => {
    const lifecycle = lifecycleIn('READY')
    const events = recordChanges(lifecycle)
    lifecycle.setDatabaseReachable(true)
    lifecycle.setDatabaseReachable(true)
    lifecycle.setDatabaseReachable(false)
    lifecycle.setDatabaseReachable(false)
    expect(events).toEqual([
      { state: 'READY', databaseReachable: true, databaseDiskFull: false, ready: true },
      { state: 'READY', databaseReachable: false, databaseDiskFull: false, ready: false },
    ])
  })

  it('a full run emits one event per change, in order', () => {
    const lifecycle = new Lifecycle()
    const events = recordChanges(lifecycle)
    lifecycle.setDatabaseReachable(true)
    lifecycle.transition('READY')
    lifecycle.transition('READY')
    lifecycle.transition('DRAINING')
    lifecycle.transition('QUIESCED')
    lifecycle.transition('STARTING')
    expect(events.map((event) => [event.state, event.ready])).toEqual([
      ['STARTING', false],
      ['READY', true],
      ['DRAINING', false],
      ['QUIESCED', false],
    ])
  })
})

describe('in-flight tracking and waitForIdle', () => {
  it('resolves true at once when nothing is in flight', async () => {
    await expect(new Lifecycle().waitForIdle(0)).resolves.toBe(true)
  })

  it('resolves true when the last request ends', async () => {
    vi.useFakeTimers()
    const lifecycle = new Lifecycle()
    const endFirst = lifecycle.beginRequest()
    const endSecond = lifecycle.beginRequest()
    expect(lifecycle.inFlight).toBe(2)
    let settled: boolean | undefined
    const idle = lifecycle.waitForIdle(60_000).then((value) => (settled = value))
    endFirst()
    await Promise.resolve()
    expect(settled).toBeUndefined()
    endSecond()
    await expect(idle).resolves.toBe(true)
    expect(lifecycle.inFlight).toBe(0)
  })

  it('resolves false when the timeout passes first, and a later end does not throw', async () => {
    vi.useFakeTimers()
    const lifecycle = new Lifecycle()
    const end = lifecycle.beginRequest()
    const idle = lifecycle.waitForIdle(1_000)
    await vi.advanceTimersByTimeAsync(1_000)
    await expect(idle).resolves.toBe(false)
    expect(lifecycle.inFlight).toBe(1)
    end()
    expect(lifecycle.inFlight).toBe(0)
  })

  it('several waiters are all released', async () => {
    const lifecycle = new Lifecycle()
    const end = lifecycle.beginRequest()
    const waiters = [lifecycle.waitForIdle(60_000), lifecycle.waitForIdle(60_000)]
    end()
    await expect(Promise.all(waiters)).resolves.toEqual([true, true])
  })

  it('calling the end function twice counts once', () => {
    const lifecycle = new Lifecycle()
    const endFirst = lifecycle.beginRequest()
    lifecycle.beginRequest()
    endFirst()
    endFirst()
    expect(lifecycle.inFlight).toBe(1)
  })
})
