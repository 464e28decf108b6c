import { Worker } from 'node:worker_threads'
import { readAsset } from '../../runtime/assets.js'
import { isStandalone } from '../../runtime/environment.js'
import { extractOnnxRuntime } from '../../runtime/onnxruntime-addon.js'
import type { InferenceReply, InferenceRequest, InferenceWorkerData } from './inference-messages.js'
import type { LocalModelSettings } from './model-directory.js'
import type { EncodedTexts } from './sentence-encoder.js'

/**
 * The inference threads of one process and the queue in front of them. Each thread takes
 * one batch at a time; batches wait in two bounded queues, a query's (retrieval is waiting
 * on it) ahead of ingestion's, so a long ingest delays a retrieval by one batch at most.
 * Threads start on first use and load each model on first use; a thread that dies fails
 * its batch (transient: the caller tries again) and is replaced by the next batch.
 */

export type InferencePriority = 'query' | 'bulk'

/** A thread asked to close has this long to finish its batch and release its models; then it is terminated. */
const CLOSE_GRACE_MS = 10_000

export interface InferencePoolOptions {
  threads: number
  /** Batches that may wait for a thread, per priority; one more is refused (InferenceBusyError). */
  maxQueuedBatches: number
}

/** The queue is full: try again after a moment (ingestion's job queue does). */
export class InferenceBusyError extends Error {
  constructor(queued: number) {
    super(`the local inference threads are busy (${queued} batches waiting); try again shortly`)
    this.name = 'InferenceBusyError'
  }
}

/** The thread could not embed the batch; `modelProblem` when the model is at fault (the same batch would fail again). */
export class InferenceFailure extends Error {
  constructor(
    message: string,
    readonly modelProblem: boolean,
  ) {
    super(message)
    this.name = 'InferenceFailure'
  }
}

interface Batch {
  model: LocalModelSettings
  texts: string[]
  maxTokens?: number
  resolve(encoded: EncodedTexts): void
  reject(error: Error): void
}

interface Thread {
  worker: Worker
  /** The batch it is embedding, if any. */
  running?: { id: number; batch: Batch }
}

/** From source the thread runs the TypeScript file through tsx; the standalone executable carries it bundled. */
function startWorker(): Worker {
  if (isStandalone) {
    const workerData: InferenceWorkerData = { onnxRuntimeDir: extractOnnxRuntime() }
    return new Worker(readAsset('inference-worker.cjs').toString('utf8'), { eval: true, workerData })
  }
  const workerData: InferenceWorkerData = {}
  return new Worker(new URL('./inference-worker.ts', import.meta.url), { execArgv: ['--import', 'tsx'], workerData })
}

export class InferencePool {
  readonly #threads: Thread[] = []
  readonly #queues: Record<InferencePriority, Batch[]> = { query: [], bulk: [] }
  #nextId = 1
  #closed = false

  constructor(readonly options: InferencePoolOptions) {}

  /** Queues a batch; resolves with its vectors, or fails busy, failed or closed. */
  embed(
    model: LocalModelSettings,
    texts: string[],
    priority: InferencePriority,
    maxTokens?: number,
  ): Promise<EncodedTexts> {
    if (this.#closed) return Promise.reject(new InferenceFailure('the local inference threads are shut down', false))
    const queue = this.#queues[priority]
    if (queue.length >= this.options.maxQueuedBatches) return Promise.reject(new InferenceBusyError(queue.length))
    return new Promise<EncodedTexts>((resolve, reject) => {
      queue.push({ model, texts, maxTokens, resolve, reject })
      this.#dispatch()
    })
  }

  /** Batches waiting and running, for metrics and tests. */
  get load(): { queued: number; running: number; threads: number } {
    return {
      queued: this.#queues.query.length + this.#queues.bulk.length,
      running: this.#threads.filter((thread) => thread.running).length,
      threads: this.#threads.length,
    }
  }

  /** Every thread forgets the model; one asked for it again loads it again. */
  unload(revision: string): void {
    for (const thread of this.#threads)
      thread.worker.postMessage({ kind: 'unload', revision } satisfies InferenceRequest)
  }

  /** Fails what waits, lets each thread finish its batch and release its models, then ends the threads. */
  async close(): Promise<void> {
    this.#closed = true
    for (const batch of [...this.#queues.query.splice(0), ...this.#queues.bulk.splice(0)])
      batch.reject(new InferenceFailure('the local inference threads are shutting down', false))
    await Promise.all(
      this.#threads.splice(0).map(
        (thread) =>
          new Promise<void>((resolve) => {
            const stuck = setTimeout(() => void thread.worker.terminate(), CLOSE_GRACE_MS)
            thread.worker.once('exit', () => {
              clearTimeout(stuck)
              resolve()
            })
            thread.worker.ref()
            thread.worker.postMessage({ kind: 'close' } satisfies InferenceRequest)
          }),
      ),
    )
  }

  #dispatch(): void {
    while (this.#queues.query.length + this.#queues.bulk.length > 0) {
      let thread = this.#threads.find((candidate) => !candidate.running)
      if (!thread && this.#threads.length < this.options.threads) thread = this.#start()
      if (!thread) return
      const batch = (this.#queues.query.shift() ?? this.#queues.bulk.shift())!
      const id = this.#nextId++
      thread.running = { id, batch }
      // A thread holds the process open only while it works: an idle pool never keeps a command from ending.
      thread.worker.ref()
      const { model, texts, maxTokens } = batch
      thread.worker.postMessage({ kind: 'embed', id, model, texts, maxTokens } satisfies InferenceRequest)
    }
  }

  #start(): Thread {
    const thread: Thread = { worker: startWorker() }
    thread.worker.unref()
    this.#threads.push(thread)
    thread.worker.on('message', (reply: InferenceReply) => {
      if (reply.kind === 'closed') return
      const running = thread.running
      if (!running || running.id !== reply.id) return
      thread.running = undefined
      thread.worker.unref()
      if (reply.kind === 'embedded') running.batch.resolve(reply)
      else running.batch.reject(new InferenceFailure(reply.message, reply.modelProblem))
      this.#dispatch()
    })
    const lost = (reason: string) => {
      const index = this.#threads.indexOf(thread)
      if (index < 0) return
      this.#threads.splice(index, 1)
      thread.running?.batch.reject(new InferenceFailure(`the inference thread stopped: ${reason}`, false))
      thread.running = undefined
      if (!this.#closed) this.#dispatch()
    }
    thread.worker.on('error', (error) => lost(error.message))
    thread.worker.on('exit', (code) => lost(`exit code ${code}`))
    return thread
  }
}
