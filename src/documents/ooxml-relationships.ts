/**
 * OOXML parts find each other through relationship parts (`_rels/<part>.rels`): the
 * presentation lists its slides by relationship id, a slide names its notes the same way.
 */
import { childElements, parseXmlRoot } from './safe-xml.js'
import type { ZipArchive } from './zip-archive.js'

export interface Relationship {
  /** The relationship type URI; its last segment says what it is (`slide`, `notesSlide`, `worksheet`). */
  type: string
  /** The target part's path inside the package, resolved against the source part's folder. */
  target: string
  /** External targets (hyperlinks) are URLs, not parts. */
  external: boolean
}

/** The relationships of `partPath` by id; empty when the part has none. */
export function readRelationships(zip: ZipArchive, partPath: string): Map<string, Relationship> {
  const slash = partPath.lastIndexOf('/')
  const folder = partPath.slice(0, slash + 1)
  const relsPath = `${folder}_rels/${partPath.slice(slash + 1)}.rels`
  const relationships = new Map<string, Relationship>()
  if (!zip.has(relsPath)) return relationships
  const root = parseXmlRoot(zip.readText(relsPath), relsPath)
  for (const element of childElements(root, 'Relationship')) {
    const { Id: id, Type: type = '', Target: target = '', TargetMode: mode } = element.attributes
    if (id === undefined) continue
    const external = mode === 'External'
    relationships.set(id, { type, target: external ? target : resolvePartPath(folder, target), external })
  }
  return relationships
}

/** The last segment of a relationship type URI. */
export function relationshipKind(relationship: Relationship): string {
  return relationship.type.slice(relationship.type.lastIndexOf('/') + 1)
}

/** `target` resolved against `folder` (which ends in / or is empty); a leading / is the package root. */
export function resolvePartPath(folder: string, target: string): string {
  const absolute = target.startsWith('/')
  const segments = (absolute ? target.slice(1) : `${folder}${target}`).split('/')
  const resolved: string[] = []
  for (const segment of segments) {
    if (segment === '..') resolved.pop()
    else if (segment !== '.' && segment !== '') resolved.push(segment)
  }
  return resolved.join('/')
}
