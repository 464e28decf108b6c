// The list of one kind's registrations, filtered by provider, a page at a time.
import { query } from '../../api.js'
import { type Child, h } from '../../dom.js'
import { select } from '../../forms.js'
import { pagedTable } from '../../paged-table.js'
import type { RegistryKind } from '../../registry-kinds.js'
import type { PageContext, Registration } from '../../types.js'
import { badge, deleteRowButton, labelChips, notice, pageHeading } from '../../ui.js'
import { deleteItem, idOf, itemHref, lastProbeOf, providerLabel, requestProbe } from './shared.js'

const PAGE_SIZE = 50

function unavailable(kind: RegistryKind): HTMLElement {
  return notice('info', `The ${kind.plural} API is not available on this server (${kind.path} answered 404).`)
}

/** The column after the endpoint: what tells registrations of this kind apart at a glance. */
function kindColumn(kind: RegistryKind): { title: string; cell(item: Registration): Child } {
  switch (kind.kind) {
    case 'embedder':
      return { title: 'Dimensions', cell: (item) => String(item.dimensionality ?? '') }
    case 'llm':
      return {
        title: 'Context',
        cell: (item) =>
          item.maxContextLength !== undefined ? String(item.maxContextLength) : h('span', { class: 'muted' }, '—'),
      }
    default:
      return {
        title: 'Last probe',
        cell: (item) =>
          lastProbeOf(item)
            ? badge(lastProbeOf(item)!.status, lastProbeOf(item)!.status === 'OK' ? 'ok' : 'bad')
            : h('span', { class: 'muted' }, '—'),
      }
  }
}

export async function listView(kind: RegistryKind, context: PageContext): Promise<void> {
  const { root } = context
  let provider = context.query.get('provider') ?? ''
  const ownColumn = kindColumn(kind)

  const row = (item: Registration): HTMLTableRowElement => {
    const tr: HTMLTableRowElement = h(
      'tr',
      { 'data-id': idOf(kind, item) },
      h('th', { scope: 'row' }, h('a', { href: itemHref(kind, item) }, String(item.displayName ?? '(unnamed)'))),
      h('td', null, providerLabel(String(item.providerType ?? ''))),
      h('td', null, h('code', null, String(item.modelIdentifier ?? ''))),
      h('td', { class: 'wrap' }, h('code', null, `${item.endpointUrl ?? ''}${item.apiPath ?? ''}`)),
      h('td', null, ownColumn.cell(item)),
      h('td', { class: 'optional-col' }, badge(String(item.credentials?.kind ?? '?').replace('_', ' '), 'neutral')),
      h('td', { class: 'optional-col' }, labelChips(item.labels)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'div',
          { class: 'actions' },
          h('a', { class: 'button small', href: itemHref(kind, item, '/edit') }, 'Edit'),
          h('button', { type: 'button', class: 'button small', onClick: () => requestProbe(kind, item) }, 'Probe'),
          deleteRowButton(root, () => deleteItem(kind, item)),
        ),
      ),
    )
    return tr
  }

  const { tableSlot, moreSlot, load } = pagedTable<Record<string, unknown> & { nextToken?: string }, Registration>(
    context,
    {
      plural: kind.plural,
      request: (nextToken) => ({
        action: `List ${kind.plural}`,
        path: `${kind.path}${query({ maxResults: PAGE_SIZE, providerType: provider || undefined, nextToken })}`,
      }),
      items: (data) => (data[kind.listField] as Registration[] | undefined) ?? [],
      row,
      unavailable: () => unavailable(kind),
      empty: () =>
        notice('info', `No ${kind.plural} registered${provider ? ` for ${providerLabel(provider)}` : ''} yet.`),
      table: {
        label: kind.title,
        columns: ['Name', 'Provider', 'Model', 'Endpoint', ownColumn.title, 'Credentials', 'Labels', 'Actions'],
        optional: ['Credentials', 'Labels'],
      },
    },
  )

  const providerFilter = select(
    [['', 'All providers'], ...kind.providers.map((value): [string, string] => [value, providerLabel(value)])],
    {
      id: 'provider-filter',
      onChange: () => {
        provider = providerFilter.value
        void load(true)
      },
    },
  )
  providerFilter.value = provider
  root.append(
    pageHeading(
      kind.title,
      h('a', { class: 'button primary', href: `#/${kind.route}/new` }, `Register ${kind.article}`),
    ),
    h(
      'section',
      { class: 'panel', 'aria-label': `Registered ${kind.plural}` },
      h(
        'div',
        { class: 'panel-head' },
        h('h3', null, `Your ${kind.plural}`),
        h(
          'div',
          { class: 'filters' },
          h('div', { class: 'inline-field' }, h('label', { for: 'provider-filter' }, 'Provider'), providerFilter),
        ),
      ),
      tableSlot,
      moreSlot,
    ),
  )
  await load(true)
}
