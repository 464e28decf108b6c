// memsvc web console: a small single-page app over the REST API. Routes live in the
// URL fragment (#/apikeys); the API key lives in sessionStorage only.
import { call, setUnauthenticatedHandler } from './api.js'
import { debugPanel } from './debug.js'
import { h, replace } from './dom.js'
import { apiKeysPage } from './pages/apikeys.js'
import { overviewPage } from './pages/overview.js'
import { registryPage } from './pages/registry/index.js'
import { retrievePage } from './pages/retrieve.js'
import { signInPage } from './pages/signin.js'
import { spacesPage } from './pages/spaces/index.js'
import { systemPage } from './pages/system.js'
import { usersPage } from './pages/users.js'
import { EMBEDDERS, LLMS, RERANKERS } from './registry-kinds.js'
import { session } from './session.js'
import type { PageContext, User } from './types.js'
import { notice, statusElement } from './ui.js'

interface Route {
  path: string
  title: string
  render: (context: PageContext) => void | Promise<void>
  adminOnly?: boolean
}

const ROUTES: Route[] = [
  { path: 'overview', title: 'Overview', render: overviewPage },
  { path: 'apikeys', title: 'API keys', render: apiKeysPage },
  { path: 'embedders', title: 'Embedders', render: (context) => registryPage(EMBEDDERS, context) },
  { path: 'llms', title: 'LLMs', render: (context) => registryPage(LLMS, context) },
  { path: 'rerankers', title: 'Rerankers', render: (context) => registryPage(RERANKERS, context) },
  { path: 'spaces', title: 'Spaces', render: spacesPage },
  { path: 'retrieve', title: 'Retrieve', render: retrievePage },
  { path: 'users', title: 'Users', render: usersPage, adminOnly: true },
  { path: 'system', title: 'System', render: systemPage },
]

const app = document.getElementById('app')!
let me: User | undefined
/** Why the user was signed out, shown on the sign-in page. */
let signOutReason: string | undefined
let renderToken = 0
let disposeDebug: (() => void) | undefined

function parseHash(): { page: string; params: string[]; query: URLSearchParams } {
  const [path = '', search = ''] = location.hash.replace(/^#\/?/, '').split('?')
  const [page = 'overview', ...params] = path.split('/').filter(Boolean).map(decodeURIComponent)
  return { page, params, query: new URLSearchParams(search) }
}

function debugToggle(): HTMLButtonElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'button small toggle',
      'aria-pressed': String(session.debug),
      'aria-controls': 'debug-panel',
      onClick: () => {
        setDebug(!session.debug)
        button.setAttribute('aria-pressed', String(session.debug))
      },
    },
    h('span', { class: 'indicator', 'aria-hidden': 'true' }),
    'Debug mode',
  )
  return button
}

/** Shows or hides the debug panel without rendering the page again. */
function setDebug(on: boolean): void {
  session.debug = on
  disposeDebug?.()
  disposeDebug = undefined
  document.getElementById('debug-panel')?.remove()
  document.querySelector('.shell')?.classList.toggle('with-debug', on)
  if (on) {
    const panel = debugPanel()
    disposeDebug = panel.dispose
    document.querySelector('.shell > .body')?.appendChild(panel.element)
  }
}

function skipLink(): HTMLElement {
  return h(
    'a',
    {
      class: 'skip-link',
      href: '#main',
      onClick: (event: Event) => {
        event.preventDefault()
        document.getElementById('main')?.focus()
      },
    },
    'Skip to content',
  )
}

function header(user: User | undefined): HTMLElement {
  return h(
    'header',
    { class: 'topbar' },
    h(
      'div',
      { class: 'brand' },
      h('span', { class: 'logo', 'aria-hidden': 'true' }, 'm'),
      h('h1', null, 'memsvc console'),
    ),
    h(
      'div',
      { class: 'topbar-actions' },
      debugToggle(),
      user
        ? h(
            'span',
            { class: 'whoami' },
            'Signed in as ',
            h('strong', null, user.username),
            ` (${user.role.toLowerCase()})`,
          )
        : null,
      user ? h('button', { type: 'button', class: 'button small', onClick: () => signOut() }, 'Sign out') : null,
    ),
  )
}

function layout(user: User | undefined, current: string, main: HTMLElement): HTMLElement {
  const nav = user
    ? h(
        'nav',
        { class: 'sidenav', 'aria-label': 'Sections' },
        h(
          'ul',
          null,
          ROUTES.filter((route) => !route.adminOnly || user.role === 'ADMIN').map((route) =>
            h(
              'li',
              null,
              h(
                'a',
                { href: `#/${route.path}`, 'aria-current': route.path === current ? 'page' : undefined },
                route.title,
              ),
            ),
          ),
        ),
      )
    : null
  return h(
    'div',
    { class: `shell${user ? '' : ' signed-out'}` },
    skipLink(),
    header(user),
    h('div', { class: 'body' }, nav, main),
    statusElement(),
  )
}

function mount(shell: HTMLElement): void {
  replace(app, shell)
  setDebug(session.debug)
}

function signOut(reason?: string): void {
  session.signOut()
  me = undefined
  signOutReason = reason
  if (location.hash && location.hash !== '#/') history.replaceState(null, '', location.pathname)
  render()
}

async function loadMe(): Promise<User | undefined> {
  const result = await call<User>('Who am I', 'GET', '/v1/users/me')
  return result.ok ? result.data : undefined
}

async function render(options: { focusHeading?: boolean } = {}): Promise<void> {
  const token = ++renderToken
  const main = h('main', { id: 'main', class: 'main', tabindex: '-1' })
  if (!session.apiKey) {
    mount(layout(undefined, '', main))
    const reason = signOutReason
    signOutReason = undefined
    await signInPage(main, {
      reason,
      onSignedIn: (user) => {
        me = user
        history.replaceState(null, '', '#/overview')
        render({ focusHeading: true })
      },
    })
    return
  }
  if (!me) {
    mount(layout(undefined, '', main))
    main.appendChild(h('p', { class: 'loading', role: 'status' }, 'Signing in…'))
    me = await loadMe()
    if (token !== renderToken) return
    if (!me) {
      if (session.apiKey) signOut('The saved API key was not accepted. Sign in again.')
      return
    }
  }
  const { page, params, query } = parseHash()
  const route = ROUTES.find((candidate) => candidate.path === page && (!candidate.adminOnly || me!.role === 'ADMIN'))
  mount(layout(me, route?.path ?? '', main))
  if (!route) {
    main.appendChild(
      notice('warning', `There is no page "${page}". `, h('a', { href: '#/overview' }, 'Go to the overview')),
    )
    return
  }
  document.title = `${route.title} · memsvc console`
  const context: PageContext = {
    root: main,
    me,
    params,
    query,
    isCurrent: () => token === renderToken,
    navigate: (hash) => {
      location.hash = hash
    },
    reload: () => render(),
  }
  await route.render(context)
  if (options.focusHeading && token === renderToken) main.querySelector<HTMLElement>('.page-title')?.focus()
}

setUnauthenticatedHandler(() =>
  signOut('Your API key is no longer accepted (it was deactivated, deleted or has expired). Sign in with another key.'),
)
window.addEventListener('hashchange', () => render({ focusHeading: true }))
render()
