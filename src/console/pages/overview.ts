import { call } from '../api.js'
import { type Count, countAll } from '../counts.js'
import { h } from '../dom.js'
import { EMBEDDERS, LLMS, RERANKERS } from '../registry-kinds.js'
import type { PageContext, SystemInfo } from '../types.js'
import { badge, errorNotice, keyValueTable, loading, pageHeading, section } from '../ui.js'

export interface Probe {
  status: number
  body?: { state?: string; ready?: boolean; reason?: string }
}

export async function probe(path: string): Promise<Probe> {
  const result = await call<Probe['body']>(`Probe ${path}`, 'GET', path, { auth: false })
  // /readyz answers 503 with a body while not ready: that is an answer, not a failure.
  return { status: result.status, body: (result.data ?? result.raw) as Probe['body'] }
}

export function stateBadge(state: string | undefined): HTMLElement {
  if (!state) return badge('unknown', 'neutral')
  return badge(state, state === 'READY' ? 'ok' : state === 'STARTING' ? 'warn' : 'bad')
}

export function readinessBadge(readyz: Probe): HTMLElement {
  if (readyz.status === 200) return badge('Ready', 'ok')
  if (readyz.status === 0) return badge('Unreachable', 'bad')
  return badge(`Not ready (HTTP ${readyz.status}${readyz.body?.reason ? `: ${readyz.body.reason}` : ''})`, 'bad')
}

function countCard(title: string, count: Count, href: string, linkText: string, note?: string): HTMLElement {
  let value: HTMLElement
  if (count.unavailable) value = h('p', { class: 'count unavailable' }, 'Not available on this server')
  else if (count.error) value = h('p', { class: 'count unavailable' }, `Error: ${count.error.message}`)
  else value = h('p', { class: 'count' }, `${count.count}${count.more ? '+' : ''}`)
  return h(
    'article',
    { class: 'card', 'aria-label': title },
    h('h3', null, title),
    value,
    note ? h('p', { class: 'muted small' }, note) : null,
    count.unavailable ? null : h('a', { href }, linkText),
  )
}

export async function overviewPage(context: PageContext): Promise<void> {
  const { root } = context
  const body = h('div', null, loading('the overview'))
  root.append(
    pageHeading(
      'Overview',
      h('button', { type: 'button', class: 'button small', onClick: () => context.reload() }, 'Refresh'),
    ),
    body,
  )
  const [info, livez, readyz, keys, embedders, llms, rerankers] = await Promise.all([
    call<SystemInfo>('Read system info', 'GET', '/v1/system/info', { auth: false }),
    probe('/livez'),
    probe('/readyz'),
    countAll('Count API keys', '/v1/apikeys', 'keys'),
    countAll('Count embedders', EMBEDDERS.path, EMBEDDERS.listField),
    countAll('Count LLMs', LLMS.path, LLMS.listField),
    countAll('Count rerankers', RERANKERS.path, RERANKERS.listField),
  ])
  if (!context.isCurrent()) return
  const state = livez.body?.state ?? info.data?.lifecycleState
  body.replaceChildren(
    section(
      'Server',
      info.ok ? null : errorNotice(info.error!, 'Could not read the system information'),
      keyValueTable([
        ['Version', h('span', { class: 'mono', 'data-testid': 'version' }, info.data?.version ?? 'unknown')],
        ['Lifecycle state', h('span', { 'data-testid': 'lifecycle-state' }, stateBadge(state))],
        ['Readiness', h('span', { 'data-testid': 'readiness' }, readinessBadge(readyz))],
        ['Storage', info.data?.storage ?? 'unknown'],
        ['TLS', info.data ? (info.data.tlsEnabled ? 'enabled' : 'disabled (plaintext)') : 'unknown'],
        ['Signed in as', `${context.me.username} (${context.me.role.toLowerCase()})`],
      ]),
    ),
    h(
      'div',
      { class: 'cards', role: 'group', 'aria-label': 'Counts' },
      countCard('API keys', keys, '#/apikeys', 'Manage API keys', 'Keys you own'),
      countCard('Embedders', embedders, '#/embedders', 'Manage embedders', 'Registrations you own'),
      countCard('LLMs', llms, '#/llms', 'Manage LLMs', 'Registrations you own'),
      countCard('Rerankers', rerankers, '#/rerankers', 'Manage rerankers', 'Registrations you own'),
    ),
  )
}
