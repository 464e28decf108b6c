/**
 * HTML pages: the visible text, with headings (h1–h6) as headingPath, lists as "- " and
 * "1. " lines, tables as rows of cells joined by " | ", and block elements as line breaks.
 * Scripts, styles, templates and the head are not content. The tree is walked without
 * recursion: a page of 100,000 nested elements must not overflow the stack.
 */
import { HTMLElement, type Node, parse, TextNode } from 'node-html-parser'
import { DocumentTextBuilder } from './document-text-builder.js'
import type { ExtractedDocument, ExtractionOptions } from './extracted-document.js'

/** Elements whose content is never shown as text. */
const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'iframe',
  'object',
  'svg',
  'canvas',
])
/** Elements that start and end a block of text. */
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hgroup',
  'hr',
  'html',
  'legend',
  'main',
  'nav',
  'p',
  'section',
  'summary',
])
const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 }
const LIST_INDENT = '  '
const TABLE_CELL_SEPARATOR = ' | '
const TABLE_HEADER_RULE = '---'
/** A page declares its encoding within its first bytes; this many are searched. */
const CHARSET_SEARCH_BYTES = 2048
const LEADING_DECLARATIONS = /^\uFEFF?(?:\s*(?:<!doctype[^>]*>|<\?xml[^>]*\?>))+/i
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)/i

interface OpenList {
  ordered: boolean
  counter: number
}

/** The walk's state: the line being assembled and the structures around it. */
class HtmlTextWalker {
  readonly builder: DocumentTextBuilder
  #headings: Array<{ level: number; text: string }> = []
  /** Text of the current line outside table cells and headings. */
  #line = ''
  /** Whether the next line continues the previous block (the next list item, the line after a <br>). */
  #continuesBlock = false
  readonly #lists: OpenList[] = []
  /** Open tables' rows of cells, innermost last. */
  readonly #tables: string[][][] = []
  /** Text being collected for table cells and headings, innermost last; text goes there instead of the line. */
  readonly #captures: string[] = []
  #preDepth = 0

  constructor(maxCharacters: number) {
    this.builder = new DocumentTextBuilder(maxCharacters)
  }

  appendText(raw: string): void {
    const text = this.#preDepth > 0 ? raw : raw.replace(/\s+/g, ' ')
    const capturing = this.#captures.length > 0
    const current = capturing ? (this.#captures.at(-1) ?? '') : this.#line
    // No space at the start of a line or after one already there.
    const appended = this.#preDepth === 0 && (current === '' || /\s$/.test(current)) ? text.replace(/^ /, '') : text
    if (capturing) this.#captures[this.#captures.length - 1] = current + appended
    else this.#line = current + appended
  }

  /** Ends the current line: into the document as a new block, or as the next line of the current one. */
  endLine(): void {
    if (this.#captures.length > 0) {
      this.appendText(' ')
      return
    }
    // A list item's marker waits for the item's text, even when a paragraph inside the item brings it.
    if (/^\s*(?:- |\d+\. )$/.test(this.#line)) return
    const line = this.#line
    this.#line = ''
    if (line.trim() === '') return
    const source = { headingPath: this.#headings.map((heading) => heading.text) }
    if (this.#continuesBlock) this.builder.addLine(line, source)
    else this.builder.addBlock(line, source)
  }

  enter(element: HTMLElement, name: string): void {
    if (HEADING_LEVEL[name] !== undefined) {
      this.endLine()
      this.#captures.push('')
    } else if (name === 'ul' || name === 'ol') {
      this.endLine()
      // A nested list continues its outer list's block.
      this.#continuesBlock = this.#lists.length > 0
      this.#lists.push({ ordered: name === 'ol', counter: Number(element.getAttribute('start') ?? 1) - 1 || 0 })
    } else if (name === 'li') {
      this.endLine()
      const list = this.#lists.at(-1)
      const marker = list?.ordered ? `${++list.counter}. ` : '- '
      if (this.#captures.length > 0) this.appendText(marker)
      else this.#line = `${LIST_INDENT.repeat(Math.max(0, this.#lists.length - 1))}${marker}`
    } else if (name === 'table') {
      this.endLine()
      this.#tables.push([])
    } else if (name === 'tr') {
      this.#tables.at(-1)?.push([])
    } else if (name === 'td' || name === 'th') {
      this.#captures.push('')
    } else if (name === 'pre') {
      this.endLine()
      this.#preDepth++
    } else if (name === 'br') {
      if (this.#preDepth > 0) this.appendText('\n')
      else {
        this.endLine()
        this.#continuesBlock = true
      }
    } else if (BLOCKS.has(name)) {
      this.#endBlock()
    }
  }

  exit(name: string): void {
    const level = HEADING_LEVEL[name]
    if (level !== undefined) {
      const text = (this.#captures.pop() ?? '').replace(/\s+/g, ' ').trim()
      if (this.#captures.length > 0) this.appendText(` ${text} `)
      else if (text !== '') {
        this.#headings = this.#headings.filter((heading) => heading.level < level)
        this.#headings.push({ level, text })
        this.#continuesBlock = false
        this.#line = text
        this.endLine()
      }
      this.#continuesBlock = false
    } else if (name === 'ul' || name === 'ol') {
      this.endLine()
      this.#lists.pop()
      this.#continuesBlock = this.#lists.length > 0
    } else if (name === 'li') {
      if (/^\s*(?:- |\d+\. )$/.test(this.#line)) this.#line = ''
      this.endLine()
      this.#continuesBlock = true
    } else if (name === 'td' || name === 'th') {
      const text = (this.#captures.pop() ?? '').replace(/\s+/g, ' ').trim()
      this.#tables.at(-1)?.at(-1)?.push(text)
    } else if (name === 'table') {
      this.#endTable()
    } else if (name === 'pre') {
      this.#preDepth--
      if (this.#preDepth === 0) this.#endBlock()
    } else if (BLOCKS.has(name)) {
      this.#endBlock()
    }
  }

  #endBlock(): void {
    this.endLine()
    // Inside a list item, a paragraph is still part of the list.
    if (this.#lists.length === 0) this.#continuesBlock = false
  }

  #endTable(): void {
    const rows = (this.#tables.pop() ?? []).filter((cells) => cells.some((cell) => cell !== ''))
    const lines = rows.map((cells) => cells.join(TABLE_CELL_SEPARATOR))
    // A nested table is part of its cell's text.
    if (this.#captures.length > 0) {
      this.appendText(` ${lines.join(' ')} `)
      return
    }
    // The first row is the header (whether of th or td cells), marked as Markdown marks one.
    const [header] = rows
    if (header !== undefined && rows.length > 1) {
      lines.splice(1, 0, header.map(() => TABLE_HEADER_RULE).join(TABLE_CELL_SEPARATOR))
    }
    this.endLine()
    lines.forEach((line, index) => {
      this.#line = line
      this.#continuesBlock = index > 0
      this.endLine()
    })
    this.#continuesBlock = false
  }
}

export function extractHtml(bytes: Uint8Array, options: ExtractionOptions): ExtractedDocument {
  // node-html-parser keeps a doctype (and an XML prolog) as text.
  const html = decodeHtml(bytes).replace(LEADING_DECLARATIONS, '')
  const root = parse(html, {
    lowerCaseTagName: false,
    comment: false,
    // Their content is kept raw rather than parsed as markup; false drops it.
    blockTextElements: { script: false, style: false, noscript: false, template: false, textarea: true, pre: true },
  })
  const walker = new HtmlTextWalker(options.limits.maxTextCharacters)
  const stack: Array<{ node: Node; exiting: boolean }> = [{ node: root, exiting: false }]
  while (stack.length > 0) {
    const { node, exiting } = stack.pop() as { node: Node; exiting: boolean }
    if (node instanceof TextNode) {
      walker.appendText(node.text)
      continue
    }
    if (!(node instanceof HTMLElement)) continue
    const name = (node.rawTagName ?? '').toLowerCase()
    if (exiting) {
      walker.exit(name)
      continue
    }
    if (SKIPPED.has(name) || node.hasAttribute('hidden')) continue
    walker.enter(node, name)
    stack.push({ node, exiting: true })
    for (let index = node.childNodes.length - 1; index >= 0; index--) {
      const child = node.childNodes[index]
      if (child !== undefined) stack.push({ node: child, exiting: false })
    }
  }
  walker.endLine()
  const { text, sections } = walker.builder.build()
  return { kind: 'html', text, sections, pages: [] }
}

/** The page's text in the encoding its byte order mark or meta tag names; UTF-8 otherwise. */
export function decodeHtml(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes)
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes)
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes)
  const start = new TextDecoder('latin1').decode(bytes.subarray(0, CHARSET_SEARCH_BYTES))
  const declared = META_CHARSET.exec(start)?.[1]
  if (declared !== undefined) {
    try {
      return new TextDecoder(declared).decode(bytes)
    } catch {
      // An encoding the runtime does not know: UTF-8 is the likeliest.
    }
  }
  return new TextDecoder('utf-8').decode(bytes)
}
