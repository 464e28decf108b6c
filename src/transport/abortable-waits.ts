/**
 * Waits of one call that end early once the call is aborted (its client went away). Racing
 * each wait against one long-lived promise, Promise.race([work, aborted]), leaves a reaction
 * on `aborted` per wait, and through it the race's promise and the value it settled with: a
 * stream's writer kept every piece it had written (a heap snapshot showed 400 MiB of a
 * retrieval's events held by one such promise) until the stream ended. Here each wait
 * registers a callback that is removed once the wait settles.
 */
export class AbortableWaits {
  #aborted = false
  readonly #waiters = new Set<() => void>()

  get aborted(): boolean {
    return this.#aborted
  }

  /** Ends every wait in progress with 'aborted', and every later one at once. */
  abort(): void {
    if (this.#aborted) return
    this.#aborted = true
    for (const waiter of this.#waiters) waiter()
    this.#waiters.clear()
  }

  /** `promise`'s outcome, or 'aborted' if the call is aborted first. */
  wait<T>(promise: Promise<T>): Promise<T | 'aborted'> {
    if (this.#aborted) return Promise.resolve('aborted')
    return new Promise<T | 'aborted'>((resolve, reject) => {
      const waiter = () => resolve('aborted')
      this.#waiters.add(waiter)
      promise.then(
        (value) => {
          this.#waiters.delete(waiter)
          resolve(value)
        },
        (error: unknown) => {
          this.#waiters.delete(waiter)
          reject(error)
        },
      )
    })
  }
}
