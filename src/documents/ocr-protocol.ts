/**
 * What the server's thread (ocr.ts) and an OCR thread (ocr-thread.ts) say to each other: the
 * packet protocol of tesseract.js 7's worker script, which the OCR thread runs unchanged.
 * memsvc speaks it directly instead of through tesseract.js's createWorker, whose client
 * swallows a failed initialisation (its promise never settles), throws a job's failure out of
 * a message handler when no errorHandler is given, and does not notice a thread that died.
 */

/** The engine mode: LSTM only (tesseract.js's OEM.LSTM_ONLY); the core memsvc ships has no legacy engine. */
export const OCR_ENGINE_MODE_LSTM_ONLY = 1

/**
 * langPath as the worker script sees it. It is not a directory: the OCR thread resolves
 * `<this>/<lang>.traineddata.gz` itself (the languages directory, then the bundled English).
 */
export const OCR_LANGUAGE_PATH = 'memsvc-ocr-languages'

/** What an OCR thread is started with (its workerData). */
export interface OcrThreadData {
  /** `<lang>.traineddata` or `<lang>.traineddata.gz` files beside the bundled English model, if any. */
  languagesDir?: string
}

export type OcrPacket =
  | { jobId: string; workerId: string; action: 'load'; payload: { options: { lstmOnly: true; logging: false } } }
  | {
      jobId: string
      workerId: string
      action: 'loadLanguage'
      payload: {
        langs: string
        options: { langPath: string; cacheMethod: 'none'; gzip: true; lstmOnly: true }
      }
    }
  | {
      jobId: string
      workerId: string
      action: 'initialize'
      payload: { langs: string; oem: number; config: Record<string, never> }
    }
  | {
      jobId: string
      workerId: string
      action: 'recognize'
      payload: { image: Uint8Array; options: Record<string, never>; output: { text: true } }
    }

export type OcrAction = OcrPacket['action']

export interface OcrReply {
  jobId: string
  workerId: string
  action: OcrAction
  status: 'resolve' | 'reject' | 'progress'
  /** recognize resolves with {text, confidence, …}; a reject carries the error as text. */
  data: unknown
}

/** The part of a recognize answer memsvc reads. */
export interface RecognizedPage {
  text: string | null
  /** Tesseract's mean word confidence, 0..100. */
  confidence: number | null
}
