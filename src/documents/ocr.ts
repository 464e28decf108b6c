import { Worker } from 'node:worker_threads'
import { readAsset } from '../runtime/assets.js'
import { isStandalone } from '../runtime/environment.js'
import { DEFAULT_EXTRACTION_LIMITS, ExtractionError, type OcrEngine } from './extracted-document.js'
import { prepareOcrImage } from './ocr-image.js'
import { availableLanguages, missingLanguages } from './ocr-language-files.js'
import {
  OCR_ENGINE_MODE_LSTM_ONLY,
  OCR_LANGUAGE_PATH,
  type OcrPacket,
  type OcrReply,
  type OcrThreadData,
  type RecognizedPage,
} from './ocr-protocol.js'
import { WithdrawableWorkPool } from './withdrawable-work.js'

/**
 * OCR with tesseract.js 7, for the whole process: at most `concurrency` OCR threads (each runs
 * tesseract's WebAssembly core, about 200–300 MB with a page at 300 DPI), started on first use
 * and ended after `idleTimeoutMs` without work. Every recognition in the process goes through
 * the one engine, the extraction threads' too (extraction-pool.ts forwards them here), so the
 * limit is global. Recognitions beyond it wait in order.
 *
 * A thread keeps the languages it was initialised with; a recognition for other languages takes
 * an idle thread with those if there is one, else re-initialises one (about 0.4 s). Fully
 * offline: ocr-thread.ts reads the core and the models from the executable or the languages
 * directory and never fetches.
 */

export interface OcrEngineOptions {
  /** Recognitions at once in this process: one OCR thread each. */
  concurrency: number
  /** `<lang>.traineddata(.gz)` models beyond the bundled English, e.g. `<data dir>/ocr-languages`. */
  languagesDir?: string
  /** An OCR thread without work this long ends and gives its memory back. */
  idleTimeoutMs?: number
  /** An image with more pixels is refused (ExtractionError) before it is decoded. */
  maxImagePixels?: number
}

export const DEFAULT_OCR_CONCURRENCY = 1
export const DEFAULT_OCR_IDLE_TIMEOUT_MS = 60_000

/** The OCR thread died or was ended while it worked; the same image may well succeed on another. */
export class OcrThreadStopped extends Error {
  override name = 'OcrThreadStopped'
}

interface Recognition {
  image: Uint8Array
  /** tesseract's form: "eng+deu". */
  languages: string
  resolve(page: { text: string; confidence: number }): void
  reject(error: Error): void
}

interface OcrThread {
  worker: Worker
  workerId: string
  /** The languages it is initialised with, once it is. */
  languages?: string
  running?: Recognition
  /** Packets sent and not yet answered, by `${action}-${jobId}` (the worker script's own key). */
  waiting: Map<string, { resolve(data: unknown): void; reject(error: Error): void }>
  idleTimer?: NodeJS.Timeout
  nextJob: number
}

/** From source the thread runs the TypeScript file through tsx; the standalone executable carries it bundled. */
function startOcrWorker(workerData: OcrThreadData): Worker {
  if (isStandalone) return new Worker(readAsset('ocr-thread.cjs').toString('utf8'), { eval: true, workerData })
  return new Worker(new URL('./ocr-thread.ts', import.meta.url), { execArgv: ['--import', 'tsx'], workerData })
}

let nextThreadNumber = 1

export class TesseractOcrEngine extends WithdrawableWorkPool<Recognition, OcrThread> implements OcrEngine {
  readonly #idleTimeoutMs: number
  readonly #maxImagePixels: number

  constructor(readonly options: OcrEngineOptions) {
    super()
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new Error(`OCR concurrency must be a positive integer, not ${options.concurrency}`)
    this.#idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_OCR_IDLE_TIMEOUT_MS
    this.#maxImagePixels = options.maxImagePixels ?? DEFAULT_EXTRACTION_LIMITS.maxImagePixels
  }

  /** The languages OCR can read now (the directory is read each time: an operator may add one while it runs). */
  availableLanguages(): string[] {
    return availableLanguages(this.options.languagesDir)
  }

  /**
   * The text in `image` (PNG, JPEG, TIFF, BMP or WebP) and tesseract's mean confidence (0..100).
   * An unknown language, an unreadable or oversized image are ExtractionErrors (permanent);
   * `signal` withdraws a waiting recognition and ends the thread of a running one.
   */
  async recognize(
    image: Uint8Array,
    languages: string[],
    signal?: AbortSignal,
  ): Promise<{ text: string; confidence: number }> {
    if (this.closed) throw new OcrThreadStopped('OCR is shut down')
    if (languages.length === 0) throw new ExtractionError('no OCR language given')
    const missing = missingLanguages(this.options.languagesDir, languages)
    if (missing.length > 0) {
      const where = this.options.languagesDir
        ? `; add <lang>.traineddata to ${this.options.languagesDir}`
        : ' (no OCR languages directory is configured)'
      throw new ExtractionError(
        `OCR language ${missing.join(', ')} is not available: available are ${this.availableLanguages().join(', ')}${where}`,
      )
    }
    const prepared = await prepareOcrImage(image, this.#maxImagePixels)
    signal?.throwIfAborted()
    return this.enqueue<{ text: string; confidence: number }>(
      signal,
      (resolve, reject) => ({ image: prepared, languages: languages.join('+'), resolve, reject }),
      () => new OcrThreadStopped('OCR was cancelled'),
    )
  }

  protected shutdownError(): Error {
    return new OcrThreadStopped('OCR is shutting down')
  }

  protected endOnShutdown(thread: OcrThread): Promise<void> {
    return this.#end(thread, 'OCR is shutting down')
  }

  protected dispatch(): void {
    while (this.queue.length > 0) {
      const next = this.queue[0]!
      const idle = this.threads.filter((thread) => !thread.running)
      let thread = idle.find((candidate) => candidate.languages === next.languages) ?? idle[0]
      if (!thread && this.threads.length < this.options.concurrency) thread = this.#start()
      if (!thread) return
      this.queue.shift()
      void this.#run(thread, next)
    }
  }

  async #run(thread: OcrThread, recognition: Recognition): Promise<void> {
    clearTimeout(thread.idleTimer)
    thread.running = recognition
    // A thread holds the process open only while it works: an idle engine never keeps a command from ending.
    thread.worker.ref()
    try {
      if (thread.languages !== recognition.languages) await this.#initialise(thread, recognition.languages)
      const page = (await this.#send(thread, 'recognize', {
        image: recognition.image,
        options: {},
        output: { text: true },
      })) as RecognizedPage
      recognition.resolve({ text: page.text ?? '', confidence: page.confidence ?? 0 })
    } catch (error) {
      // Tesseract's own refusal of an image (its decoder cannot read it) would be the same again: permanent.
      const refused = !(error instanceof OcrThreadStopped) && !(error instanceof ExtractionError)
      recognition.reject(
        refused ? new ExtractionError(`OCR cannot read the image: ${(error as Error).message}`) : (error as Error),
      )
    }
    if (thread.running !== recognition) return // ended meanwhile (abort, close, death)
    thread.running = undefined
    thread.worker.unref()
    thread.idleTimer = setTimeout(() => void this.#end(thread, 'idle'), this.#idleTimeoutMs).unref()
    this.dispatch()
  }

  /** Loads `languages` into the thread; a thread that fails here is ended, its state is unknown. */
  async #initialise(thread: OcrThread, languages: string): Promise<void> {
    try {
      if (thread.languages === undefined)
        await this.#send(thread, 'load', { options: { lstmOnly: true, logging: false } })
      thread.languages = undefined
      await this.#send(thread, 'loadLanguage', {
        langs: languages,
        options: { langPath: OCR_LANGUAGE_PATH, cacheMethod: 'none', gzip: true, lstmOnly: true },
      })
      await this.#send(thread, 'initialize', { langs: languages, oem: OCR_ENGINE_MODE_LSTM_ONLY, config: {} })
      thread.languages = languages
    } catch (error) {
      if (error instanceof OcrThreadStopped) throw error
      // The recognition fails with the reason below, not with the thread's ending.
      thread.running = undefined
      void this.#end(thread, 'its languages did not load')
      // A model file that does not load fails every time: permanent.
      throw new ExtractionError(`OCR cannot load language ${languages}: ${(error as Error).message}`)
    }
  }

  #send<Action extends OcrPacket['action']>(
    thread: OcrThread,
    action: Action,
    payload: Extract<OcrPacket, { action: Action }>['payload'],
  ): Promise<unknown> {
    const jobId = `Job-${thread.nextJob++}`
    return new Promise((resolve, reject) => {
      thread.waiting.set(`${action}-${jobId}`, { resolve, reject })
      // Copied, not transferred: the image may be a view into the caller's bytes (a few MB against seconds of OCR).
      thread.worker.postMessage({ workerId: thread.workerId, jobId, action, payload } as OcrPacket)
    })
  }

  #start(): OcrThread {
    const workerData: OcrThreadData = { languagesDir: this.options.languagesDir }
    const thread: OcrThread = {
      worker: startOcrWorker(workerData),
      workerId: `OcrThread-${nextThreadNumber++}`,
      waiting: new Map(),
      nextJob: 1,
    }
    thread.worker.unref()
    this.threads.push(thread)
    thread.worker.on('message', (reply: OcrReply) => {
      if (reply.status === 'progress') return
      const key = `${reply.action}-${reply.jobId}`
      const waiting = thread.waiting.get(key)
      thread.waiting.delete(key)
      if (reply.status === 'resolve') waiting?.resolve(reply.data)
      else waiting?.reject(new Error(String(reply.data).replace(/^Error: /, '')))
    })
    const lost = (reason: string) => this.#forget(thread, new OcrThreadStopped(`the OCR thread stopped: ${reason}`))
    thread.worker.on('error', (error) => lost(error.message))
    thread.worker.on('exit', (code) => lost(`exit code ${code}`))
    return thread
  }

  /** Takes the thread out of the engine and fails whatever it had; true when it was still in. */
  #forget(thread: OcrThread, error: Error): boolean {
    const index = this.threads.indexOf(thread)
    if (index < 0) return false
    this.threads.splice(index, 1)
    clearTimeout(thread.idleTimer)
    for (const waiting of thread.waiting.values()) waiting.reject(error)
    thread.waiting.clear()
    thread.running?.reject(error)
    thread.running = undefined
    if (!this.closed) this.dispatch()
    return true
  }

  async #end(thread: OcrThread, reason: string): Promise<void> {
    if (this.#forget(thread, new OcrThreadStopped(`the OCR thread was ended: ${reason}`)))
      await thread.worker.terminate()
  }

  protected withdrawRunning(recognition: Recognition): void {
    // Tesseract cannot be interrupted inside its WebAssembly: the thread goes, another starts when needed.
    const thread = this.threads.find((candidate) => candidate.running === recognition)
    if (thread) void this.#end(thread, 'its recognition was cancelled')
  }
}
