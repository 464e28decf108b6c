import type { Logger } from '../observability/logger.js'
import type { Lifecycle } from './lifecycle.js'

export interface DrainOutcome {
  quiesced: boolean
  message: string
}

/** Something that takes in work of its own (the job processor) and must stop doing so first. */
export interface WorkIntake {
  name: string
  /** Stops taking new work and resolves once the work it had already taken is done. */
  stopAndFinish(): Promise<void>
}

/**
 * Drain mode. Readiness and gRPC health flip at once (they follow the DRAINING
 * state), intakes stop, requests already accepted finish, then QUIESCED. The first
 * call starts it; later calls join it. Quiescing continues after a caller's timeout.
 */
export class DrainController {
  readonly #intakes: WorkIntake[] = []
  #quiesced: Promise<void> | undefined
  #startedAt = 0

  constructor(
    readonly lifecycle: Lifecycle,
    readonly log: Logger,
  ) {}

  addIntake(intake: WorkIntake): void {
    this.#intakes.push(intake)
  }

  get started(): boolean {
    return this.#quiesced !== undefined
  }

  drain(reason: string, timeoutMs: number): Promise<DrainOutcome> {
    if (!this.#quiesced) {
      this.#startedAt = performance.now()
      this.lifecycle.transition('DRAINING')
      this.log.info('drain started: readiness off, new requests refused', { reason, inFlight: this.lifecycle.inFlight })
      this.#quiesced = this.#quiesce()
    }
    return this.#waitUpTo(timeoutMs)
  }

  async #quiesce(): Promise<void> {
    await Promise.all([
      ...this.#intakes.map(async (intake) => {
        await intake.stopAndFinish()
        this.log.info('drain: intake stopped and its work finished', { intake: intake.name, afterMs: this.#elapsed() })
      }),
      (async () => {
        while (!(await this.lifecycle.waitForIdle(60_000))) {
          this.log.warn('drain: still waiting for requests in flight', { inFlight: this.lifecycle.inFlight })
        }
        this.log.info('drain: last request in flight finished', { afterMs: this.#elapsed() })
      })(),
    ])
    this.lifecycle.transition('QUIESCED')
    this.log.info('drain complete: QUIESCED', { afterMs: this.#elapsed() })
  }

  #elapsed(): number {
    return Math.round(performance.now() - this.#startedAt)
  }

  async #waitUpTo(timeoutMs: number): Promise<DrainOutcome> {
    if (this.lifecycle.state === 'QUIESCED') return { quiesced: true, message: 'quiesced: nothing is in flight' }
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    const quiesced = await Promise.race([this.#quiesced!.then(() => true as const), timedOut])
    clearTimeout(timer)
    return quiesced
      ? { quiesced: true, message: `quiesced after ${this.#elapsed()} ms` }
      : {
          quiesced: false,
          message:
            `still draining after ${Math.round(timeoutMs / 1000)} s: ` +
            `${this.lifecycle.inFlight} request(s) in flight; it becomes QUIESCED when they finish`,
        }
  }
}
