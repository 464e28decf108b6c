/**
 * Chunking a large memory is seconds of work on the thread that also answers every request.
 * It is written as a generator that stops (yields) whenever its Pacer says its slice of time
 * is spent; runInTurns then gives the event loop a turn before going on, so requests are
 * answered between slices instead of after the whole memory.
 */

/** How long chunking may hold the event loop at a time (a single regex search may run longer). */
export const SLICE_MS = 20
/** Reading the clock costs more than a cheap step of chunking: it is read once per this many steps. */
export const STEPS_PER_CLOCK_READ = 1_024

/** Tells a generator, at each step, whether its slice is spent and it should pause; a costly step weighs as many cheap ones. */
export interface Pacer {
  due(weight?: number): boolean
}

/** For chunking in one go: never asks to pause. */
export const NEVER_DUE: Pacer = { due: () => false }

/** When the slice running now began: set as a run is let go, shared by every run (they take turns). */
let sliceStartedAt = 0

class SlicePacer implements Pacer {
  #steps = 0

  due(weight = 1): boolean {
    this.#steps += weight
    if (this.#steps < STEPS_PER_CLOCK_READ) return false
    this.#steps = 0
    return performance.now() - sliceStartedAt >= SLICE_MS
  }
}

/**
 * Runs waiting for a turn, let go one per turn of the event loop: five ingest runs chunking at
 * once then hold the loop for one slice between its polls for I/O, not five.
 */
const waiting: Array<() => void> = []

function letOneGo() {
  sliceStartedAt = performance.now()
  waiting.shift()?.()
  if (waiting.length > 0) setImmediate(letOneGo)
}

/** Resolves on a later turn of the event loop, once the runs that asked before have had theirs. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve)
    if (waiting.length === 1) setImmediate(letOneGo)
  })
}

/** Runs one slice of the work, `next` being the generator's; a wrapper may time it or bound it. */
export type SliceRunner = <T>(next: () => IteratorResult<void, T>) => IteratorResult<void, T>

const runDirectly: SliceRunner = (next) => next()

/**
 * Runs the work a slice at a time, giving the event loop a turn between slices. A run that
 * starts after others have used the current slice pauses at its first reading of the clock,
 * so the memories of one batch take turns too.
 */
export async function runInTurns<T>(
  work: (pacer: Pacer) => Generator<void, T, void>,
  runSlice: SliceRunner = runDirectly,
): Promise<T> {
  const steps = work(new SlicePacer())
  for (;;) {
    const result = runSlice(() => steps.next())
    if (result.done) return result.value
    await nextTurn()
  }
}

/** Runs the work to its end without pausing. */
export function runAtOnce<T>(work: (pacer: Pacer) => Generator<void, T, void>): T {
  const steps = work(NEVER_DUE)
  for (;;) {
    const result = steps.next()
    if (result.done) return result.value
  }
}
