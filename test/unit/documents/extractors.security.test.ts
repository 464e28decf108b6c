import zlib from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { type ExtractionTools, extractDocument } from '../../../src/documents/extract-document.js'
import { ExtractionError } from '../../../src/documents/extracted-document.js'
import { extractHtml } from '../../../src/documents/html.js'
import { parseXml } from '../../../src/documents/safe-xml.js'
import { ZipArchive } from '../../../src/documents/zip-archive.js'
import {
  deflatedZeros,
  docxDocumentXml,
  extractionOptions,
  makeDocx,
  makeHtml,
  makeManyPagePdf,
  makeXlsx,
  pngHeader,
  recordingSink,
  writeZip,
} from '../../support/document-fixtures.js'

/**
 * Documents built to exhaust memory or time. Each must be refused with an ExtractionError
 * that names the limit, quickly and without allocating what the document claims.
 */

const options = extractionOptions()
const GIB_IN_MIB = 1024
const MIB = 1024 * 1024

/** Tools that fail the test when used: these documents must be refused before anything is rendered or recognised. */
const untouchableTools: ExtractionTools = {
  ocr: {
    recognize: async () => {
      throw new Error('OCR must not run for a refused document')
    },
  },
  renderPdfPage: async () => {
    throw new Error('rendering must not run for a refused document')
  },
}

async function refusal(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(ExtractionError)
  return error as ExtractionError
}

function timed<T>(run: () => T): { value: T; milliseconds: number } {
  const started = performance.now()
  const value = run()
  return { value, milliseconds: performance.now() - started }
}

describe('zip bombs', () => {
  // 1 GiB of zeros deflates to about 1 MB; the fixture builds it without ever holding the gigabyte.
  const gigabyteOfZeros = deflatedZeros(GIB_IN_MIB)

  it('refuses an entry that declares a small size and expands to 1 GiB, after inflating just past the declared size', async () => {
    const bomb = makeDocx({
      blocks: [],
      extraEntries: [
        { name: 'word/document.xml', data: '', rawDeflated: gigabyteOfZeros, declaredUncompressedSize: 2_000 },
      ],
    })
    const started = performance.now()
    const error = await refusal(extractDocument(bomb, 'docx', options, recordingSink(), untouchableTools))
    expect(error.message).toBe(
      'word/document.xml expands beyond the 2000 bytes its ZIP directory records; refused as a possible zip bomb',
    )
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it('refuses an entry whose honest size is more than 200 times its compressed size, before inflating it', () => {
    const archive = ZipArchive.open(
      writeZip([
        {
          name: 'xl/sharedStrings.xml',
          data: '',
          rawDeflated: deflatedZeros(300),
          declaredUncompressedSize: 300 * MIB,
        },
      ]),
      options.limits,
    )
    const { milliseconds } = timed(() =>
      expect(() => archive.read('xl/sharedStrings.xml')).toThrow(
        'xl/sharedStrings.xml expands more than 200 times its compressed size; refused as a possible zip bomb',
      ),
    )
    expect(milliseconds).toBeLessThan(100)
  })

  it('refuses an archive whose entries together expand past maxDecompressedBytes', () => {
    const eightMib = {
      data: '',
      rawDeflated: deflatedZeros(8),
      declaredUncompressedSize: 8 * MIB,
      declaredCrc32: zlib.crc32(Buffer.alloc(8 * MIB)),
    }
    const archive = ZipArchive.open(
      writeZip([
        { name: 'a.xml', ...eightMib },
        { name: 'b.xml', ...eightMib },
      ]),
      {
        maxDecompressedBytes: 12 * MIB,
        maxCompressionRatio: 10_000,
      },
    )
    expect(archive.read('a.xml')).toHaveLength(8 * MIB)
    expect(() => archive.read('b.xml')).toThrow(
      'the document expands to more than 12 MiB (the limit) by b.xml; refused as a possible zip bomb',
    )
  })

  it('refuses a budget overrun found only while inflating (sizes that lie low, a generous ratio)', () => {
    const archive = ZipArchive.open(
      writeZip([{ name: 'big.xml', data: '', rawDeflated: deflatedZeros(64), declaredUncompressedSize: 30 * MIB }]),
      { maxDecompressedBytes: 32 * MIB, maxCompressionRatio: 100_000 },
    )
    // The declared 30 MiB fits the budget, so inflation starts; the recorded size bounds it.
    expect(() => archive.read('big.xml')).toThrow('big.xml expands beyond the 31457280 bytes its ZIP directory records')
  })
})

describe('archives that lie or hide', () => {
  const documentXml = docxDocumentXml([{ paragraph: 'Hello' }])

  it('refuses a compressed size that reaches past the end of the file', async () => {
    const lying = makeDocx({
      blocks: [],
      extraEntries: [{ name: 'word/document.xml', data: documentXml, declaredCompressedSize: 50_000_000 }],
    })
    const error = await refusal(extractDocument(lying, 'docx', options, recordingSink(), untouchableTools))
    expect(error.message).toBe('the Word document is damaged or truncated: the data of word/document.xml is cut off')
  })

  it('refuses an uncompressed size larger than what the entry holds', async () => {
    const lying = makeDocx({
      blocks: [],
      extraEntries: [
        { name: 'word/document.xml', data: documentXml, declaredUncompressedSize: documentXml.length + 10 },
      ],
    })
    const error = await refusal(extractDocument(lying, 'docx', options, recordingSink(), untouchableTools))
    expect(error.message).toMatch(
      /^the Word document is damaged: word\/document.xml holds \d+ bytes, its directory says \d+$/,
    )
  })

  it('refuses encrypted entries and compression methods other than stored and deflated', async () => {
    const encrypted = makeDocx({
      blocks: [],
      extraEntries: [{ name: 'word/document.xml', data: documentXml, flags: 1 }],
    })
    expect(
      (await refusal(extractDocument(encrypted, 'docx', options, recordingSink(), untouchableTools))).message,
    ).toBe('the Word document is encrypted (word/document.xml is password-protected); memsvc cannot read it')
    const bzip2 = makeDocx({
      blocks: [],
      extraEntries: [{ name: 'word/document.xml', data: documentXml, declaredMethod: 12 }],
    })
    expect((await refusal(extractDocument(bzip2, 'docx', options, recordingSink(), untouchableTools))).message).toBe(
      'the Word document uses compression method 12 for word/document.xml; memsvc reads only stored and deflated entries',
    )
  })

  it('reads stored (uncompressed) entries', async () => {
    const stored = makeDocx({
      blocks: [],
      extraEntries: [{ name: 'word/document.xml', data: documentXml, method: 'stored' }],
    })
    const document = await extractDocument(stored, 'docx', options, recordingSink(), untouchableTools)
    expect(document.text).toBe('Hello')
  })
})

describe('XML entity expansion', () => {
  const billionLaughs =
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n' +
    Array.from(
      { length: 9 },
      (_, level) => ` <!ENTITY lol${level + 1} "${`&lol${level === 0 ? '' : level};`.repeat(10)}">\n`,
    ).join('') +
    ']>\n'

  it('refuses a DTD in word/document.xml before parsing it', async () => {
    const docx = makeDocx({
      blocks: [],
      documentXml: `${billionLaughs}<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`,
    })
    const error = await refusal(extractDocument(docx, 'docx', options, recordingSink(), untouchableTools))
    expect(error.message).toBe(
      'word/document.xml declares a DTD; OOXML parts never need one, refused to prevent entity expansion',
    )
  })

  it('refuses a DTD in a worksheet', async () => {
    const xlsx = makeXlsx({
      sheets: [{ name: 'Sheet1', rows: [] }],
      sheetXml: {
        1: `${billionLaughs}<worksheet><sheetData><row><c t="inlineStr"><is><t>&lol9;</t></is></c></row></sheetData></worksheet>`,
      },
    })
    const error = await refusal(extractDocument(xlsx, 'xlsx', options, recordingSink(), untouchableTools))
    expect(error.message).toBe(
      'xl/worksheets/sheet1.xml declares a DTD; OOXML parts never need one, refused to prevent entity expansion',
    )
  })

  it('leaves entities that no DTD defines as they are, and decodes only the predefined and numeric ones', () => {
    const [root] = parseXml('<t a="&lt;&#65;&x;">&lol9; &amp; &#x42;&#67; &gt;&quot;&apos;</t>', 'part.xml')
    expect(root?.children).toEqual(['&lol9; & BC >"\''])
    expect(root?.attributes.a).toBe('<A&x;')
  })

  it('refuses XML nested deeper than any document needs', () => {
    expect(() => parseXml(`${'<a>'.repeat(1_000)}${'</a>'.repeat(1_000)}`, 'deep.xml')).toThrow(
      'deep.xml is not well-formed XML',
    )
  })

  it('keeps elements and attributes named __proto__ plain names, without touching Object.prototype', () => {
    const [root] = parseXml('<__proto__ __proto__="x" constructor="y"><polluted>yes</polluted></__proto__>', 'part.xml')
    expect(root?.name).toBe('__proto__')
    expect(Object.getPrototypeOf(root?.attributes)).toBeNull()
    expect({ ...root?.attributes }).toEqual({ ['__proto__']: 'x', constructor: 'y' })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })
})

describe('page counts, pixel counts and text lengths', () => {
  it('refuses a 20,000-page PDF from its page count, before reading a page', async () => {
    const pdf = makeManyPagePdf(20_000)
    const sink = recordingSink()
    const started = performance.now()
    const error = await refusal(extractDocument(pdf, 'pdf', options, sink, untouchableTools))
    const elapsed = performance.now() - started
    expect(error.message).toBe('the PDF has 20000 pages; the limit is 5000')
    expect(sink.updates).toEqual([])
    // About half a second on this machine, nearly all of it pdfjs reading the 1.3 MB page tree.
    expect(elapsed).toBeLessThan(5_000)
    console.info(`20,000-page PDF (${pdf.length} bytes) refused in ${elapsed.toFixed(0)} ms`)
  })

  it('refuses a 30,000 × 30,000 PNG from its header, without decoding or recognising it', async () => {
    const error = await refusal(
      extractDocument(pngHeader(30_000, 30_000), 'image', options, recordingSink(), untouchableTools),
    )
    expect(error.message).toBe('the image is 30000 × 30000 pixels (900000000); the limit is 100000000 pixels')
  })

  it('refuses text longer than maxTextCharacters while it is being assembled', async () => {
    const small = extractionOptions({ limits: { maxTextCharacters: 1_000 } })
    const docx = makeDocx({ blocks: Array.from({ length: 100 }, () => ({ paragraph: 'twenty characters!!!' })) })
    const html = makeHtml(`<p>${'x'.repeat(2_000)}</p>`)
    for (const [bytes, kind] of [
      [docx, 'docx'],
      [html, 'html'],
    ] as const) {
      const error = await refusal(extractDocument(bytes, kind, small, recordingSink(), untouchableTools))
      expect(error.message).toBe('the extracted text is longer than 1000 characters, the limit for one document')
    }
  })

  it('walks 100,000 nested HTML elements without recursion', () => {
    const nested = makeHtml(`${'<div><span>'.repeat(50_000)}deep text${'</span></div>'.repeat(50_000)}`)
    const { value, milliseconds } = timed(() => extractHtml(nested, options))
    expect(value.text).toBe('deep text')
    expect(milliseconds).toBeLessThan(10_000)
  })
})
