/**
 * What an upload really is, from its bytes: the declared content type is the client's word,
 * and a PNG declared as a PDF (or a zip declared as a DOCX) must be refused before extraction
 * runs the wrong reader on it.
 */
import {
  BMP_CONTENT_TYPE,
  canonicalContentType,
  DOCX_CONTENT_TYPE,
  HTML_CONTENT_TYPE,
  JPEG_CONTENT_TYPE,
  JSON_CONTENT_TYPE,
  MARKDOWN_CONTENT_TYPE,
  OCTET_STREAM_CONTENT_TYPE,
  PDF_CONTENT_TYPE,
  PLAIN_TEXT_CONTENT_TYPE,
  PNG_CONTENT_TYPE,
  PPTX_CONTENT_TYPE,
  TIFF_CONTENT_TYPE,
  WEBP_CONTENT_TYPE,
  XLSX_CONTENT_TYPE,
  ZIP_CONTENT_TYPE,
} from './document-types.js'
import { ExtractionError } from './extracted-document.js'
import { readCentralDirectory } from './zip-central-directory.js'

/** PDF readers accept junk before `%PDF-` within the first kilobyte; so does this. */
export const PDF_HEADER_SEARCH_BYTES = 1024
/** Bytes of the file's start that sniffing wants (JPEG dimensions can need this many). */
export const SNIFF_HEAD_BYTES = 64 * 1024
/** Bytes of the file's end that sniffing wants: enough for the central directory of ordinary OOXML files. */
export const SNIFF_TAIL_BYTES = 1024 * 1024

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG_SIGNATURE = [0xff, 0xd8, 0xff]
const TIFF_LITTLE_ENDIAN_SIGNATURE = [0x49, 0x49, 0x2a, 0x00]
const TIFF_BIG_ENDIAN_SIGNATURE = [0x4d, 0x4d, 0x00, 0x2a]
const ZIP_LOCAL_HEADER_SIGNATURE = [0x50, 0x4b, 0x03, 0x04]
const ZIP_EMPTY_ARCHIVE_SIGNATURE = [0x50, 0x4b, 0x05, 0x06]
const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]
const ASCII_BM = [0x42, 0x4d]
const ASCII_RIFF = [0x52, 0x49, 0x46, 0x46]
const ASCII_WEBP = [0x57, 0x45, 0x42, 0x50]
/** BITMAPCOREHEADER, BITMAPINFOHEADER, the V2/V3 variants, OS/2 2.x, BITMAPV4HEADER, BITMAPV5HEADER. */
const BMP_INFO_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124])
const BMP_INFO_HEADER_SIZE_OFFSET = 14
const WEBP_FOURCC_OFFSET = 8
const ZIP_LOCAL_HEADER_NAME_OFFSET = 30
const UTF8_MAX_SEQUENCE_BYTES = 4

/** The part each OOXML package must hold, and the type it makes the package. */
const OOXML_MAIN_PARTS: ReadonlyArray<[part: string, contentType: string]> = [
  ['word/document.xml', DOCX_CONTENT_TYPE],
  ['ppt/presentation.xml', PPTX_CONTENT_TYPE],
  ['xl/workbook.xml', XLSX_CONTENT_TYPE],
]

/**
 * The content type of a file from its first bytes (`head`, ideally SNIFF_HEAD_BYTES) and, for zips,
 * its last bytes (`tail`, up to SNIFF_TAIL_BYTES; the same bytes as head for a small file).
 * 'application/zip' for a zip that is no OOXML document, 'text/plain' for UTF-8 text,
 * 'application/octet-stream' for other binary data; undefined only for an empty head.
 */
export function sniffContentType(head: Uint8Array, tail?: Uint8Array): string | undefined {
  if (head.length === 0) return undefined
  if (startsWith(head, PNG_SIGNATURE)) return PNG_CONTENT_TYPE
  if (startsWith(head, JPEG_SIGNATURE)) return JPEG_CONTENT_TYPE
  if (startsWith(head, TIFF_LITTLE_ENDIAN_SIGNATURE) || startsWith(head, TIFF_BIG_ENDIAN_SIGNATURE)) {
    return TIFF_CONTENT_TYPE
  }
  if (startsWith(head, ASCII_RIFF) && startsWith(head, ASCII_WEBP, WEBP_FOURCC_OFFSET)) return WEBP_CONTENT_TYPE
  if (isBmp(head)) return BMP_CONTENT_TYPE
  if (startsWith(head, ZIP_LOCAL_HEADER_SIGNATURE) || startsWith(head, ZIP_EMPTY_ARCHIVE_SIGNATURE)) {
    return ooxmlTypeOf(zipEntryNames(head, tail)) ?? ZIP_CONTENT_TYPE
  }
  if (indexOf(head, PDF_MAGIC, PDF_HEADER_SEARCH_BYTES) >= 0) return PDF_CONTENT_TYPE
  const text = utf8Text(head)
  if (text === undefined) return OCTET_STREAM_CONTENT_TYPE
  if (looksLikeHtml(text)) return HTML_CONTENT_TYPE
  if (isWholeJson(text)) return JSON_CONTENT_TYPE
  return PLAIN_TEXT_CONTENT_TYPE
}

const TEXT_FAMILY = new Set([PLAIN_TEXT_CONTENT_TYPE, MARKDOWN_CONTENT_TYPE, JSON_CONTENT_TYPE, HTML_CONTENT_TYPE])

/**
 * Whether an upload declared as `declared` may be read as what its bytes are (`sniffed`); false
 * is a 415. Text types are interchangeable when the bytes are text (a .md file sniffs as text/plain),
 * a binary type must be exactly what was sniffed, and application/octet-stream takes the sniffed type.
 */
export function declaredMatchesSniffed(declared: string, sniffed: string): boolean {
  const declaredType = canonicalContentType(declared)
  const sniffedType = canonicalContentType(sniffed)
  if (declaredType === OCTET_STREAM_CONTENT_TYPE) return true
  if (TEXT_FAMILY.has(declaredType)) return TEXT_FAMILY.has(sniffedType)
  return declaredType === sniffedType
}

function isBmp(head: Uint8Array): boolean {
  if (!startsWith(head, ASCII_BM) || head.length < BMP_INFO_HEADER_SIZE_OFFSET + 4) return false
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  return BMP_INFO_HEADER_SIZES.has(view.getUint32(BMP_INFO_HEADER_SIZE_OFFSET, true))
}

function ooxmlTypeOf(entryNames: Iterable<string>): string | undefined {
  const names = new Set(entryNames)
  return OOXML_MAIN_PARTS.find(([part]) => names.has(part))?.[1]
}

/** The zip's entry names from its central directory in `tail` or else from the local headers in `head`. */
function zipEntryNames(head: Uint8Array, tail: Uint8Array | undefined): string[] {
  for (const bytes of [tail, head]) {
    if (bytes === undefined) continue
    try {
      const directory = readCentralDirectory(bytes)
      if (directory !== undefined) return directory.entries.map((entry) => entry.name)
    } catch (error) {
      // A damaged directory in the tail: the local headers may still tell what the package is.
      if (!(error instanceof ExtractionError)) throw error
    }
  }
  return localHeaderNames(head)
}

function localHeaderNames(head: Uint8Array): string[] {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  const names: string[] = []
  // Any occurrence of the signature, not a walk of the headers: entries written with data descriptors
  // do not record their size up front. A false match in compressed data only adds a name nobody looks for.
  for (let at = indexOf(head, ZIP_LOCAL_HEADER_SIGNATURE, head.length); at >= 0; ) {
    if (at + ZIP_LOCAL_HEADER_NAME_OFFSET > head.length) break
    const nameLength = view.getUint16(at + 26, true)
    const nameStart = at + ZIP_LOCAL_HEADER_NAME_OFFSET
    if (nameStart + nameLength > head.length) break
    names.push(new TextDecoder('latin1').decode(head.subarray(nameStart, nameStart + nameLength)))
    const next = indexOf(head.subarray(nameStart), ZIP_LOCAL_HEADER_SIGNATURE, head.length)
    at = next < 0 ? -1 : nameStart + next
  }
  return names
}

/** The head as text when it is UTF-8 without NUL; a multi-byte character cut by the head's end is allowed. */
function utf8Text(head: Uint8Array): string | undefined {
  if (head.includes(0)) return undefined
  const decoder = new TextDecoder('utf-8', { fatal: true })
  for (let cut = 0; cut < UTF8_MAX_SEQUENCE_BYTES && cut < head.length; cut++) {
    try {
      return decoder.decode(head.subarray(0, head.length - cut))
    } catch {
      // Retry without the last bytes, in case they are the start of a character the head cut off.
      if (!isUtf8ContinuationOrLead(head[head.length - 1 - cut] ?? 0)) return undefined
    }
  }
  return undefined
}

function isUtf8ContinuationOrLead(byte: number): boolean {
  return byte >= 0x80
}

const LEADING_NOISE = /^(?:\uFEFF|\s+|<!--[\s\S]*?-->|<\?xml[^>]*\?>)*/
const HTML_START = /^(?:<!doctype\s+html|<html|<head|<body)(?:[\s>/]|$)/i

function looksLikeHtml(text: string): boolean {
  const start = text.replace(LEADING_NOISE, '')
  return HTML_START.test(start)
}

/** JSON only when the head holds the whole value: a prefix of an object or array does not parse. */
function isWholeJson(text: string): boolean {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart()
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false
  try {
    JSON.parse(trimmed)
    return true
  } catch {
    return false
  }
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false
  return prefix.every((byte, index) => bytes[at + index] === byte)
}

/** Where `needle` first starts within the first `within` bytes of `bytes`, or -1. */
function indexOf(bytes: Uint8Array, needle: readonly number[], within: number): number {
  const first = needle[0]
  const last = Math.min(bytes.length, within) - needle.length
  for (let at = bytes.indexOf(first ?? 0); at >= 0 && at <= last; at = bytes.indexOf(first ?? 0, at + 1)) {
    if (startsWith(bytes, needle, at)) return at
  }
  return -1
}

// Upload code checks an image's size right after sniffing it; the reader lives in its own file.
export { type ImageDimensions, imageDimensions } from './image-dimensions.js'
