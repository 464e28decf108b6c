// Users (admins only): create, list, delete; a shortcut to create a key for a user.
import { MAX_PAGE_SIZE, MAX_USER_DISPLAY_NAME_LENGTH, MAX_USERNAME_LENGTH } from '../../validation/limits.js'
import { call, query } from '../api.js'
import { h, replace } from '../dom.js'
import { checkedForm, FormErrors, field, input, select } from '../forms.js'
import type { PageContext, User } from '../types.js'
import {
  announce,
  badge,
  confirmAndDelete,
  dataTable,
  errorNotice,
  loading,
  notice,
  pageHeading,
  section,
  setBusy,
  time,
} from '../ui.js'

export async function usersPage(context: PageContext): Promise<void> {
  const { root, me } = context
  if (me.role !== 'ADMIN') {
    root.append(pageHeading('Users'), notice('info', 'Only administrators manage users.'))
    return
  }
  const tableSlot = h('div', null, loading('users'))
  const tbody = h('tbody')

  const errors = new FormErrors()
  const username = field(
    errors,
    {
      name: 'username',
      label: 'Username',
      required: true,
      hint: `1-${MAX_USERNAME_LENGTH} letters, digits, ".", "_", "@" or "-".`,
    },
    input({ autocomplete: 'off', spellcheck: 'false', maxlength: MAX_USERNAME_LENGTH }),
  )
  const displayName = field(
    errors,
    { name: 'displayName', label: 'Display name' },
    input({ maxlength: MAX_USER_DISPLAY_NAME_LENGTH }),
  )
  const role = field(
    errors,
    { name: 'role', label: 'Role' },
    select([
      ['USER', 'User'],
      ['ADMIN', 'Administrator'],
    ]),
  )
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Create user')
  const form = checkedForm(
    'form',
    {
      errors,
      attrs: { 'aria-label': 'Create a user' },
      send: async () => {
        const body: Record<string, string> = { username: username.control.value.trim(), role: role.control.value }
        if (displayName.control.value.trim()) body.displayName = displayName.control.value.trim()
        setBusy(submit, true)
        const result = await call<User>('Create user', 'POST', '/v1/users', { body })
        setBusy(submit, false)
        if (!result.ok || !result.data) return void errors.show(result.error!, 'Not created')
        username.control.value = ''
        displayName.control.value = ''
        announce(`User ${result.data.username} created. Create an API key for them from their row.`)
        await load()
      },
    },
    h('div', { class: 'row' }, username.wrapper, displayName.wrapper, role.wrapper),
    h('div', { class: 'actions' }, submit),
  )

  const row = (user: User): HTMLTableRowElement => {
    const self = user.userId === me.userId
    const tr: HTMLTableRowElement = h(
      'tr',
      { 'data-user-id': user.userId },
      h('th', { scope: 'row' }, user.username, self ? h('span', { class: 'tag' }, 'you') : null),
      h('td', null, user.displayName ?? ''),
      h(
        'td',
        null,
        badge(user.role === 'ADMIN' ? 'Administrator' : 'User', user.role === 'ADMIN' ? 'warn' : 'neutral'),
      ),
      h('td', null, h('code', { class: 'small' }, user.userId)),
      h('td', null, time(user.createdAt)),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'div',
          { class: 'actions' },
          h('a', { class: 'button small', href: `#/apikeys?owner=${encodeURIComponent(user.userId)}` }, 'API keys'),
          self
            ? null
            : h(
                'button',
                {
                  type: 'button',
                  class: 'button small danger',
                  onClick: async () => {
                    const deleted = await confirmAndDelete({
                      confirm: {
                        title: `Delete user ${user.username}?`,
                        message: 'Their API keys stop working at once. This cannot be undone.',
                        confirmLabel: 'Delete user',
                      },
                      action: 'Delete user',
                      path: `/v1/users/${encodeURIComponent(user.userId)}`,
                      deleted: `User ${user.username} deleted`,
                    })
                    if (!deleted) return
                    tr.remove()
                    submit.focus()
                  },
                },
                'Delete',
              ),
        ),
      ),
    )
    return tr
  }

  async function load(): Promise<void> {
    const users: User[] = []
    let nextToken: string | undefined
    do {
      const result = await call<{ users: User[]; nextToken?: string }>(
        'List users',
        'GET',
        `/v1/users${query({ maxResults: MAX_PAGE_SIZE, nextToken })}`,
      )
      if (!result.ok || !result.data) {
        replace(tableSlot, errorNotice(result.error!, 'Could not list the users'))
        return
      }
      users.push(...result.data.users)
      nextToken = result.data.nextToken
    } while (nextToken && users.length < 10_000)
    if (!context.isCurrent()) return
    tbody.replaceChildren(...users.map(row))
    replace(tableSlot, dataTable('Users', ['Username', 'Display name', 'Role', 'ID', 'Created', 'Actions'], [], tbody))
  }

  root.append(pageHeading('Users'), section('Create a user', form), section('Users', tableSlot))
  await load()
}
