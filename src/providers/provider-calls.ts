/**
 * The calls this process makes to each provider for background work (ingestion), and which
 * providers stopped answering. A call that gets no answer within its timeout marks its
 * provider stalled: it is then called again only after a cool-down, one call at a time (a
 * trial), and every other call fails at once, saying why and since when. Without this,
 * each run for a stalled provider would wait out a timeout of its own, holding a worker, to
 * learn what the first one learnt. Any answer, an error status included, ends the stall:
 * the provider is there again.
 */

/** Why a call was not made, and when one may be tried again. */
export interface StallRefusal {
  admitted: false
  reason: string
  retryAfterMs: number
}

/** A call under way; it must be ended once, with what became of it. */
export interface AdmittedCall {
  admitted: true
  /** The provider answered (whatever the answer), or failed in a way that is not a stall. */
  answered(): void
  /** No answer within the timeout: the provider is stalled from now, for a cool-down. */
  noAnswer(reason: string): void
}

interface Stall {
  /** The call that got no answer: its error, and when it ended. */
  reason: string
  at: number
  /** The earliest a trial call may go out. */
  retryAt: number
  trialInFlight: boolean
}

const iso = (ms: number) => new Date(ms).toISOString()

export class ProviderCalls {
  readonly #inFlight = new Map<string, number>()
  readonly #stalls = new Map<string, Stall>()

  constructor(
    /** How long a stalled provider is left alone before a trial call. */
    readonly cooldownMs: number,
    readonly now: () => number = Date.now,
  ) {}

  /** A call to the provider starts now, or is refused because the provider is stalled. */
  admit(providerId: string): AdmittedCall | StallRefusal {
    const stall = this.#stalls.get(providerId)
    if (stall) {
      const now = this.now()
      if (stall.trialInFlight || now < stall.retryAt) {
        const next = stall.trialInFlight
          ? 'a call to see whether it answers again is under way'
          : `the next call goes out after ${iso(stall.retryAt)}`
        return {
          admitted: false,
          reason: `stalled: a call got ${stall.reason} (at ${iso(stall.at)}); ${next}`,
          // A trial ends within its timeout, and a failed one starts another cool-down.
          retryAfterMs: stall.trialInFlight ? this.cooldownMs : stall.retryAt - now,
        }
      }
      stall.trialInFlight = true
    }
    this.#inFlight.set(providerId, (this.#inFlight.get(providerId) ?? 0) + 1)
    let ended = false
    const end = () => {
      if (ended) return false
      ended = true
      const left = this.#inFlight.get(providerId)! - 1
      if (left > 0) this.#inFlight.set(providerId, left)
      else this.#inFlight.delete(providerId)
      return true
    }
    return {
      admitted: true,
      answered: () => {
        if (end()) this.#stalls.delete(providerId)
      },
      noAnswer: (reason) => {
        if (!end()) return
        const at = this.now()
        this.#stalls.set(providerId, { reason, at, retryAt: at + this.cooldownMs, trialInFlight: false })
      },
    }
  }

  /**
   * Providers that must not be given more calls now: `limit` of this process's calls are
   * under way to them, or they are stalled and a trial call is under way.
   */
  busy(limit: number): Set<string> {
    const busy = new Set<string>()
    for (const [providerId, calls] of this.#inFlight) if (calls >= limit) busy.add(providerId)
    for (const [providerId, stall] of this.#stalls) if (stall.trialInFlight) busy.add(providerId)
    return busy
  }
}
