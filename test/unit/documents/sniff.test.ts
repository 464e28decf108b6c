import { createCanvas } from '@napi-rs/canvas'
import { describe, expect, it } from 'vitest'
import {
  contentTypeOfFileName,
  DOCUMENT_CONTENT_TYPES,
  DOCX_CONTENT_TYPE,
  documentKindOf,
  PPTX_CONTENT_TYPE,
  XLSX_CONTENT_TYPE,
} from '../../../src/documents/document-types.js'
import { imageDimensions } from '../../../src/documents/image-dimensions.js'
import {
  declaredMatchesSniffed,
  SNIFF_HEAD_BYTES,
  SNIFF_TAIL_BYTES,
  sniffContentType,
} from '../../../src/documents/sniff.js'
import {
  makeBmp,
  makeDocx,
  makeHtml,
  makePptx,
  makeTextPdf,
  makeTiff,
  makeXlsx,
  pngHeader,
  renderTextImage,
  writeZip,
} from '../../support/document-fixtures.js'

const text = (value: string) => new TextEncoder().encode(value)
/** What the upload code passes: the first 64 KiB and the last MiB. */
const sniffWhole = (bytes: Uint8Array) =>
  sniffContentType(bytes.subarray(0, SNIFF_HEAD_BYTES), bytes.subarray(Math.max(0, bytes.length - SNIFF_TAIL_BYTES)))

describe('content types and kinds', () => {
  it('maps every accepted content type to its kind, ignoring parameters and case', () => {
    expect(DOCUMENT_CONTENT_TYPES.map((type) => [type, documentKindOf(type)])).toEqual([
      ['application/pdf', 'pdf'],
      [DOCX_CONTENT_TYPE, 'docx'],
      [PPTX_CONTENT_TYPE, 'pptx'],
      [XLSX_CONTENT_TYPE, 'xlsx'],
      ['text/html', 'html'],
      ['image/png', 'image'],
      ['image/jpeg', 'image'],
      ['image/tiff', 'image'],
      ['image/bmp', 'image'],
      ['image/webp', 'image'],
    ])
    expect(documentKindOf('Text/HTML; charset=UTF-8')).toBe('html')
    expect(documentKindOf('image/jpg')).toBe('image')
    expect(documentKindOf('text/plain')).toBeUndefined()
    expect(documentKindOf('application/zip')).toBeUndefined()
  })

  it.each([
    ['report.PDF', 'application/pdf'],
    ['/home/me/notes.docx', DOCX_CONTENT_TYPE],
    ['deck.pptx', PPTX_CONTENT_TYPE],
    ['book.xlsx', XLSX_CONTENT_TYPE],
    ['page.html', 'text/html'],
    ['page.htm', 'text/html'],
    ['scan.png', 'image/png'],
    ['scan.jpg', 'image/jpeg'],
    ['scan.jpeg', 'image/jpeg'],
    ['scan.tif', 'image/tiff'],
    ['scan.tiff', 'image/tiff'],
    ['scan.bmp', 'image/bmp'],
    ['scan.webp', 'image/webp'],
    ['readme.txt', 'text/plain'],
    ['README.md', 'text/markdown'],
    ['guide.markdown', 'text/markdown'],
    ['data.json', 'application/json'],
    ['C:\\docs\\archive.tar.gz', undefined],
    ['Makefile', undefined],
  ])('names %s as %s', (name, expected) => {
    expect(contentTypeOfFileName(name)).toBe(expected)
  })
})

describe('sniffing', () => {
  const png = renderTextImage('Hello', { format: 'png', width: 200, height: 80 })
  const jpeg = renderTextImage('Hello', { format: 'jpeg', width: 200, height: 80 })
  const webp = renderTextImage('Hello', { format: 'webp', width: 200, height: 80 })

  it.each<[string, Uint8Array, string]>([
    ['a PDF', makeTextPdf([['Hello']]), 'application/pdf'],
    [
      'a PDF after junk bytes',
      Buffer.concat([text('garbage\r\n'.repeat(50)), makeTextPdf([['x']])]),
      'application/pdf',
    ],
    ['a DOCX', makeDocx({ blocks: [{ paragraph: 'Hi' }] }), DOCX_CONTENT_TYPE],
    ['a PPTX', makePptx({ slides: [{ title: 'Hi' }] }), PPTX_CONTENT_TYPE],
    ['an XLSX', makeXlsx({ sheets: [{ name: 'S', rows: [['a']] }] }), XLSX_CONTENT_TYPE],
    ['another zip', writeZip([{ name: 'readme.txt', data: 'hello' }]), 'application/zip'],
    ['an HTML page', makeHtml('<p>Hi</p>'), 'text/html'],
    ['HTML after a BOM and a comment', text('\uFEFF  <!-- generated -->\n<HTML><body>x</body></HTML>'), 'text/html'],
    ['an HTML fragment starting at body', text('<body><p>x</p></body>'), 'text/html'],
    ['a PNG', png, 'image/png'],
    ['a JPEG', jpeg, 'image/jpeg'],
    ['a WebP', webp, 'image/webp'],
    ['a little-endian TIFF', makeTiff(10, 5), 'image/tiff'],
    ['a big-endian TIFF', makeTiff(10, 5, 'big'), 'image/tiff'],
    ['a BMP', makeBmp(10, 5), 'image/bmp'],
    ['Markdown', text('# Title\n\nSome *text*, ünïcödé.'), 'text/plain'],
    ['a JSON object', text('{"a": [1, 2, 3]}'), 'application/json'],
    ['text that starts with a brace', text('{ not json'), 'text/plain'],
    ['"BM" followed by text', text('BMW is a car maker'), 'text/plain'],
    ['bytes with a NUL', Uint8Array.of(1, 2, 0, 3), 'application/octet-stream'],
    ['invalid UTF-8', Uint8Array.of(0x41, 0xc3, 0x28, 0x41), 'application/octet-stream'],
  ])('recognises %s', (_name, bytes, expected) => {
    expect(sniffWhole(bytes)).toBe(expected)
  })

  it('recognises an OOXML package from its local headers when the tail does not reach its directory', () => {
    const docx = makeDocx({ blocks: [{ paragraph: 'Hi' }] })
    // No tail at all, and a tail too short to hold the central directory.
    expect(sniffContentType(docx)).toBe(DOCX_CONTENT_TYPE)
    expect(sniffContentType(docx, docx.subarray(docx.length - 30))).toBe(DOCX_CONTENT_TYPE)
  })

  it('calls JSON text only when the head holds all of it', () => {
    const json = text(JSON.stringify({ items: Array.from({ length: 20_000 }, (_, index) => index) }))
    expect(json.length).toBeGreaterThan(SNIFF_HEAD_BYTES)
    expect(sniffWhole(json)).toBe('text/plain')
  })

  it('accepts a UTF-8 character cut by the end of the head', () => {
    const bytes = text(`${'a'.repeat(SNIFF_HEAD_BYTES - 1)}é`)
    expect(sniffWhole(bytes)).toBe('text/plain')
  })

  it('returns undefined for no bytes', () => {
    expect(sniffContentType(new Uint8Array(0))).toBeUndefined()
  })
})

describe('declared against sniffed types', () => {
  it.each([
    ['text/markdown', 'text/plain', true],
    ['text/plain', 'application/json', true],
    ['application/json', 'text/plain', true],
    ['text/html', 'text/plain', true],
    ['text/plain; charset=utf-8', 'text/html', true],
    ['application/octet-stream', 'image/png', true],
    ['image/png', 'image/png', true],
    ['image/jpg', 'image/jpeg', true],
    ['image/jpeg', 'image/png', false],
    [DOCX_CONTENT_TYPE, PPTX_CONTENT_TYPE, false],
    [DOCX_CONTENT_TYPE, 'application/zip', false],
    ['application/pdf', 'text/plain', false],
    ['text/plain', 'application/pdf', false],
    ['text/plain', 'application/octet-stream', false],
  ])('%s declared, %s sniffed: %s', (declared, sniffed, expected) => {
    expect(declaredMatchesSniffed(declared, sniffed)).toBe(expected)
  })
})

describe('image dimensions from headers', () => {
  it.each(['png', 'jpeg', 'webp'] as const)('reads a generated %s', (format) => {
    const image = renderTextImage('Size', { format, width: 321, height: 123 })
    expect(imageDimensions(image)).toEqual({ width: 321, height: 123 })
  })

  it('reads an extended WebP (VP8X, as a transparent canvas is written) and a lossless one (VP8L)', () => {
    const transparent = createCanvas(77, 55).encodeSync('webp', 90)
    expect(String.fromCharCode(...transparent.subarray(12, 16))).toBe('VP8X')
    expect(imageDimensions(transparent)).toEqual({ width: 77, height: 55 })
    // The VP8L header by hand: signature 0x2f, then width - 1 and height - 1 in 14 bits each.
    const lossless = Buffer.alloc(30)
    lossless.write('RIFF', 0, 'latin1')
    lossless.writeUInt32LE(22, 4)
    lossless.write('WEBPVP8L', 8, 'latin1')
    lossless.writeUInt32LE(10, 16)
    lossless.writeUInt8(0x2f, 20)
    lossless.writeUInt32LE((1000 - 1) | ((16_000 - 1) << 14), 21)
    expect(imageDimensions(lossless)).toEqual({ width: 1000, height: 16_000 })
  })

  it('reads BMP and TIFF in both byte orders', () => {
    expect(imageDimensions(makeBmp(31, 17))).toEqual({ width: 31, height: 17 })
    expect(imageDimensions(makeTiff(31, 17))).toEqual({ width: 31, height: 17 })
    expect(imageDimensions(makeTiff(31, 17, 'big'))).toEqual({ width: 31, height: 17 })
  })

  it('reads a 30,000 × 30,000 PNG from its header alone', () => {
    expect(imageDimensions(pngHeader(30_000, 30_000))).toEqual({ width: 30_000, height: 30_000 })
  })

  it('finds a JPEG frame header after a large metadata segment', () => {
    const jpeg = renderTextImage('x', { format: 'jpeg', width: 40, height: 30 })
    const comment = Buffer.alloc(4 + 60_000, 0x20)
    comment.writeUInt16BE(0xfffe, 0)
    comment.writeUInt16BE(60_002, 2)
    const withComment = Buffer.concat([jpeg.subarray(0, 2), comment, jpeg.subarray(2)])
    expect(imageDimensions(withComment.subarray(0, SNIFF_HEAD_BYTES))).toEqual({ width: 40, height: 30 })
  })

  it('answers undefined for truncated headers and other data', () => {
    const png = renderTextImage('x', { format: 'png', width: 10, height: 10 })
    for (const length of [0, 1, 8, 16, 20, 23]) expect(imageDimensions(png.subarray(0, length))).toBeUndefined()
    const jpeg = renderTextImage('x', { format: 'jpeg', width: 10, height: 10 })
    expect(imageDimensions(jpeg.subarray(0, 30))).toBeUndefined()
    expect(imageDimensions(makeTiff(5, 5).subarray(0, 12))).toBeUndefined()
    expect(imageDimensions(text('hello world'))).toBeUndefined()
  })
})
