// Sign-in with an API key; on a fresh server, initialisation and the one-time root key.
import { call } from '../api.js'
import { h, replace } from '../dom.js'
import { FormErrors, field, input } from '../forms.js'
import { session } from '../session.js'
import type { InitResult, SystemInfo, User } from '../types.js'
import { copyButton, errorNotice, notice, setBusy } from '../ui.js'

export interface SignInOptions {
  reason?: string
  onSignedIn(user: User): void
}

function signInForm(options: SignInOptions, initialKey = ''): HTMLElement {
  const errors = new FormErrors()
  const { wrapper, control: keyInput } = field(
    errors,
    {
      name: 'apiKey',
      label: 'API key',
      required: true,
      hint: 'Kept in this browser tab only (session storage); closing the tab signs you out.',
    },
    input({ type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'msk_…', value: initialKey }),
  )
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Sign in')
  const form = h(
    'form',
    {
      class: 'form',
      'aria-labelledby': 'signin-title',
      novalidate: true,
      onSubmit: async (event: Event) => {
        event.preventDefault()
        const apiKey = keyInput.value.trim()
        if (!apiKey) {
          errors.showClient([{ field: 'apiKey', description: 'enter an API key' }])
          return
        }
        setBusy(submit, true, 'Signing in…')
        const result = await call<User>('Sign in (who am I)', 'GET', '/v1/users/me', { apiKey })
        setBusy(submit, false, 'Sign in')
        if (!result.ok || !result.data) {
          errors.show(
            {
              ...result.error!,
              details: [
                {
                  field: 'apiKey',
                  description:
                    result.status === 401
                      ? 'this key is not valid (unknown, deactivated or expired)'
                      : result.error!.message,
                },
              ],
            },
            'Not signed in',
          )
          return
        }
        session.signIn(apiKey)
        options.onSignedIn(result.data)
      },
    },
    h('h2', { id: 'signin-title', class: 'page-title', tabindex: '-1' }, 'Sign in'),
    errors.summary,
    wrapper,
    h('div', { class: 'actions' }, submit),
  )
  return form
}

function rootKeyPanel(result: InitResult, options: SignInOptions): HTMLElement {
  const key = result.rootApiKey!
  const keyField = h('input', {
    type: 'text',
    id: 'root-key',
    class: 'secret mono',
    readonly: true,
    value: key,
    'aria-describedby': 'root-key-warning',
    spellcheck: 'false',
  })
  const panel = h(
    'section',
    { class: 'panel one-time', 'aria-labelledby': 'root-key-title' },
    h('h2', { id: 'root-key-title', class: 'page-title', tabindex: '-1' }, 'Server initialised: your root API key'),
    h(
      'div',
      { class: 'notice warning', id: 'root-key-warning', role: 'alert' },
      h('strong', null, 'Copy this key now and store it safely. '),
      'It is shown only this once: the server keeps only a hash of it and cannot show it again. ' +
        'It belongs to the root administrator and can do everything.',
    ),
    h('label', { for: 'root-key' }, 'Root API key'),
    h(
      'div',
      { class: 'copy-row' },
      keyField,
      copyButton('Copy key', () => key),
    ),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'button primary',
          onClick: async () => {
            const me = await call<User>('Sign in (who am I)', 'GET', '/v1/users/me', { apiKey: key })
            if (me.ok && me.data) {
              session.signIn(key)
              options.onSignedIn(me.data)
            }
          },
        },
        'I have stored it: sign in with this key',
      ),
    ),
  )
  return panel
}

export async function signInPage(root: HTMLElement, options: SignInOptions): Promise<void> {
  const container = h('div', { class: 'signin' })
  root.appendChild(container)
  if (options.reason) container.appendChild(notice('warning', options.reason))
  const infoResult = await call<SystemInfo>('Read system info', 'GET', '/v1/system/info', { auth: false })
  const info = infoResult.data
  const about = info
    ? h(
        'p',
        { class: 'muted' },
        `memsvc ${info.version} · ${info.lifecycleState.toLowerCase()} · ${info.storage ?? ''} storage`,
      )
    : errorNotice(infoResult.error!, 'Could not read the server information')

  if (info && !info.initialized) {
    const status = h('div')
    const initButton = h(
      'button',
      {
        type: 'button',
        class: 'button primary',
        onClick: async () => {
          setBusy(initButton, true, 'Initialising…')
          const result = await call<InitResult>('Initialise the system', 'POST', '/v1/system/init', {
            auth: false,
            body: {},
          })
          setBusy(initButton, false, 'Initialise this server')
          if (!result.ok || !result.data) {
            replace(status, errorNotice(result.error!, 'Initialisation failed'))
            return
          }
          if (result.data.alreadyInitialized || !result.data.rootApiKey) {
            replace(
              container,
              notice(
                'info',
                'This server was initialised in the meantime (by someone else). Sign in with an API key an administrator gives you.',
              ),
              signInForm(options),
            )
            return
          }
          replace(container, rootKeyPanel(result.data, options))
          container.querySelector<HTMLElement>('.page-title')?.focus()
        },
      },
      'Initialise this server',
    )
    replace(
      container,
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'init-title' },
        h(
          'h2',
          { id: 'init-title', class: 'page-title', tabindex: '-1' },
          'Welcome: this server is not initialised yet',
        ),
        about,
        h(
          'p',
          null,
          'Initialising creates the root administrator and its API key. The key is shown once, right after this step.',
        ),
        status,
        h('div', { class: 'actions' }, initButton),
      ),
    )
    return
  }
  container.append(h('div', { class: 'panel' }, signInForm(options), about))
}
