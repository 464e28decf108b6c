/**
 * pdfjs's worker half, which the extraction threads load into their own thread (pdfjs's "fake
 * worker", found through globalThis.pdfjsWorker) instead of letting pdfjs import it by URL:
 * the extraction thread is already off the server's thread, and a bundle has no URL to import.
 */
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown
}
