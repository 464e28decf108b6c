/**
 * The content types memsvc accepts as documents, the kind of extraction each needs, and the
 * content type a file name implies (for the CLI, which uploads files from disk).
 */
import type { DocumentKind } from './extracted-document.js'

export const PDF_CONTENT_TYPE = 'application/pdf'
export const DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
export const PPTX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.presentationml.presentation'
export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
export const HTML_CONTENT_TYPE = 'text/html'
export const PNG_CONTENT_TYPE = 'image/png'
export const JPEG_CONTENT_TYPE = 'image/jpeg'
export const TIFF_CONTENT_TYPE = 'image/tiff'
export const BMP_CONTENT_TYPE = 'image/bmp'
export const WEBP_CONTENT_TYPE = 'image/webp'
export const ZIP_CONTENT_TYPE = 'application/zip'
export const PLAIN_TEXT_CONTENT_TYPE = 'text/plain'
export const MARKDOWN_CONTENT_TYPE = 'text/markdown'
export const JSON_CONTENT_TYPE = 'application/json'
export const OCTET_STREAM_CONTENT_TYPE = 'application/octet-stream'

const KIND_OF_CONTENT_TYPE: ReadonlyMap<string, DocumentKind> = new Map<string, DocumentKind>([
  [PDF_CONTENT_TYPE, 'pdf'],
  [DOCX_CONTENT_TYPE, 'docx'],
  [PPTX_CONTENT_TYPE, 'pptx'],
  [XLSX_CONTENT_TYPE, 'xlsx'],
  [HTML_CONTENT_TYPE, 'html'],
  [PNG_CONTENT_TYPE, 'image'],
  [JPEG_CONTENT_TYPE, 'image'],
  [TIFF_CONTENT_TYPE, 'image'],
  [BMP_CONTENT_TYPE, 'image'],
  [WEBP_CONTENT_TYPE, 'image'],
])

/** The content types extracted as documents (text/plain, text/markdown and application/json are stored as text). */
export const DOCUMENT_CONTENT_TYPES: readonly string[] = [...KIND_OF_CONTENT_TYPE.keys()]

/** Text content types memsvc stores as they are, without extraction. */
export const TEXT_CONTENT_TYPES: readonly string[] = [PLAIN_TEXT_CONTENT_TYPE, MARKDOWN_CONTENT_TYPE, JSON_CONTENT_TYPE]

// Names clients and operating systems send for the same formats.
const CONTENT_TYPE_ALIASES: ReadonlyMap<string, string> = new Map([
  ['image/jpg', JPEG_CONTENT_TYPE],
  ['image/pjpeg', JPEG_CONTENT_TYPE],
  ['image/x-ms-bmp', BMP_CONTENT_TYPE],
  ['image/x-bmp', BMP_CONTENT_TYPE],
  ['image/tif', TIFF_CONTENT_TYPE],
  ['text/x-markdown', MARKDOWN_CONTENT_TYPE],
  ['application/x-pdf', PDF_CONTENT_TYPE],
  ['application/xhtml+xml', HTML_CONTENT_TYPE],
])

/** The content type without parameters (`; charset=utf-8`), lower-cased, with common aliases resolved. */
export function canonicalContentType(contentType: string): string {
  const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase()
  return CONTENT_TYPE_ALIASES.get(bare) ?? bare
}

/** The extraction a content type needs; undefined for text types and for types memsvc does not read. */
export function documentKindOf(contentType: string): DocumentKind | undefined {
  return KIND_OF_CONTENT_TYPE.get(canonicalContentType(contentType))
}

const CONTENT_TYPE_OF_EXTENSION: ReadonlyMap<string, string> = new Map([
  ['pdf', PDF_CONTENT_TYPE],
  ['docx', DOCX_CONTENT_TYPE],
  ['pptx', PPTX_CONTENT_TYPE],
  ['xlsx', XLSX_CONTENT_TYPE],
  ['html', HTML_CONTENT_TYPE],
  ['htm', HTML_CONTENT_TYPE],
  ['png', PNG_CONTENT_TYPE],
  ['jpg', JPEG_CONTENT_TYPE],
  ['jpeg', JPEG_CONTENT_TYPE],
  ['tif', TIFF_CONTENT_TYPE],
  ['tiff', TIFF_CONTENT_TYPE],
  ['bmp', BMP_CONTENT_TYPE],
  ['webp', WEBP_CONTENT_TYPE],
  ['txt', PLAIN_TEXT_CONTENT_TYPE],
  ['md', MARKDOWN_CONTENT_TYPE],
  ['markdown', MARKDOWN_CONTENT_TYPE],
  ['json', JSON_CONTENT_TYPE],
])

/** The content type a file's extension implies (case-insensitive), or undefined for an unknown extension. */
export function contentTypeOfFileName(name: string): string | undefined {
  const baseName = name.split(/[\\/]/).pop() ?? ''
  const dot = baseName.lastIndexOf('.')
  if (dot < 0) return undefined
  return CONTENT_TYPE_OF_EXTENSION.get(baseName.slice(dot + 1).toLowerCase())
}
