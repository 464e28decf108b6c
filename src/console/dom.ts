// A tiny DOM builder. Text always goes in as text nodes (never as HTML), and no style
// attribute is ever set: the CSP allows neither inline script nor inline style.

export type Child = Node | string | number | null | undefined | false | readonly Child[]
export type Attrs = Record<string, unknown>

const PROPERTIES = new Set(['value', 'checked', 'disabled', 'indeterminate', 'selected'])

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null) continue
      if (name.startsWith('on') && typeof value === 'function') {
        element.addEventListener(name.slice(2).toLowerCase(), value as EventListener)
      } else if (name === 'class') {
        if (value) element.className = String(value)
      } else if (PROPERTIES.has(name)) {
        ;(element as unknown as Record<string, unknown>)[name] = value
      } else if (value === false) {
      } else {
        element.setAttribute(name, value === true ? '' : String(value))
      }
    }
  }
  append(element, children)
  return element
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(parent, child)
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, children)
}

let nextId = 0
/** A unique element id, for label/for and aria-describedby. */
export const uid = (prefix: string): string => `${prefix}-${++nextId}`
