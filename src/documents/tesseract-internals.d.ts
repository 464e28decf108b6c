/**
 * The two tesseract.js 7.0.0 modules memsvc drives directly (src/documents/ocr-thread.ts): the
 * worker script that runs tesseract's WebAssembly core, and that core's loader. tesseract.js
 * ships no types for either; these declare what memsvc uses.
 */

declare module 'tesseract.js/src/worker-script/index.js' {
  /** Runs one packet ({workerId, jobId, action, payload}); replies, progress included, go to `send`. */
  export function dispatchHandlers(packet: unknown, send: (reply: unknown) => void): void
  /** How the worker script loads its core, reads language files and fetches (memsvc: never). */
  export function setAdapter(adapter: {
    getCore(lstmOnly: boolean, corePath: string | undefined, res: unknown): Promise<unknown>
    gunzip(data: Uint8Array): Uint8Array
    fetch(url: string): Promise<never>
    readCache(file: string): Promise<Uint8Array>
    writeCache(file: string, data: Uint8Array): Promise<void>
    deleteCache(file: string): Promise<void>
    checkCache(file: string): Promise<boolean>
  }): void
}

declare module 'tesseract.js-core/tesseract-core-relaxedsimd-lstm.js' {
  /** Emscripten's module factory; `wasmBinary` hands it the WebAssembly instead of a file beside it. */
  const createTesseractCore: (moduleArgs: Record<string, unknown>) => Promise<unknown>
  export default createTesseractCore
}
