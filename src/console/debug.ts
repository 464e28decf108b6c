// Debug mode: every request the console made, as the equivalent curl command and the
// raw response with its HTTP status, newest first.
import { clearDebugLog, type DebugEntry, debugLog, onDebugLog, statusLine } from './api.js'
import { curlCommand } from './curl.js'
import { h, replace } from './dom.js'
import { session } from './session.js'
import { copyButton } from './ui.js'

let reveal = false
/** Entries whose <details> is open; the newest one opens by itself. */
const open = new Set<number>()
let newestSeen = 0

function tone(status: number): string {
  if (status >= 200 && status < 300) return 'ok'
  if (status >= 400 && status < 500) return 'warn'
  return 'bad'
}

const isStream = (entry: DebugEntry): boolean => entry.streamed === true && entry.status >= 200 && entry.status < 300
const streamLines = (entry: DebugEntry): string[] => entry.responseText.split('\n').filter(Boolean)
/** One block per NDJSON line, so that a long line that wraps still reads as one event; the text keeps its newlines for copying. */
const streamLineViews = (entry: DebugEntry): HTMLElement[] =>
  streamLines(entry).map((line) => h('span', { class: 'stream-line' }, `${line}\n`))

function entryView(entry: DebugEntry): HTMLElement {
  const curl = () => curlCommand(entry, location.origin, reveal ? (session.apiKey ?? undefined) : undefined)
  const response = entry.responseText === '' ? '(empty body)' : entry.responseText
  const details = h(
    'details',
    { class: 'debug-entry', 'data-entry': entry.id },
    h(
      'summary',
      null,
      h('span', { class: 'debug-action' }, entry.action),
      h('code', { class: 'debug-request' }, `${entry.method} ${entry.path}`),
      h('span', { class: `badge ${tone(entry.status)}`, 'data-testid': 'debug-status' }, statusLine(entry.status)),
      h('span', { class: 'muted' }, `${entry.durationMs} ms`),
    ),
    h(
      'div',
      { class: 'debug-block' },
      h(
        'div',
        { class: 'block-head' },
        h('span', null, 'curl'),
        copyButton('Copy curl', curl, { 'aria-label': `Copy curl command for ${entry.action}` }),
      ),
      h('pre', { class: 'code', 'data-testid': 'debug-curl', tabindex: '0', 'aria-label': 'curl command' }, curl()),
    ),
    h(
      'div',
      { class: 'debug-block' },
      h(
        'div',
        { class: 'block-head' },
        h(
          'span',
          null,
          isStream(entry)
            ? `Stream: HTTP ${statusLine(entry.status)}, ${streamLines(entry).length} lines`
            : `Response: HTTP ${statusLine(entry.status)}`,
        ),
        copyButton(isStream(entry) ? 'Copy lines' : 'Copy JSON', () => entry.responseText, {
          'aria-label': `Copy response of ${entry.action}`,
        }),
      ),
      h(
        'pre',
        { class: 'code', 'data-testid': 'debug-response', tabindex: '0', 'aria-label': 'raw response' },
        isStream(entry) ? streamLineViews(entry) : response,
      ),
    ),
  )
  details.open = open.has(entry.id)
  details.addEventListener('toggle', () => (details.open ? open.add(entry.id) : open.delete(entry.id)))
  return details
}

export function debugPanel(): { element: HTMLElement; dispose: () => void } {
  const list = h('div', { class: 'debug-list', 'aria-live': 'off' })
  const revealButton = h(
    'button',
    {
      type: 'button',
      class: 'button small',
      'aria-pressed': String(reveal),
      title: 'Show the session API key in the curl commands instead of $MEMSVC_API_KEY',
      onClick: () => {
        reveal = !reveal
        revealButton.setAttribute('aria-pressed', String(reveal))
        revealButton.textContent = reveal ? 'Hide API key' : 'Reveal API key'
        render()
      },
    },
    reveal ? 'Hide API key' : 'Reveal API key',
  )
  const render = () => {
    for (const entry of debugLog) {
      if (entry.id > newestSeen) {
        newestSeen = entry.id
        open.clear()
        open.add(entry.id)
      }
    }
    replace(
      list,
      debugLog.length === 0
        ? h(
            'p',
            { class: 'muted' },
            'No requests yet. Every action you take here appears as a curl command with its raw response.',
          )
        : debugLog.map(entryView),
    )
  }
  const element = h(
    'aside',
    { class: 'debug-panel', id: 'debug-panel', 'aria-labelledby': 'debug-title' },
    h(
      'div',
      { class: 'debug-head' },
      h('h2', { id: 'debug-title' }, 'Debug'),
      h(
        'div',
        { class: 'actions' },
        revealButton,
        h('button', { type: 'button', class: 'button small', onClick: clearDebugLog }, 'Clear'),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      'Set MEMSVC_API_KEY in your shell to run these commands. Provider secrets are never kept: they appear as $PROVIDER_API_KEY.',
    ),
    list,
  )
  render()
  const dispose = onDebugLog(render)
  return { element, dispose }
}
