/**
 * Work queued for a thread that its caller may withdraw with an AbortSignal (a document
 * extracted, a page read by OCR): the item is built with resolve and reject functions that
 * also stop listening to the signal, so that a long-lived signal gathers no listeners.
 */
export function queueWithdrawable<Value, Item>(
  signal: AbortSignal | undefined,
  build: (resolve: (value: Value) => void, reject: (error: Error) => void) => Item,
  queue: (item: Item) => void,
  withdraw: (item: Item) => void,
): Promise<Value> {
  return new Promise<Value>((resolve, reject) => {
    const onAbort = () => withdraw(item)
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
    queue(item)
  })
}
