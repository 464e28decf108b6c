/**
 * A streaming XML scanner for OOXML parts: elements, attributes, text and CDATA in one pass,
 * reported as events, with no tree unless the caller builds one. fast-xml-parser read a
 * 100,000-row worksheet (18 MB of XML) in 7–10 s and 1.2 GB; this reads it in well under a
 * second, and a worksheet is turned into lines as it is read.
 *
 * Safety: a DTD is refused before anything is read (OOXML never has one, and its entities are
 * how "billion laughs" expands kilobytes into gigabytes), so the only entities are XML's five
 * and numeric character references, decoded here. Nesting is bounded. Malformed markup is read
 * leniently (an unmatched end tag is skipped, a truncated part ends where its text ends), as
 * browsers and Office do, since the part came out of a checksummed archive.
 */
import { ExtractionError } from './extracted-document.js'

export interface XmlHandlers {
  /** An element starts; for `<a/>` close follows at once. Attributes have no prototype. */
  open?(name: string, attributes: Record<string, string>): void
  close?(name: string): void
  /** Text (entities decoded) or CDATA (as it is) between tags; may arrive in several pieces. */
  text?(text: string): void
}

const DTD_DECLARATION = /<!(?:DOCTYPE|ENTITY)/i
/** The five entities XML predefines, and numeric character references: everything a part without a DTD can use. */
const PREDEFINED_ENTITY = /&(?:#x([0-9a-f]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/gi
const PREDEFINED_ENTITY_TEXT: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const HEXADECIMAL = 16
const DECIMAL = 10
const MAX_CODE_POINT = 0x10ffff
/** Word nests tables in tables; nothing real comes near this. */
export const MAX_NESTED_ELEMENTS = 256

/** Reads `xml`, reporting its elements and text in document order. `describe` names the part in errors. */
export function scanXml(xml: string, describe: string, handlers: XmlHandlers): void {
  if (DTD_DECLARATION.test(xml)) {
    throw new ExtractionError(
      `${describe} declares a DTD; OOXML parts never need one, refused to prevent entity expansion`,
    )
  }
  const open: string[] = []
  let at = 0
  while (at < xml.length) {
    const tag = xml.indexOf('<', at)
    const textEnd = tag < 0 ? xml.length : tag
    if (textEnd > at && open.length > 0) handlers.text?.(decodeXmlEntities(xml.slice(at, textEnd)))
    if (tag < 0) break
    const next = xml.charCodeAt(tag + 1)
    if (next !== EXCLAMATION && next !== QUESTION && next !== SLASH) {
      at = openElement(xml, tag, open, describe, handlers)
    } else if (xml.startsWith('<!--', tag)) {
      at = skipPast(xml, '-->', tag, describe, 'a comment')
    } else if (xml.startsWith('<![CDATA[', tag)) {
      const end = skipPast(xml, ']]>', tag, describe, 'a CDATA section')
      if (open.length > 0) handlers.text?.(xml.slice(tag + '<![CDATA['.length, end - ']]>'.length))
      at = end
    } else if (xml.startsWith('<?', tag)) {
      at = skipPast(xml, '?>', tag, describe, 'a processing instruction')
    } else if (xml.startsWith('<!', tag)) {
      at = skipPast(xml, '>', tag, describe, 'a declaration')
    } else {
      const end = skipPast(xml, '>', tag, describe, 'an end tag')
      closeElement(xml.slice(tag + 2, end - 1).trim(), open, handlers)
      at = end
    }
  }
  // A part cut short: what was read is kept, as if the open elements were closed.
  while (open.length > 0) handlers.close?.(open.pop() ?? '')
}

function openElement(xml: string, tag: number, open: string[], describe: string, handlers: XmlHandlers): number {
  // Scanned by character codes rather than regular expressions: this runs once per element, a million times a sheet.
  let at = tag + 1
  while (at < xml.length && !isNameEnd(xml.charCodeAt(at))) at++
  const name = xml.slice(tag + 1, at)
  if (name === '') throw new ExtractionError(`${describe} is not well-formed XML: a "<" starts no tag`)
  const attributes: Record<string, string> = Object.create(null)
  for (;;) {
    while (isWhitespace(xml.charCodeAt(at))) at++
    const code = xml.charCodeAt(at)
    if (code === GREATER_THAN) {
      at++
      open.push(name)
      break
    }
    if (code === SLASH && xml.charCodeAt(at + 1) === GREATER_THAN) {
      at += 2
      handlers.open?.(name, attributes)
      handlers.close?.(name)
      return at
    }
    const equals = xml.indexOf('=', at)
    const quote = equals < 0 ? -1 : xml.charCodeAt(skipWhitespace(xml, equals + 1))
    if (equals < 0 || (quote !== DOUBLE_QUOTE && quote !== SINGLE_QUOTE) || Number.isNaN(code)) {
      throw new ExtractionError(`${describe} is not well-formed XML: the tag <${name}> is malformed`)
    }
    const valueStart = skipWhitespace(xml, equals + 1) + 1
    const valueEnd = xml.indexOf(String.fromCharCode(quote), valueStart)
    const attributeName = xml.slice(at, equals).trim()
    if (valueEnd < 0 || attributeName === '' || /[\s<>]/.test(attributeName)) {
      throw new ExtractionError(`${describe} is not well-formed XML: the tag <${name}> is malformed`)
    }
    attributes[attributeName] = decodeXmlEntities(xml.slice(valueStart, valueEnd))
    at = valueEnd + 1
  }
  if (open.length > MAX_NESTED_ELEMENTS) {
    throw new ExtractionError(`${describe} is not well-formed XML: elements nest deeper than ${MAX_NESTED_ELEMENTS}`)
  }
  handlers.open?.(name, attributes)
  return at
}

const EXCLAMATION = 0x21
const QUESTION = 0x3f
const GREATER_THAN = 0x3e
const SLASH = 0x2f
const DOUBLE_QUOTE = 0x22
const SINGLE_QUOTE = 0x27

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

function isNameEnd(code: number): boolean {
  return isWhitespace(code) || code === GREATER_THAN || code === SLASH
}

function skipWhitespace(xml: string, from: number): number {
  let at = from
  while (isWhitespace(xml.charCodeAt(at))) at++
  return at
}

function closeElement(name: string, open: string[], handlers: XmlHandlers): void {
  // An end tag without its start tag is skipped; one that skips open elements closes them too.
  if (!open.includes(name)) return
  for (let closing = open.pop(); closing !== undefined; closing = open.pop()) {
    handlers.close?.(closing)
    if (closing === name) return
  }
}

function skipPast(xml: string, terminator: string, from: number, describe: string, what: string): number {
  const end = xml.indexOf(terminator, from)
  if (end < 0) throw new ExtractionError(`${describe} is not well-formed XML: ${what} never ends`)
  return end + terminator.length
}

export function decodeXmlEntities(text: string): string {
  if (!text.includes('&')) return text
  return text.replace(PREDEFINED_ENTITY, (whole, hex?: string, decimal?: string, name?: string) => {
    if (name !== undefined) return PREDEFINED_ENTITY_TEXT[name.toLowerCase()] ?? whole
    const codePoint = hex !== undefined ? Number.parseInt(hex, HEXADECIMAL) : Number.parseInt(decimal ?? '', DECIMAL)
    return codePoint <= MAX_CODE_POINT ? String.fromCodePoint(codePoint) : whole
  })
}
