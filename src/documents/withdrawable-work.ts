/**
 * What a pool of worker threads does the same whatever the work (a document extracted, a page
 * read by OCR): the queue in front of the threads, work its caller withdraws with an AbortSignal,
 * the load for metrics, and shutdown. The pool decides which thread runs what, and how a thread
 * that runs withdrawn work is ended.
 */
export abstract class WithdrawableWorkPool<
  Item extends { reject(error: Error): void },
  Thread extends { running?: unknown },
> {
  protected readonly threads: Thread[] = []
  protected readonly queue: Item[] = []
  protected closed = false

  /** Work waiting and running, and the threads there are, for metrics and tests. */
  get load(): { queued: number; running: number; threads: number } {
    return {
      queued: this.queue.length,
      running: this.threads.filter((thread) => thread.running).length,
      threads: this.threads.length,
    }
  }

  /** Fails what waits and what runs, and ends every thread. */
  async close(): Promise<void> {
    this.closed = true
    for (const item of this.queue.splice(0)) item.reject(this.shutdownError())
    await Promise.all([...this.threads].map((thread) => this.endOnShutdown(thread)))
  }

  /** Starts what the queue's head can run on an idle thread, or on a new one while there is room. */
  protected abstract dispatch(): void
  /** Ends running work whose caller withdrew it (waiting work is simply taken out of the queue). */
  protected abstract withdrawRunning(item: Item): void
  protected abstract shutdownError(): Error
  protected abstract endOnShutdown(thread: Thread): Promise<void>

  /**
   * Queues work built with resolve and reject functions that also stop listening to the signal,
   * so that a long-lived signal gathers no listeners. Aborting it takes waiting work out of the
   * queue (failing it with `withdrawnError`) and hands running work to withdrawRunning.
   */
  protected enqueue<Value>(
    signal: AbortSignal | undefined,
    build: (resolve: (value: Value) => void, reject: (error: Error) => void) => Item,
    withdrawnError: () => Error,
  ): Promise<Value> {
    return new Promise<Value>((resolve, reject) => {
      const onAbort = () => {
        const queued = this.queue.indexOf(item)
        if (queued < 0) return this.withdrawRunning(item)
        this.queue.splice(queued, 1)
        item.reject(withdrawnError())
      }
      const settled = () => signal?.removeEventListener('abort', onAbort)
      const item = build(
        (value) => {
          settled()
          resolve(value)
        },
        (error) => {
          settled()
          reject(error)
        },
      )
      signal?.addEventListener('abort', onAbort, { once: true })
      this.queue.push(item)
      this.dispatch()
    })
  }
}
