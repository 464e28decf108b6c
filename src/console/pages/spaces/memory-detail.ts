// One memory: its status (refreshed while it is processed), settings, metadata and content.
import { call } from '../../api.js'
import { describeChunking } from '../../chunking-fields.js'
import { h, replace } from '../../dom.js'
import type { Memory, MemoryContent, PageContext, Space } from '../../types.js'
import { errorNotice, keyValueTable, loading, pageHeading, section, time } from '../../ui.js'
import { deleteMemory, memoryStatus, refreshWhile, spaceHref, unfinished } from './shared.js'

export async function memoryView(context: PageContext, spaceId: string, memoryId: string): Promise<void> {
  const { root } = context
  const body = h('div', null, loading('the memory'))
  root.append(body)
  const path = `/v1/memories/${encodeURIComponent(memoryId)}`
  const [result, content, space] = await Promise.all([
    call<Memory>('Get memory', 'GET', path),
    call<MemoryContent>('Get memory content', 'GET', `${path}/content`),
    call<Space>('Get space', 'GET', `/v1/spaces/${encodeURIComponent(spaceId)}`),
  ])
  if (!context.isCurrent()) return
  const back = h(
    'p',
    { class: 'breadcrumb' },
    h('a', { href: '#/spaces' }, 'Spaces'),
    ' / ',
    h('a', { href: spaceHref(spaceId) }, space.data?.name ?? 'Space'),
    ' / ',
  )
  if (!result.ok || !result.data) {
    replace(body, back, pageHeading('Memory'), errorNotice(result.error!, 'Could not read the memory'))
    return
  }
  const memory = result.data
  const statusSlot = h('div', null, memoryStatus(memory))
  const chunksSlot = h('span', null, String(memory.chunkCount))
  if (unfinished(memory)) {
    refreshWhile(context, async () => {
      const again = await call<Memory>('Get memory', 'GET', path)
      if (!again.ok || !again.data || !context.isCurrent()) return false
      replace(statusSlot, memoryStatus(again.data))
      chunksSlot.textContent = String(again.data.chunkCount)
      return unfinished(again.data)
    })
  }
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        if (await deleteMemory(memory)) context.navigate(spaceHref(memory.spaceId))
      },
    },
    'Delete memory',
  )
  replace(
    body,
    back,
    pageHeading('Memory', deleteButton),
    section(
      'Details',
      keyValueTable([
        ['ID', h('code', null, memory.memoryId)],
        ['Status', statusSlot],
        ['Chunks', chunksSlot],
        ['Content type', memory.contentType],
        ['Chunking', describeChunking(memory.chunkingConfig)],
        [
          'Metadata',
          Object.keys(memory.metadata).length
            ? h('pre', { class: 'code small' }, JSON.stringify(memory.metadata, null, 2))
            : h('span', { class: 'muted' }, 'none'),
        ],
        ['SHA-256', h('code', { class: 'small' }, memory.originalContentSha256)],
        ['Created', time(memory.createdAt)],
      ]),
    ),
    section(
      'Content',
      content.ok && content.data
        ? h(
            'pre',
            { class: 'content', 'data-testid': 'memory-content', tabindex: '0', 'aria-label': 'memory content' },
            content.data.originalContent,
          )
        : errorNotice(content.error!, 'Could not read the content'),
    ),
  )
}
