/**
 * An image's width and height read from its header, so that a 30,000 × 30,000 image is refused
 * before anything decodes it into gigabytes of pixels.
 */

export interface ImageDimensions {
  width: number
  height: number
}

const PNG_IHDR_TYPE_OFFSET = 12
const PNG_IHDR_WIDTH_OFFSET = 16
const PNG_IHDR_HEIGHT_OFFSET = 20
const ASCII_IHDR = 0x49484452

const JPEG_MARKER_PREFIX = 0xff
const JPEG_START_OF_IMAGE = 0xd8
const JPEG_END_OF_IMAGE = 0xd9
const JPEG_START_OF_SCAN = 0xda
const JPEG_FIRST_START_OF_FRAME = 0xc0
const JPEG_LAST_START_OF_FRAME = 0xcf
/** In the SOF range but not frames: Define Huffman Table, the reserved JPG extension, Define Arithmetic Coding. */
const JPEG_NOT_FRAME_MARKERS = new Set([0xc4, 0xc8, 0xcc])
const JPEG_FIRST_RESTART = 0xd0
const JPEG_LAST_RESTART = 0xd7
const JPEG_TEMPORARY = 0x01
/** A frame header holds its length (2 bytes), the sample precision (1), then height and width. */
const JPEG_FRAME_HEIGHT_OFFSET = 3
const JPEG_FRAME_WIDTH_OFFSET = 5

const BMP_INFO_HEADER_SIZE_OFFSET = 14
const BMP_CORE_HEADER_SIZE = 12
const BMP_WIDTH_OFFSET = 18
const BMP_CORE_HEIGHT_OFFSET = 20
const BMP_INFO_HEIGHT_OFFSET = 22

const TIFF_LITTLE_ENDIAN = 0x4949
const TIFF_BIG_ENDIAN = 0x4d4d
const TIFF_MAGIC = 42
const TIFF_IFD_ENTRY_SIZE = 12
const TIFF_TAG_IMAGE_WIDTH = 256
const TIFF_TAG_IMAGE_LENGTH = 257
const TIFF_TYPE_SHORT = 3
const TIFF_TYPE_LONG = 4

const WEBP_CHUNK_OFFSET = 12
const WEBP_CHUNK_DATA_OFFSET = 20
const WEBP_VP8_START_CODE = [0x9d, 0x01, 0x2a]
const WEBP_VP8_START_CODE_OFFSET = 23
const WEBP_VP8_WIDTH_OFFSET = 26
const WEBP_VP8_HEIGHT_OFFSET = 28
const WEBP_VP8_DIMENSION_MASK = 0x3fff
const WEBP_VP8L_SIGNATURE = 0x2f
const WEBP_VP8L_DIMENSION_BITS = 14
const WEBP_VP8L_DIMENSION_MASK = (1 << WEBP_VP8L_DIMENSION_BITS) - 1
const WEBP_VP8X_WIDTH_OFFSET = 24
const WEBP_VP8X_HEIGHT_OFFSET = 27

/**
 * The dimensions recorded in a PNG, JPEG, BMP, TIFF or WebP header, or undefined when `head` is
 * not one of them or does not reach the dimensions (a JPEG's frame header can be 64 KiB in;
 * a TIFF's first directory can even sit at the end of the file: pass the whole file then).
 */
export function imageDimensions(head: Uint8Array): ImageDimensions | undefined {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  try {
    if (head[0] === 0x89 && head[1] === 0x50) return pngDimensions(view)
    if (head[0] === JPEG_MARKER_PREFIX && head[1] === JPEG_START_OF_IMAGE) return jpegDimensions(view)
    if (head[0] === 0x42 && head[1] === 0x4d) return bmpDimensions(view)
    if (view.byteLength >= 2 && [TIFF_LITTLE_ENDIAN, TIFF_BIG_ENDIAN].includes(view.getUint16(0))) {
      return tiffDimensions(view)
    }
    if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 4) === 'WEBP') return webpDimensions(head, view)
  } catch (error) {
    // A header that ends before its dimensions: DataView reads past the end throw RangeError.
    if (error instanceof RangeError) return undefined
    throw error
  }
  return undefined
}

function pngDimensions(view: DataView): ImageDimensions | undefined {
  if (view.getUint32(PNG_IHDR_TYPE_OFFSET) !== ASCII_IHDR) return undefined
  return { width: view.getUint32(PNG_IHDR_WIDTH_OFFSET), height: view.getUint32(PNG_IHDR_HEIGHT_OFFSET) }
}

function jpegDimensions(view: DataView): ImageDimensions | undefined {
  let at = 2
  while (at + 1 < view.byteLength) {
    if (view.getUint8(at) !== JPEG_MARKER_PREFIX) return undefined
    // Any number of 0xFF fill bytes may precede a marker.
    while (at + 1 < view.byteLength && view.getUint8(at + 1) === JPEG_MARKER_PREFIX) at++
    const marker = view.getUint8(at + 1)
    at += 2
    if (marker === JPEG_START_OF_IMAGE || marker === JPEG_TEMPORARY) continue
    if (marker >= JPEG_FIRST_RESTART && marker <= JPEG_LAST_RESTART) continue
    // Entropy-coded data follows a scan; a frame header always comes before the first one.
    if (marker === JPEG_END_OF_IMAGE || marker === JPEG_START_OF_SCAN) return undefined
    if (
      marker >= JPEG_FIRST_START_OF_FRAME &&
      marker <= JPEG_LAST_START_OF_FRAME &&
      !JPEG_NOT_FRAME_MARKERS.has(marker)
    ) {
      return {
        width: view.getUint16(at + JPEG_FRAME_WIDTH_OFFSET),
        height: view.getUint16(at + JPEG_FRAME_HEIGHT_OFFSET),
      }
    }
    const segmentLength = view.getUint16(at)
    if (segmentLength < 2) return undefined
    at += segmentLength
  }
  return undefined
}

function bmpDimensions(view: DataView): ImageDimensions | undefined {
  const headerSize = view.getUint32(BMP_INFO_HEADER_SIZE_OFFSET, true)
  if (headerSize === BMP_CORE_HEADER_SIZE) {
    return { width: view.getUint16(BMP_WIDTH_OFFSET, true), height: view.getUint16(BMP_CORE_HEIGHT_OFFSET, true) }
  }
  // A negative height means rows stored top-down; the image is as tall either way.
  return {
    width: Math.abs(view.getInt32(BMP_WIDTH_OFFSET, true)),
    height: Math.abs(view.getInt32(BMP_INFO_HEIGHT_OFFSET, true)),
  }
}

function tiffDimensions(view: DataView): ImageDimensions | undefined {
  const littleEndian = view.getUint16(0) === TIFF_LITTLE_ENDIAN
  if (view.getUint16(2, littleEndian) !== TIFF_MAGIC) return undefined
  const directory = view.getUint32(4, littleEndian)
  const entryCount = view.getUint16(directory, littleEndian)
  let width: number | undefined
  let height: number | undefined
  for (let index = 0; index < entryCount; index++) {
    const entry = directory + 2 + index * TIFF_IFD_ENTRY_SIZE
    const tag = view.getUint16(entry, littleEndian)
    if (tag !== TIFF_TAG_IMAGE_WIDTH && tag !== TIFF_TAG_IMAGE_LENGTH) continue
    const type = view.getUint16(entry + 2, littleEndian)
    let value: number | undefined
    if (type === TIFF_TYPE_SHORT) value = view.getUint16(entry + 8, littleEndian)
    else if (type === TIFF_TYPE_LONG) value = view.getUint32(entry + 8, littleEndian)
    if (tag === TIFF_TAG_IMAGE_WIDTH) width = value
    else height = value
    if (width !== undefined && height !== undefined) return { width, height }
  }
  return undefined
}

function webpDimensions(head: Uint8Array, view: DataView): ImageDimensions | undefined {
  const chunk = ascii(head, WEBP_CHUNK_OFFSET, 4)
  if (chunk === 'VP8 ') {
    const startCode = WEBP_VP8_START_CODE.every((byte, index) => head[WEBP_VP8_START_CODE_OFFSET + index] === byte)
    if (!startCode) return undefined
    return {
      width: view.getUint16(WEBP_VP8_WIDTH_OFFSET, true) & WEBP_VP8_DIMENSION_MASK,
      height: view.getUint16(WEBP_VP8_HEIGHT_OFFSET, true) & WEBP_VP8_DIMENSION_MASK,
    }
  }
  if (chunk === 'VP8L') {
    if (view.getUint8(WEBP_CHUNK_DATA_OFFSET) !== WEBP_VP8L_SIGNATURE) return undefined
    const bits = view.getUint32(WEBP_CHUNK_DATA_OFFSET + 1, true)
    return {
      width: (bits & WEBP_VP8L_DIMENSION_MASK) + 1,
      height: ((bits >>> WEBP_VP8L_DIMENSION_BITS) & WEBP_VP8L_DIMENSION_MASK) + 1,
    }
  }
  if (chunk === 'VP8X') {
    return { width: uint24(view, WEBP_VP8X_WIDTH_OFFSET) + 1, height: uint24(view, WEBP_VP8X_HEIGHT_OFFSET) + 1 }
  }
  return undefined
}

function uint24(view: DataView, at: number): number {
  return view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getUint8(at + 2) << 16)
}

function ascii(bytes: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + length))
}
