// The list of your spaces with their embedders, a page at a time.
import { query } from '../../api.js'
import { h } from '../../dom.js'
import { listAll } from '../../list-all.js'
import { pagedTable } from '../../paged-table.js'
import type { PageContext, Registration, Space } from '../../types.js'
import { badge, deleteRowButton, labelChips, notice, pageHeading, time } from '../../ui.js'
import { deleteSpace, spaceHref } from './shared.js'

const SPACE_PAGE_SIZE = 50

function unavailable(): HTMLElement {
  return notice('info', 'The spaces API is not available on this server (/v1/spaces answered 404).')
}

/** Embedder names by id, for showing a space's embedders; empty when the list cannot be read. */
async function embedderNames(): Promise<Map<string, string>> {
  const all = await listAll<Registration>('List embedders', '/v1/embedders', 'embedders')
  return new Map(all.items.map((item) => [String(item.embedderId), String(item.displayName ?? item.embedderId)]))
}

export async function listView(context: PageContext): Promise<void> {
  const { root } = context
  const { tableSlot, moreSlot, tbody, load } = pagedTable<{ spaces: Space[]; nextToken?: string }, Space>(context, {
    plural: 'spaces',
    request: (nextToken) => ({
      action: 'List spaces',
      path: `/v1/spaces${query({ maxResults: SPACE_PAGE_SIZE, nextToken })}`,
    }),
    items: (data) => data.spaces,
    row: (space) => row(space),
    unavailable,
    empty: () => notice('info', 'No spaces yet. A space holds memories and names the embedders that index them.'),
    table: {
      label: 'Spaces',
      columns: ['Name', 'Embedders', 'Access', 'Labels', 'Created', 'Actions'],
      optional: ['Labels', 'Created'],
    },
  })
  const names = await embedderNames()
  if (!context.isCurrent()) return

  const row = (space: Space): HTMLTableRowElement => {
    const tr: HTMLTableRowElement = h(
      'tr',
      { 'data-space-id': space.spaceId },
      h('th', { scope: 'row' }, h('a', { href: spaceHref(space.spaceId) }, space.name)),
      h(
        'td',
        null,
        h(
          'ul',
          { class: 'plain' },
          space.spaceEmbedders.map((entry) =>
            h(
              'li',
              null,
              names.get(entry.embedderId) ?? h('code', { class: 'small' }, entry.embedderId),
              ' ',
              h('span', { class: 'muted' }, `×${entry.defaultRetrievalWeight}`),
              ' ',
              badge(entry.indexState, entry.indexState === 'READY' ? 'ok' : 'warn'),
            ),
          ),
        ),
      ),
      h('td', null, space.publicRead ? badge('public read', 'warn') : badge('private', 'off')),
      h('td', { class: 'optional-col' }, labelChips(space.labels)),
      h('td', { class: 'optional-col' }, time(space.createdAt)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'div',
          { class: 'actions' },
          h('a', { class: 'button small', href: spaceHref(space.spaceId) }, 'Memories'),
          deleteRowButton(
            root,
            () => deleteSpace(space),
            async () => {
              // The last one gone: say so, as for an empty list.
              if (tbody.children.length === 0) await load(true)
            },
          ),
        ),
      ),
    )
    return tr
  }

  root.append(
    pageHeading('Spaces', h('a', { class: 'button primary', href: '#/spaces/new' }, 'Create a space')),
    h(
      'section',
      { class: 'panel', 'aria-label': 'Your spaces' },
      h('div', { class: 'panel-head' }, h('h3', null, 'Your spaces')),
      tableSlot,
      moreSlot,
    ),
  )
  await load(true)
}
