// One space: its settings, its embedders, a form to add a memory, document uploads, and its memories.
import { call } from '../../api.js'
import { h, replace } from '../../dom.js'
import { listAll } from '../../list-all.js'
import type { PageContext, Registration, Space } from '../../types.js'
import { errorNotice, loading, pageHeading, section } from '../../ui.js'
import { embeddersPanel } from './embedders-panel.js'
import { memoryForm } from './memory-form.js'
import { memoriesPanel } from './memory-list.js'
import { uploadPanel } from './memory-upload.js'
import { settingsPanel } from './settings-panel.js'
import { deleteSpace } from './shared.js'

export async function spaceView(context: PageContext, spaceId: string): Promise<void> {
  const { root } = context
  const body = h('div', null, loading('the space'))
  root.append(body)
  const [result, embedders] = await Promise.all([
    call<Space>('Get space', 'GET', `/v1/spaces/${encodeURIComponent(spaceId)}`),
    listAll<Registration>('List embedders', '/v1/embedders', 'embedders'),
  ])
  if (!context.isCurrent()) return
  if (!result.ok || !result.data) {
    replace(
      body,
      pageHeading('Spaces'),
      errorNotice(result.error!, 'Could not read the space'),
      h('p', null, h('a', { href: '#/spaces' }, 'Back to the spaces')),
    )
    return
  }
  const space = result.data
  const own = space.ownerId === context.me.userId
  const canEdit = own || context.me.role === 'ADMIN'
  const memories = memoriesPanel(context, space)
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        if (await deleteSpace(space)) context.navigate('#/spaces')
      },
    },
    'Delete space',
  )
  replace(
    body,
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/spaces' }, 'Spaces'), ' / '),
    pageHeading(
      space.name,
      h(
        'a',
        { class: 'button', href: `#/retrieve?space=${encodeURIComponent(space.spaceId)}` },
        'Retrieve from this space',
      ),
      canEdit ? deleteButton : null,
    ),
    h(
      'div',
      { class: 'two-col' },
      settingsPanel(context, space, own, canEdit),
      section('Embedders', embeddersPanel(context, space, embedders.items, canEdit)),
    ),
    canEdit
      ? section(
          'Add a memory',
          memoryForm(context, space, (memory) => memories.add(memory)),
        )
      : null,
    canEdit
      ? section(
          'Upload documents',
          uploadPanel(context, space, (memory) => memories.add(memory)),
        )
      : null,
    memories.element,
  )
  await memories.load()
}
