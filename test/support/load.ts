// A bounded load for the fault suite: a few concurrent workers repeat one operation
// until told to stop (or a hard cap on attempts), and every attempt is recorded with
// when it started, how long it took and how it ended, so a test can say what happened
// during each phase of a fault.
import { httpRequest } from './http-client.js'

export interface Attempt {
  worker: number
  /** ms since the load started. */
  startedAt: number
  ms: number
  /** HTTP status, or 0 when no response came (connection refused, reset, timeout). */
  status: number
  /** The id the server acknowledged, for writes that succeeded. */
  ackId?: string
  error?: string
}

export interface LoadOptions {
  workers: number
  /** Hard bound on attempts across all workers, whatever the test does. */
  maxAttempts: number
  /** One attempt; resolves with the status and, for an acknowledged write, its id. */
  attempt(worker: number, sequence: number): Promise<{ status: number; ackId?: string }>
}

export interface RunningLoad {
  readonly attempts: Attempt[]
  /** ms since the load started. */
  now(): number
  stop(): Promise<Attempt[]>
}

/** Pause between attempts of one worker: enough for other clients to get a turn. */
const THINK_MS = 5

export function startLoad(options: LoadOptions): RunningLoad {
  const started = performance.now()
  const now = () => performance.now() - started
  const attempts: Attempt[] = []
  let running = true
  let sequence = 0
  const worker = async (index: number) => {
    while (running && sequence < options.maxAttempts) {
      const mine = sequence++
      const startedAt = now()
      try {
        const outcome = await options.attempt(index, mine)
        attempts.push({ worker: index, startedAt, ms: now() - startedAt, status: outcome.status, ackId: outcome.ackId })
      } catch (error) {
        attempts.push({ worker: index, startedAt, ms: now() - startedAt, status: 0, error: (error as Error).message })
      }
      await new Promise((resolve) => setTimeout(resolve, THINK_MS))
    }
  }
  const done = Promise.all(Array.from({ length: options.workers }, (_, index) => worker(index)))
  return {
    attempts,
    now,
    async stop() {
      running = false
      await done
      return attempts
    },
  }
}

/** Polls a probe URL and records each answer's time and status, for "how soon did it flip". */
export function watchStatus(
  url: string,
  intervalMs: number,
  clock: () => number,
): { samples: Array<{ at: number; status: number }>; stop(): Promise<void> } {
  const samples: Array<{ at: number; status: number }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const at = clock()
      const status = await httpRequest(url, { timeoutMs: 2_000 }).then(
        (response) => response.status,
        () => 0,
      )
      samples.push({ at, status })
      await new Promise((resolve) => setTimeout(resolve, intervalMs))
    }
  })()
  return {
    samples,
    async stop() {
      running = false
      await loop
    },
  }
}

/** First sample at or after `from` whose status satisfies `wanted`; its time minus `from`. */
export function firstAfter(
  samples: Array<{ at: number; status: number }>,
  from: number,
  wanted: (status: number) => boolean,
): number | undefined {
  const hit = samples.find((sample) => sample.at >= from && wanted(sample.status))
  return hit === undefined ? undefined : hit.at - from
}
