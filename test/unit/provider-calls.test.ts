import { describe, expect, it } from 'vitest'
import { type AdmittedCall, ProviderCalls, type StallRefusal } from '../../src/providers/provider-calls.js'

const COOLDOWN_MS = 30_000

/** A record of calls on a clock the test moves. */
function withClock() {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') }
  return { clock, calls: new ProviderCalls(COOLDOWN_MS, () => clock.now) }
}

const admitted = (outcome: AdmittedCall | StallRefusal): AdmittedCall => {
  if (!outcome.admitted) throw new Error(`refused: ${outcome.reason}`)
  return outcome
}

describe('provider calls', () => {
  it('a call that got no answer stalls its provider: calls are refused until the cool-down ends, saying why and when', () => {
    const { clock, calls } = withClock()
    admitted(calls.admit('e1')).noAnswer('no answer within 30000 ms')
    clock.now += 1_000
    const refused = calls.admit('e1')
    expect(refused).toEqual({
      admitted: false,
      reason:
        'stalled: a call got no answer within 30000 ms (at 2026-01-01T00:00:00.000Z); the next call goes out after 2026-01-01T00:00:30.000Z',
      retryAfterMs: COOLDOWN_MS - 1_000,
    })
    // Another provider is not affected.
    admitted(calls.admit('e2')).answered()
  })

  it('after the cool-down one trial call goes out; the others wait for it, and its answer ends the stall', () => {
    const { clock, calls } = withClock()
    admitted(calls.admit('e1')).noAnswer('no answer within 30000 ms')
    clock.now += COOLDOWN_MS
    const trial = admitted(calls.admit('e1'))
    const during = calls.admit('e1')
    expect(during).toMatchObject({ admitted: false, retryAfterMs: COOLDOWN_MS })
    expect((during as StallRefusal).reason).toContain('a call to see whether it answers again is under way')
    expect(calls.busy(10)).toEqual(new Set(['e1']))
    trial.answered()
    expect(calls.busy(10)).toEqual(new Set())
    admitted(calls.admit('e1')).answered()
  })

  it('a trial without an answer starts another cool-down', () => {
    const { clock, calls } = withClock()
    admitted(calls.admit('e1')).noAnswer('no answer within 30000 ms')
    clock.now += COOLDOWN_MS
    admitted(calls.admit('e1')).noAnswer('no answer within 30000 ms')
    clock.now += COOLDOWN_MS - 1
    expect(calls.admit('e1')).toMatchObject({ admitted: false, retryAfterMs: 1 })
    clock.now += 1
    expect(calls.admit('e1').admitted).toBe(true)
  })

  it('a provider is busy while the given number of calls are under way, and only then', () => {
    const { calls } = withClock()
    const first = admitted(calls.admit('e1'))
    const second = admitted(calls.admit('e1'))
    expect(calls.busy(2)).toEqual(new Set(['e1']))
    expect(calls.busy(3)).toEqual(new Set())
    second.answered()
    second.answered() // ending a call twice counts once
    expect(calls.busy(2)).toEqual(new Set())
    first.answered()
    expect(calls.busy(1)).toEqual(new Set())
  })
})
