import { ExtractionError } from './extracted-document.js'
import { imageDimensions } from './image-dimensions.js'

/**
 * Gets an image ready for tesseract. Tesseract's Leptonica (in tesseract.js-core 7) decodes PNG,
 * JPEG, TIFF, WebP and GIF itself, measured. BMP it can read too, but tesseract.js routes every
 * BMP through the pure-JS bmp-js after copying the bytes into an object with one key per byte
 * (0.7 s for 0.8 MB; an A4 scan at 300 DPI would take minutes and gigabytes), so a BMP is
 * decoded with @napi-rs/canvas and handed over as PNG instead. The size is checked from the
 * header first: a 30,000 × 30,000 image is refused before anything decodes it.
 */

const BMP_MAGIC = [0x42, 0x4d] as const

function isBmp(image: Uint8Array): boolean {
  return image[0] === BMP_MAGIC[0] && image[1] === BMP_MAGIC[1]
}

/** The header's dimensions, refused (ExtractionError) when unknown, empty or over `maxPixels`. */
export function checkImageSize(image: Uint8Array, maxPixels: number): { width: number; height: number } {
  const dimensions = imageDimensions(image)
  if (!dimensions) throw new ExtractionError('the image is not a PNG, JPEG, TIFF, BMP or WebP image OCR can read')
  const { width, height } = dimensions
  if (width === 0 || height === 0) throw new ExtractionError(`the image is empty (${width} × ${height} pixels)`)
  if (width * height > maxPixels)
    throw new ExtractionError(
      `the image is ${width} × ${height} pixels (${width * height}), more than the limit of ${maxPixels}`,
    )
  return dimensions
}

/** `image` as tesseract should get it: the same bytes, or a BMP as PNG. */
export async function prepareOcrImage(image: Uint8Array, maxPixels: number): Promise<Uint8Array> {
  const { width, height } = checkImageSize(image, maxPixels)
  if (!isBmp(image)) return image
  // Loaded on demand: a process that never meets a BMP never loads the canvas addon for OCR.
  const { createCanvas, loadImage } = await import('@napi-rs/canvas')
  let decoded: Awaited<ReturnType<typeof loadImage>>
  try {
    decoded = await loadImage(Buffer.from(image.buffer, image.byteOffset, image.byteLength))
  } catch (error) {
    throw new ExtractionError(`the BMP image cannot be decoded: ${(error as Error).message}`)
  }
  const canvas = createCanvas(width, height)
  canvas.getContext('2d').drawImage(decoded, 0, 0)
  return canvas.encode('png')
}
