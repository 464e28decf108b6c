// Spaces and their memories: list, create and delete spaces; a space's embedders with
// their index state; the space's memories with their processing status (refreshed while
// any is still being processed), create, view and delete. One file per view and panel in this folder.
import type { PageContext } from '../../types.js'
import { createView } from './create.js'
import { spaceView } from './detail.js'
import { listView } from './list.js'
import { memoryView } from './memory-detail.js'

export async function spacesPage(context: PageContext): Promise<void> {
  const [first, second, third] = context.params
  if (!first) return listView(context)
  if (first === 'new') return createView(context)
  if (second === 'memories' && third) return memoryView(context, first, third)
  return spaceView(context, first)
}
