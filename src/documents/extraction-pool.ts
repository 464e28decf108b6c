import { Worker } from 'node:worker_threads'
import { readAsset } from '../runtime/assets.js'
import { isStandalone } from '../runtime/environment.js'
import {
  type DocumentKind,
  type ExtractedDocument,
  ExtractionError,
  type ExtractionOptions,
  type ExtractionSink,
} from './extracted-document.js'
import type { ExtractionReply, ExtractionRequest } from './extraction-messages.js'
import { WithdrawableWorkPool } from './withdrawable-work.js'

/**
 * The extraction threads of one process and the queue in front of them. Each thread extracts
 * one document at a time, under a heap limit of its own, so that a document built to exhaust
 * memory (a zip bomb that got past the limits, a PDF with a million objects) kills its thread
 * and fails as a document, while the server goes on. Threads start on first use; one that
 * dies, or is ended because its document took too long or was withdrawn, is replaced by the
 * next document. OCR is not done here: the threads send images back to the process's one OCR
 * engine, whose concurrency is the process's limit (ocr.ts).
 */

export interface ExtractionPoolOptions {
  /** Documents extracted at once. */
  threads: number
  /** Each thread's JavaScript heap limit (resourceLimits.maxOldGenerationSizeMb). */
  memoryLimitMb: number
  /** A document still running after this long is ended (its thread with it) and fails. */
  documentTimeoutMs: number
  /** The process's OCR engine; `signal` ends a recognition whose document was abandoned. */
  ocr: { recognize(image: Uint8Array, languages: string[], signal?: AbortSignal): Promise<OcrAnswer> }
}

interface OcrAnswer {
  text: string
  confidence: number
}

export const DEFAULT_EXTRACTION_THREADS = 1
export const DEFAULT_EXTRACTION_MEMORY_LIMIT_MB = 1024
/** A scanned book of a few hundred pages at about ten seconds of OCR a page fits. */
export const DEFAULT_EXTRACTION_TIMEOUT_MS = 60 * 60 * 1000

const MS_PER_SECOND = 1000

/** The pool is shut down: the document was not extracted, and may be on another start. */
export class ExtractionPoolClosed extends Error {
  override name = 'ExtractionPoolClosed'
}

interface Job {
  bytes: Uint8Array
  kind: DocumentKind
  options: ExtractionOptions
  sink: ExtractionSink
  signal?: AbortSignal
  resolve(document: ExtractedDocument): void
  reject(error: Error): void
}

interface Running {
  id: number
  job: Job
  /** Ends the OCR recognitions this document asked for when it is abandoned. */
  abandon: AbortController
  timer: NodeJS.Timeout
  /** What made a sink call fail: the document fails with it rather than with the thread's retelling. */
  sinkFailure?: Error
  settled: boolean
}

interface Thread {
  worker: Worker
  running?: Running
  /** Set when the pool ended the thread on purpose, so its exit is not taken for a crash. */
  endedBecause?: Error
}

/** From source the thread runs the TypeScript file through tsx; the standalone executable carries it bundled. */
function startWorker(memoryLimitMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: memoryLimitMb }
  if (isStandalone)
    return new Worker(readAsset('extraction-worker.cjs').toString('utf8'), { eval: true, resourceLimits })
  return new Worker(new URL('./extraction-worker.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
    resourceLimits,
  })
}

export class ExtractionPool extends WithdrawableWorkPool<Job, Thread> {
  #nextId = 1

  constructor(readonly options: ExtractionPoolOptions) {
    super()
    if (!Number.isInteger(options.threads) || options.threads < 1)
      throw new Error(`extraction threads must be a positive integer, not ${options.threads}`)
  }

  /**
   * Extracts one document in a thread. `bytes` is transferred to the thread: the caller's
   * buffer is empty afterwards (pass a copy to keep it). Fails with an ExtractionError for a
   * document that cannot be extracted (including one that exhausts its thread's memory or
   * time), with `signal.reason` when withdrawn, and ExtractionPoolClosed on shutdown.
   */
  extract(
    bytes: Uint8Array,
    kind: DocumentKind,
    options: ExtractionOptions,
    sink: ExtractionSink,
    signal?: AbortSignal,
  ): Promise<ExtractedDocument> {
    if (this.closed) return Promise.reject(new ExtractionPoolClosed('document extraction is shut down'))
    if (signal?.aborted) return Promise.reject(signal.reason)
    return this.enqueue<ExtractedDocument>(
      signal,
      (resolve, reject) => ({ bytes, kind, options, sink, signal, resolve, reject }),
      () => signal?.reason,
    )
  }

  protected shutdownError(): Error {
    return new ExtractionPoolClosed('document extraction is shutting down')
  }

  protected endOnShutdown(thread: Thread): Promise<void> {
    return this.#end(thread, this.shutdownError())
  }

  protected dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.threads.find((candidate) => !candidate.running)
      if (!thread && this.threads.length < this.options.threads) thread = this.#start()
      if (!thread) return
      this.#run(thread, this.queue.shift()!)
    }
  }

  #run(thread: Thread, job: Job): void {
    const id = this.#nextId++
    const limitMs = this.options.documentTimeoutMs
    const limit = limitMs >= MS_PER_SECOND ? `${Math.round(limitMs / MS_PER_SECOND)} s` : `${limitMs} ms`
    const timer = setTimeout(
      () => void this.#end(thread, new ExtractionError(`extraction took longer than its limit of ${limit}`)),
      this.options.documentTimeoutMs,
    )
    thread.running = { id, job, abandon: new AbortController(), timer, settled: false }
    // A thread holds the process open only while it works: an idle pool never keeps a command from ending.
    thread.worker.ref()
    const { bytes } = job
    const transferable = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    const request: ExtractionRequest = { kind: 'extract', id, bytes, documentKind: job.kind, options: job.options }
    thread.worker.postMessage(request, transferable ? [bytes.buffer as ArrayBuffer] : [])
  }

  /** Settles the thread's document once and frees the thread for the next. */
  #finish(thread: Thread, outcome: { document: ExtractedDocument } | { error: Error }): void {
    const running = thread.running
    if (!running || running.settled) return
    running.settled = true
    clearTimeout(running.timer)
    running.abandon.abort()
    thread.running = undefined
    if ('document' in outcome) running.job.resolve(outcome.document)
    else running.job.reject(outcome.error)
    if (this.threads.includes(thread)) thread.worker.unref()
    if (!this.closed) this.dispatch()
  }

  #start(): Thread {
    const thread: Thread = { worker: startWorker(this.options.memoryLimitMb) }
    thread.worker.unref()
    this.threads.push(thread)
    thread.worker.on('message', (reply: ExtractionReply) => this.#answer(thread, reply))
    let crash: Error | undefined
    thread.worker.on('error', (error: Error & { code?: string }) => {
      crash =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ExtractionError(`extraction ran out of its memory limit (${this.options.memoryLimitMb} MB)`)
          : new ExtractionError(`extraction failed: its thread crashed (${error.message})`)
    })
    thread.worker.on('exit', (code) => {
      const index = this.threads.indexOf(thread)
      if (index >= 0) this.threads.splice(index, 1)
      const error =
        thread.endedBecause ?? crash ?? new ExtractionError(`extraction failed: its thread stopped (exit code ${code})`)
      this.#finish(thread, { error })
    })
    return thread
  }

  #answer(thread: Thread, reply: ExtractionReply): void {
    const running = thread.running
    if (!running || running.id !== reply.id || running.settled) return
    const { job } = running
    switch (reply.kind) {
      case 'progress':
        job.sink.progress(reply.update)
        return
      case 'page-image':
        void this.#storePageImage(thread, running, reply.pageNumber, reply.png)
        return
      case 'ocr':
        void this.#recognize(thread, running, reply.ocrId, reply.image, reply.languages)
        return
      case 'extracted':
        this.#finish(thread, { document: reply.document })
        return
      case 'failed': {
        const error =
          running.sinkFailure ?? (reply.permanent ? new ExtractionError(reply.message) : new Error(reply.message))
        this.#finish(thread, { error })
        return
      }
    }
  }

  async #storePageImage(thread: Thread, running: Running, pageNumber: number, png: Uint8Array): Promise<void> {
    let reply: ExtractionRequest
    try {
      await running.job.sink.pageImage(pageNumber, png)
      reply = { kind: 'page-image-stored', id: running.id, pageNumber }
    } catch (error) {
      running.sinkFailure ??= error as Error
      reply = { kind: 'page-image-failed', id: running.id, pageNumber, message: (error as Error).message }
    }
    if (thread.running === running) thread.worker.postMessage(reply)
  }

  async #recognize(
    thread: Thread,
    running: Running,
    ocrId: number,
    image: Uint8Array,
    languages: string[],
  ): Promise<void> {
    let reply: ExtractionRequest
    try {
      const page = await this.options.ocr.recognize(image, languages, running.abandon.signal)
      reply = { kind: 'ocr-done', id: running.id, ocrId, text: page.text, confidence: page.confidence }
    } catch (error) {
      const message = (error as Error)?.message ?? String(error)
      reply = { kind: 'ocr-failed', id: running.id, ocrId, message, permanent: error instanceof ExtractionError }
    }
    if (thread.running === running) thread.worker.postMessage(reply)
  }

  protected withdrawRunning(job: Job): void {
    // A parser cannot be interrupted from outside: the thread goes, another starts for the next document.
    const thread = this.threads.find((candidate) => candidate.running?.job === job)
    if (thread) void this.#end(thread, job.signal?.reason ?? new Error('extraction was withdrawn'))
  }

  /** Ends the thread now; its document fails with `reason`. */
  async #end(thread: Thread, reason: Error): Promise<void> {
    thread.endedBecause ??= reason
    const index = this.threads.indexOf(thread)
    if (index >= 0) this.threads.splice(index, 1)
    this.#finish(thread, { error: reason })
    await thread.worker.terminate()
  }
}
