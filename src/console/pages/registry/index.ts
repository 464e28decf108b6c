// Embedders, LLMs and rerankers: list, detail, create and edit forms covering every
// setting, delete, and a probe run again on demand. One file per view in this folder.
import type { RegistryKind } from '../../registry-kinds.js'
import type { PageContext } from '../../types.js'
import { createView } from './create.js'
import { detailView } from './detail.js'
import { editView } from './edit.js'
import { listView } from './list.js'

export async function registryPage(kind: RegistryKind, context: PageContext): Promise<void> {
  const [first, second] = context.params
  if (!first) return listView(kind, context)
  if (first === 'new') return createView(kind, context)
  if (second === 'edit') return editView(kind, context, first)
  return detailView(kind, context, first)
}
