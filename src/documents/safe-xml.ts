/**
 * The parts of OOXML packages as trees of elements, children in document order (runs,
 * paragraphs and cells are read in order). Built on xml-scanner.ts, which refuses DTDs, so no
 * entity but XML's five and numeric references is ever expanded.
 */
import { ExtractionError } from './extracted-document.js'
import { scanXml } from './xml-scanner.js'

export interface XmlElement {
  /** The qualified name as written, e.g. `w:p`. */
  name: string
  /** No prototype: an attribute named __proto__ is just an attribute. */
  attributes: Record<string, string>
  children: XmlNode[]
}

export type XmlNode = XmlElement | string

/**
 * The XML's top-level elements. `describe` names the part in errors (e.g. `word/document.xml`).
 * ExtractionError for a DTD or markup that cannot be read.
 */
export function parseXml(xml: string, describe: string): XmlElement[] {
  const document: XmlElement = { name: '', attributes: Object.create(null), children: [] }
  const open: XmlElement[] = [document]
  scanXml(xml, describe, {
    open(name, attributes) {
      const element: XmlElement = { name, attributes, children: [] }
      open.at(-1)?.children.push(element)
      open.push(element)
    },
    close() {
      open.pop()
    },
    text(text) {
      open.at(-1)?.children.push(text)
    },
  })
  return document.children.filter((node): node is XmlElement => typeof node !== 'string')
}

/** The first top-level element of a part, which must be there. */
export function parseXmlRoot(xml: string, describe: string): XmlElement {
  const root = parseXml(xml, describe)[0]
  if (root === undefined) throw new ExtractionError(`${describe} is empty or not XML`)
  return root
}

/** The element's child elements, optionally only those named `name`; none when `element` is undefined. */
export function childElements(element: XmlElement | undefined, name?: string): XmlElement[] {
  if (element === undefined) return []
  return element.children.filter(
    (child): child is XmlElement => typeof child !== 'string' && (name === undefined || child.name === name),
  )
}

/** The first child element named `name`; undefined also when `element` is (optional parts chain). */
export function firstChild(element: XmlElement | undefined, name: string): XmlElement | undefined {
  return element?.children.find((child): child is XmlElement => typeof child !== 'string' && child.name === name)
}

/** Every element named `name` below `element`, in document order (not below a match). */
export function findElements(element: XmlElement, name: string): XmlElement[] {
  const found: XmlElement[] = []
  const visit = (node: XmlElement) => {
    for (const child of node.children) {
      if (typeof child === 'string') continue
      if (child.name === name) found.push(child)
      else visit(child)
    }
  }
  visit(element)
  return found
}

/** All text below the element, concatenated in order. */
export function textContent(element: XmlElement): string {
  return element.children.map((child) => (typeof child === 'string' ? child : textContent(child))).join('')
}

/** The part of a qualified name after its prefix: `w:p` → `p`. */
export function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1)
}
