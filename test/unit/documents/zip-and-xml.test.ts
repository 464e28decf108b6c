import { describe, expect, it } from 'vitest'
import { ExtractionError } from '../../../src/documents/extracted-document.js'
import { parseXml, textContent } from '../../../src/documents/safe-xml.js'
import { sniffContentType } from '../../../src/documents/sniff.js'
import { scanXml } from '../../../src/documents/xml-scanner.js'
import { ZipArchive } from '../../../src/documents/zip-archive.js'
import { docxDocumentXml, extractionOptions, writeZip } from '../../support/document-fixtures.js'

const limits = extractionOptions().limits

describe('the ZIP reader', () => {
  const entries = [
    { name: 'word/document.xml', data: docxDocumentXml([{ paragraph: 'Zipped' }]) },
    { name: 'media/stored.bin', data: 'x'.repeat(1_000), method: 'stored' as const },
  ]

  it('reads deflated and stored entries, and counts what it inflated', () => {
    const archive = ZipArchive.open(writeZip(entries), limits)
    expect(archive.entryNames()).toEqual(['word/document.xml', 'media/stored.bin'])
    expect(new TextDecoder().decode(archive.read('media/stored.bin'))).toBe('x'.repeat(1_000))
    expect(archive.readText('word/document.xml')).toContain('Zipped')
    expect(archive.decompressedBytes).toBe(1_000 + (entries[0]?.data.length ?? 0))
  })

  it('reads ZIP64 directories (sizes and offsets in ZIP64 fields and end record)', () => {
    const zip64 = writeZip(entries, { zip64: true })
    const archive = ZipArchive.open(zip64, limits)
    expect(archive.entryNames()).toEqual(['word/document.xml', 'media/stored.bin'])
    expect(archive.readText('word/document.xml')).toContain('Zipped')
    expect(sniffContentType(zip64, zip64)).toBe(
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    )
  })

  it('reads a zip with data in front of it (a self-extracting archive) by the directory’s real place', () => {
    const prefixed = Buffer.concat([Buffer.alloc(5_000, 0x4d), writeZip(entries)])
    expect(ZipArchive.open(prefixed, limits).readText('word/document.xml')).toContain('Zipped')
  })

  it('finds the end record behind an archive comment', () => {
    const zip = Buffer.from(writeZip(entries))
    // The comment holds an end-record signature of its own, as a crafted archive could.
    const comment = Buffer.concat([Buffer.from('PK\u0005\u0006 not the record '), Buffer.alloc(30, 0x20)])
    zip.writeUInt16LE(comment.length, zip.length - 2)
    const archive = ZipArchive.open(Buffer.concat([zip, comment]), limits)
    expect(archive.entryNames()).toHaveLength(2)
  })

  it('refuses a damaged directory and a corrupted entry with clear messages', () => {
    const zip = Buffer.from(writeZip(entries))
    const directory = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    const badDirectory = Buffer.from(zip)
    badDirectory.writeUInt32LE(0xdeadbeef, directory)
    expect(() => ZipArchive.open(badDirectory, limits)).toThrow(
      'the document is damaged: its central directory is truncated or corrupt',
    )
    const badData = Buffer.from(zip)
    // Inside the first entry's deflated data (after its 30-byte local header and 17-byte name).
    badData[50] = (badData[50] ?? 0) ^ 0xff
    expect(() => ZipArchive.open(badData, limits).read('word/document.xml')).toThrow(ExtractionError)
    expect(() => ZipArchive.open(zip.subarray(0, zip.length - 10), limits)).toThrow(ExtractionError)
    expect(() => ZipArchive.open(zip, limits).read('missing.xml')).toThrow(
      'the document is damaged: it has no missing.xml',
    )
  })
})

describe('the XML scanner', () => {
  it('reads elements, attributes in either quotes, text, CDATA, and skips comments and processing instructions', () => {
    const [root] = parseXml(
      `<?xml version="1.0"?><!-- a comment --><a x = "1 &gt; 0" y='two'>text <![CDATA[<raw> & kept]]><b/><?pi data?>` +
        '<c z="a>b">inner</c></a>',
      'part.xml',
    )
    expect(root).toEqual({
      name: 'a',
      attributes: expect.objectContaining({ x: '1 > 0', y: 'two' }),
      children: [
        'text ',
        '<raw> & kept',
        { name: 'b', attributes: {}, children: [] },
        { name: 'c', attributes: expect.objectContaining({ z: 'a>b' }), children: ['inner'] },
      ],
    })
  })

  it('skips an end tag without a start tag and closes elements an end tag skips', () => {
    const [root] = parseXml('<a><b>one</x>two</a>', 'part.xml')
    expect(root && textContent(root)).toBe('onetwo')
    const events: string[] = []
    scanXml('<a><b><c>deep</a>', 'part.xml', {
      open: (name) => events.push(`+${name}`),
      close: (name) => events.push(`-${name}`),
    })
    expect(events).toEqual(['+a', '+b', '+c', '-c', '-b', '-a'])
  })

  it('keeps what a part cut short holds, and refuses a tag cut in the middle', () => {
    const [root] = parseXml('<a><b>kept</b><c>also', 'part.xml')
    expect(root && textContent(root)).toBe('keptalso')
    expect(() => parseXml('<a><b attr="unterminated', 'part.xml')).toThrow('part.xml is not well-formed XML')
    expect(() => parseXml('<a><!-- never ends', 'part.xml')).toThrow(
      'part.xml is not well-formed XML: a comment never ends',
    )
  })

  it('reads a worksheet-sized part quickly', () => {
    const xml = `<sheetData>${'<row r="1"><c r="A1" t="s"><v>12</v></c><c r="B1"><v>3.5</v></c></row>'.repeat(100_000)}</sheetData>`
    let cells = 0
    const started = performance.now()
    scanXml(xml, 'sheet.xml', {
      open: (name) => {
        if (name === 'c') cells++
      },
    })
    expect(cells).toBe(200_000)
    // About 0.15 s here; fast-xml-parser needed seconds for the same.
    expect(performance.now() - started).toBeLessThan(3_000)
  })
})
