/**
 * Text images for the OCR tests in the two formats @napi-rs/canvas does not encode: BMP and
 * TIFF, written from the canvas's RGBA pixels (uncompressed, 24-bit RGB), and the sentences
 * the tests look for.
 */
import { createCanvas } from '@napi-rs/canvas'

/** Distinctive words, so that a match cannot come from tesseract's language model guessing. */
export const OCR_SENTENCE = 'Quartz zebras vanish behind amber lighthouses'
export const OCR_WORDS = OCR_SENTENCE.split(' ')

const FONT_PX = 40
const MARGIN_PX = 20
const BYTES_PER_RGB_PIXEL = 3

export interface Raster {
  width: number
  height: number
  rgba: Uint8ClampedArray
}

/** Black sans-serif text on white, one line. */
export function textRaster(text: string, width = 1100, height = 90): Raster {
  const canvas = createCanvas(width, height)
  const context = canvas.getContext('2d')
  context.fillStyle = '#ffffff'
  context.fillRect(0, 0, width, height)
  context.fillStyle = '#000000'
  context.font = `${FONT_PX}px sans-serif`
  context.textBaseline = 'top'
  context.fillText(text, MARGIN_PX, MARGIN_PX)
  return { width, height, rgba: context.getImageData(0, 0, width, height).data }
}

/** A BITMAPINFOHEADER BMP, 24 bits a pixel, rows bottom-up and padded to 4 bytes. */
export function encodeBmp({ width, height, rgba }: Raster): Uint8Array {
  const rowBytes = Math.ceil((width * BYTES_PER_RGB_PIXEL) / 4) * 4
  const headerBytes = 54
  const file = Buffer.alloc(headerBytes + rowBytes * height)
  file.write('BM', 0, 'latin1')
  file.writeUInt32LE(file.length, 2)
  file.writeUInt32LE(headerBytes, 10)
  file.writeUInt32LE(40, 14)
  file.writeInt32LE(width, 18)
  file.writeInt32LE(height, 22)
  file.writeUInt16LE(1, 26)
  file.writeUInt16LE(24, 28)
  file.writeUInt32LE(rowBytes * height, 34)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const from = ((height - 1 - y) * width + x) * 4
      const to = headerBytes + y * rowBytes + x * BYTES_PER_RGB_PIXEL
      file[to] = rgba[from + 2]!
      file[to + 1] = rgba[from + 1]!
      file[to + 2] = rgba[from]!
    }
  }
  return file
}

/** A little-endian baseline TIFF: one strip of uncompressed RGB. */
export function encodeTiff({ width, height, rgba }: Raster): Uint8Array {
  const entries: Array<[tag: number, type: number, count: number, value: number]> = []
  const directoryOffset = 8
  const entryCount = 10
  const bitsPerSampleOffset = directoryOffset + 2 + entryCount * 12 + 4
  const pixelsOffset = bitsPerSampleOffset + 6
  const pixelBytes = width * height * BYTES_PER_RGB_PIXEL
  entries.push(
    [256, 4, 1, width], // ImageWidth
    [257, 4, 1, height], // ImageLength
    [258, 3, 3, bitsPerSampleOffset], // BitsPerSample: 8,8,8 (stored apart: three SHORTs do not fit)
    [259, 3, 1, 1], // Compression: none
    [262, 3, 1, 2], // PhotometricInterpretation: RGB
    [273, 4, 1, pixelsOffset], // StripOffsets
    [277, 3, 1, 3], // SamplesPerPixel
    [278, 4, 1, height], // RowsPerStrip
    [279, 4, 1, pixelBytes], // StripByteCounts
    [284, 3, 1, 1], // PlanarConfiguration: chunky
  )
  const file = Buffer.alloc(pixelsOffset + pixelBytes)
  file.write('II', 0, 'latin1')
  file.writeUInt16LE(42, 2)
  file.writeUInt32LE(directoryOffset, 4)
  file.writeUInt16LE(entryCount, directoryOffset)
  entries.forEach(([tag, type, count, value], index) => {
    const at = directoryOffset + 2 + index * 12
    file.writeUInt16LE(tag, at)
    file.writeUInt16LE(type, at + 2)
    file.writeUInt32LE(count, at + 4)
    if (type === 3 && count === 1) file.writeUInt16LE(value, at + 8)
    else file.writeUInt32LE(value, at + 8)
  })
  for (let sample = 0; sample < 3; sample++) file.writeUInt16LE(8, bitsPerSampleOffset + sample * 2)
  for (let pixel = 0; pixel < width * height; pixel++) {
    file[pixelsOffset + pixel * 3] = rgba[pixel * 4]!
    file[pixelsOffset + pixel * 3 + 1] = rgba[pixel * 4 + 1]!
    file[pixelsOffset + pixel * 3 + 2] = rgba[pixel * 4 + 2]!
  }
  return file
}
