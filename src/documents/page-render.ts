import { createCanvas } from '@napi-rs/canvas'
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { ExtractionError } from './extracted-document.js'

/**
 * Draws one PDF page with pdfjs onto an @napi-rs/canvas surface and encodes it as PNG: the page
 * images kept with a document, and the pictures OCR reads of pages without a text layer. The
 * size is checked before the surface is allocated (4 bytes a pixel: an A0 page at 300 DPI
 * would be 560 MB), and the surface is released as soon as the PNG exists rather than when the
 * garbage collector gets to a small JavaScript object that holds a large native buffer.
 */

/** PDF user space units are points: 72 to the inch. */
const POINTS_PER_INCH = 72

/** The page's size in pixels at `dpi` (the canvas pdfjs draws into is this size). */
export function renderedPageSize(page: PDFPageProxy, dpi: number): { width: number; height: number } {
  const viewport = page.getViewport({ scale: dpi / POINTS_PER_INCH })
  // Rounded, not ceiled: 792 pt × 300/72 comes out as 3300.0000000000005.
  return { width: Math.max(1, Math.round(viewport.width)), height: Math.max(1, Math.round(viewport.height)) }
}

/**
 * What OCR reads: JPEG at this quality. Encoding a 300 DPI page as PNG took 0.5–0.9 s here, as
 * JPEG 0.2 s, and OCR reads it the same (the benchmark's scanned pages are JPEG too).
 */
const OCR_JPEG_QUALITY = 92

/** PNG for page images people look at (lossless text edges); JPEG for what OCR reads (fast to encode). */
export type RenderedImageFormat = 'png' | 'jpeg'

/** Page `page` at `dpi`, PNG unless asked; refused (ExtractionError) when it would have more than `maxPixels` pixels. */
export async function renderPdfPage(
  page: PDFPageProxy,
  dpi: number,
  maxPixels: number,
  format: RenderedImageFormat = 'png',
): Promise<Uint8Array> {
  const { width, height } = renderedPageSize(page, dpi)
  if (width * height > maxPixels)
    throw new ExtractionError(
      `page ${page.pageNumber} at ${dpi} DPI would be ${width} × ${height} pixels (${width * height}), ` +
        `more than the limit of ${maxPixels}`,
    )
  const canvas = createCanvas(width, height)
  try {
    const viewport = page.getViewport({ scale: dpi / POINTS_PER_INCH })
    // The context form: pdfjs types the canvas as a DOM one, which @napi-rs/canvas mimics without being.
    const canvasContext = canvas.getContext('2d') as unknown as CanvasRenderingContext2D
    await page.render({ canvas: null, canvasContext, viewport }).promise
    return format === 'jpeg' ? await canvas.encode('jpeg', OCR_JPEG_QUALITY) : await canvas.encode('png')
  } finally {
    // A zero-sized surface frees the pixels now.
    canvas.width = 0
    canvas.height = 0
  }
}
