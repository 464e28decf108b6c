import { describe, expect, it } from 'vitest'
import { sourceOfSpan } from '../../../src/documents/chunk-source.js'
import { extractDocx } from '../../../src/documents/docx.js'
import type { DocumentSection, ExtractedDocument } from '../../../src/documents/extracted-document.js'
import { extractHtml } from '../../../src/documents/html.js'
import { extractPdf } from '../../../src/documents/pdf.js'
import { extractPptx } from '../../../src/documents/pptx.js'
import { extractXlsx } from '../../../src/documents/xlsx.js'
import {
  extractionOptions,
  makeDocx,
  makeHtml,
  makePptx,
  makeTextPdf,
  makeXlsx,
  recordingSink,
} from '../../support/document-fixtures.js'

const options = extractionOptions()

/** Each section's text with its source, which is what chunks will cite. */
function sectionTexts(document: ExtractedDocument) {
  return document.sections.map(({ startOffset, endOffset, ...source }) => ({
    ...source,
    text: document.text.slice(startOffset, endOffset),
  }))
}

function expectWellFormedSections(document: ExtractedDocument) {
  let previousEnd = 0
  for (const section of document.sections) {
    expect(section.startOffset).toBeGreaterThanOrEqual(previousEnd)
    expect(section.endOffset).toBeGreaterThan(section.startOffset)
    expect(section.endOffset).toBeLessThanOrEqual(document.text.length)
    previousEnd = section.endOffset
  }
}

describe('Word documents', () => {
  const document = extractDocx(
    makeDocx({
      // The German id of Heading 1 (Word names the style in English whatever the id).
      styles: { berschrift1: 'heading 1', Heading2: 'heading 2', Title: 'Title' },
      blocks: [
        { paragraph: 'The Handbook', style: 'Title' },
        { paragraph: 'Before any heading.' },
        { paragraph: 'Einleitung', style: 'berschrift1' },
        { paragraph: 'A tab\there and a\nline break.' },
        { list: ['apples', 'pears'] },
        { list: ['first', 'second'], ordered: true },
        { list: ['nested a', 'nested b'], ordered: true, level: 1 },
        { list: ['third'], ordered: true },
        { paragraph: 'Details', style: 'Heading2' },
        {
          table: [
            ['Name', 'Age'],
            ['Ann', '31'],
            ['Bob', '42'],
          ],
        },
        { paragraph: 'Escaped & <kept>' },
        { paragraph: 'Second chapter', style: 'berschrift1' },
        { paragraph: 'Closing words.' },
      ],
    }),
    options,
  )

  it('keeps paragraphs, tabs, line breaks, lists and tables in order', () => {
    expect(document.text).toBe(
      [
        'The Handbook',
        'Before any heading.',
        'Einleitung',
        'A tab\there and a\nline break.',
        '- apples\n- pears\n1. first\n2. second\n  1. nested a\n  2. nested b\n3. third',
        'Details',
        'Name | Age\n--- | ---\nAnn | 31\nBob | 42',
        'Escaped & <kept>',
        'Second chapter',
        'Closing words.',
      ].join('\n\n'),
    )
    expect(document.pages).toEqual([])
  })

  it('gives each part the headings above it, localised style ids resolved by name', () => {
    expectWellFormedSections(document)
    expect(sectionTexts(document).map((section) => section.headingPath)).toEqual([
      ['The Handbook'],
      ['The Handbook', 'Einleitung'],
      ['The Handbook', 'Einleitung', 'Details'],
      ['The Handbook', 'Second chapter'],
    ])
    expect(sectionTexts(document)[3]?.text).toBe('Second chapter\n\nClosing words.')
  })
})

describe('PowerPoint presentations', () => {
  const document = extractPptx(
    makePptx({
      // slide2.xml is shown first: presentation order, not file order.
      order: [2, 1, 3],
      slides: [
        { title: 'Made first', body: ['one', 'two'], notes: 'Speak slowly\nThen stop' },
        { title: 'Shown first', body: ['alpha'] },
        {},
      ],
    }),
    options,
  )

  it('reads slides in presentation order, title first, notes under a Notes: line, without the notes page furniture', () => {
    expect(document.text).toBe('Shown first\nalpha\n\nMade first\none\ntwo\n\nNotes:\nSpeak slowly\nThen stop')
  })

  it('has one section and one page entry per slide', () => {
    expectWellFormedSections(document)
    expect(sectionTexts(document)).toEqual([
      { slide: 1, headingPath: ['Shown first'], text: 'Shown first\nalpha' },
      { slide: 2, headingPath: ['Made first'], text: 'Made first\none\ntwo\n\nNotes:\nSpeak slowly\nThen stop' },
    ])
    expect(document.pages).toEqual([
      { pageNumber: 1, method: 'TEXT', characters: 17 },
      { pageNumber: 2, method: 'TEXT', characters: 49 },
      { pageNumber: 3, method: 'NONE', characters: 0, note: 'the slide has no text' },
    ])
  })
})

describe('Excel workbooks', () => {
  const document = extractXlsx(
    makeXlsx({
      sheets: [
        {
          name: 'Sales & Costs',
          rows: [
            [null, null],
            ['Region', 'Units', null, 'Checked'],
            ['North', 12, { inline: 'inline text' }, true],
            ['South', 7.5, { formula: 'UPPER(A1)', cached: 'FORMULA' }, false],
            [null, null, null, null, 'beyond the headers'],
          ],
        },
        { name: 'Empty', rows: [] },
        { name: 'One row', rows: [['only', 'row']] },
      ],
    }),
    options,
  )

  it('names each value by its header, empty headers by the column letter', () => {
    expect(document.text).toBe(
      [
        'Sheet: Sales & Costs',
        'Region: North; Units: 12; C: inline text; Checked: TRUE',
        'Region: South; Units: 7.5; C: FORMULA; Checked: FALSE',
        'E: beyond the headers',
        '',
        'Sheet: One row',
        'only; row',
      ].join('\n'),
    )
  })

  it('has one section per sheet with text', () => {
    expectWellFormedSections(document)
    expect(sectionTexts(document).map((section) => section.sheet)).toEqual(['Sales & Costs', 'One row'])
  })

  it('reads shared strings written as rich text runs', () => {
    // The fixture writes its first shared string ('Region') as two runs.
    expect(document.text).toContain('Region: North')
  })
})

describe('HTML pages', () => {
  const document = extractHtml(
    makeHtml(
      `<h1>Main &amp; title</h1><p>Para   one
       with <b>bold</b> text.</p>
       <ul><li>one</li><li>two<ul><li>two.a</li></ul></li></ul>
       <h2>Sub</h2><ol start="3"><li><p>three</p></li><li>four</li></ol>
       <table><tr><th>Col A</th><th>Col B</th></tr><tr><td>1</td><td>2<br>x</td></tr></table>
       <div>Line<br>break</div><pre>  code
  block</pre><h1>Second</h1><p hidden>hidden</p><p>Last &eacute; &#x263A;</p><noscript>no script</noscript>`,
    ),
    options,
  )

  it('keeps visible text with lists, tables, line breaks and decoded entities; drops head, scripts and styles', () => {
    expect(document.text).toBe(
      [
        'Main & title',
        'Para one with bold text.',
        '- one\n- two\n  - two.a',
        'Sub',
        '3. three\n4. four',
        'Col A | Col B\n--- | ---\n1 | 2 x',
        'Line\nbreak',
        '  code\n  block',
        'Second',
        'Last é ☺',
      ].join('\n\n'),
    )
  })

  it('gives each part the headings above it', () => {
    expectWellFormedSections(document)
    expect(sectionTexts(document).map((section) => section.headingPath)).toEqual([
      ['Main & title'],
      ['Main & title', 'Sub'],
      ['Second'],
    ])
  })

  it('decodes the encoding a meta tag declares', () => {
    const latin1 = Buffer.from(
      '<html><head><meta charset="iso-8859-1"></head><body><p>caf\xe9</p></body></html>',
      'latin1',
    )
    expect(extractHtml(latin1, options).text).toBe('café')
  })
})

describe('PDFs with a text layer', () => {
  it('reads each page as a section of its page, lines broken where the text moves down', async () => {
    const sink = recordingSink()
    const document = await extractPdf(
      makeTextPdf([['Hello world', 'Second (line) \\ here'], [], ['Page three']]),
      options,
      sink,
    )
    expect(document.text).toBe('Hello world\nSecond (line) \\ here\n\nPage three')
    expect(sectionTexts(document)).toEqual([
      { page: 1, text: 'Hello world\nSecond (line) \\ here' },
      { page: 3, text: 'Page three' },
    ])
    expect(document.pages).toEqual([
      { pageNumber: 1, method: 'TEXT', characters: 32 },
      { pageNumber: 2, method: 'NONE', characters: 0, note: 'no text layer' },
      { pageNumber: 3, method: 'TEXT', characters: 10 },
    ])
    expect(sink.updates).toEqual([1, 2, 3].map((pagesDone) => ({ stage: 'EXTRACTING', pagesDone, pagesTotal: 3 })))
  })

  it('reads a 100-page PDF in well under a few seconds', async () => {
    const pages = Array.from({ length: 100 }, (_, page) =>
      Array.from({ length: 40 }, (_, line) => `Page ${page + 1} line ${line + 1} with some words to make it a line`),
    )
    const started = performance.now()
    const document = await extractPdf(makeTextPdf(pages), options, recordingSink())
    const elapsed = performance.now() - started
    expect(document.pages).toHaveLength(100)
    expect(document.sections.at(-1)?.page).toBe(100)
    expect(document.text).toContain('Page 100 line 40 with some words')
    // About 0.4 s on this machine; the bound only catches pathological slowness.
    expect(elapsed).toBeLessThan(10_000)
  })
})

describe('sourceOfSpan', () => {
  const sections: DocumentSection[] = [
    { startOffset: 0, endOffset: 10, page: 1, headingPath: ['Intro'] },
    { startOffset: 12, endOffset: 20, page: 2 },
    { startOffset: 22, endOffset: 30, page: 3 },
    { startOffset: 32, endOffset: 40, slide: 4, sheet: 'S', headingPath: [] },
  ]

  it.each([
    [0, 5, { page: 1, headingPath: ['Intro'] }],
    [5, 15, { page: 1, pageEnd: 2, headingPath: ['Intro'] }],
    [9, 25, { page: 1, pageEnd: 3, headingPath: ['Intro'] }],
    [10, 12, {}],
    [11, 14, { page: 2 }],
    [12, 20, { page: 2 }],
    [19, 22, { page: 2 }],
    [33, 35, { slide: 4, sheet: 'S' }],
    [40, 50, {}],
    [5, 5, { page: 1, headingPath: ['Intro'] }],
  ])('span %i–%i comes from %o', (start, end, expected) => {
    expect(sourceOfSpan(sections, start, end)).toEqual(expected)
  })

  it('finds the source among 100,000 sections by search', () => {
    const many = Array.from({ length: 100_000 }, (_, index) => ({
      startOffset: index * 10,
      endOffset: index * 10 + 8,
      page: index + 1,
    }))
    const started = performance.now()
    for (let index = 0; index < 100_000; index += 7) sourceOfSpan(many, index * 10 + 1, index * 10 + 25)
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(sourceOfSpan(many, 500_001, 500_025)).toEqual({ page: 50_001, pageEnd: 50_003 })
  })
})
