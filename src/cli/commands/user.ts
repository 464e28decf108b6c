// memsvc user create|list|get|delete|me
import type { Argv } from 'yargs'
import { Role, type User } from '../../generated/memsvc/v1/users.js'
import { clientHandler, commandGroup, idPositional, withOptions } from '../command.js'
import { PAGING_OPTIONS, pagingRequest, printListedPages } from '../common-options.js'
import { runAuthenticated } from '../connection.js'
import { parseChoice } from '../option-parsing.js'
import { formatTime, print } from '../output.js'
import { ID_WIDTH, renderFields, renderTable, TIME_WIDTH } from '../table.js'

const ROLES = [Role.ADMIN, Role.USER] as const

const CREATE_OPTIONS = {
  'display-name': { type: 'string', describe: 'Name shown to people (default: the username)', requiresArg: true },
  role: { type: 'string', describe: 'ADMIN or USER (default USER)', requiresArg: true },
  id: { type: 'string', describe: 'Use this UUID as the user id instead of a generated one', requiresArg: true },
} as const

export function userFields(user: User): Array<[string, string | undefined]> {
  return [
    ['id', user.userId],
    ['username', user.username],
    ['display name', user.displayName],
    ['role', user.role],
    ['created', formatTime(user.createdAt)],
    ['updated', formatTime(user.updatedAt)],
  ]
}

const create = clientHandler(async (argv, settings) => {
  const request = {
    username: String(argv.username),
    displayName: argv.displayName as string | undefined,
    role: argv.role === undefined ? Role.ROLE_UNSPECIFIED : parseChoice(argv.role, 'role', ROLES),
    userId: argv.id as string | undefined,
  }
  const user = await runAuthenticated(settings, (api) => api.users.create(request))
  print(settings.output, {
    json: user,
    text: () =>
      `${renderFields(userFields(user))}\nGive the user a key: memsvc apikey create --owner-id ${user.userId}\n`,
  })
})

const list = clientHandler(async (argv, settings) => {
  await printListedPages(argv, settings, pagingRequest(argv), (api, page) => api.users.list(page), {
    field: 'users',
    what: 'users',
    text: (users) =>
      renderTable(users, [
        { header: 'ID', value: (user) => user.userId, minWidth: ID_WIDTH },
        { header: 'USERNAME', value: (user) => user.username, minWidth: 8 },
        { header: 'DISPLAY NAME', value: (user) => user.displayName, dropOrder: 1 },
        { header: 'ROLE', value: (user) => user.role, minWidth: 5 },
        { header: 'CREATED', value: (user) => formatTime(user.createdAt), minWidth: TIME_WIDTH, dropOrder: 2 },
      ]),
  })
})

const get = clientHandler(async (argv, settings) => {
  const user = await runAuthenticated(settings, (api) => api.users.get({ userId: String(argv.id) }))
  print(settings.output, { json: user, text: () => renderFields(userFields(user)) })
})

const me = clientHandler(async (_argv, settings) => {
  const user = await runAuthenticated(settings, (api) => api.users.me({}))
  print(settings.output, { json: user, text: () => renderFields(userFields(user)) })
})

const remove = clientHandler(async (argv, settings) => {
  const userId = String(argv.id)
  await runAuthenticated(settings, (api) => api.users.delete({ userId }))
  print(settings.output, { json: { userId, deleted: true }, text: () => `deleted user ${userId}\n` })
})

export function userCommand(yargs: Argv): Argv {
  return commandGroup(yargs, 'user', 'Manage users (admins), or show who you are', [
    {
      command: 'create <username>',
      describe: 'Create a user (admins)',
      builder: (command) =>
        withOptions(
          command.positional('username', {
            type: 'string',
            describe: 'Login name: letters, digits, ".", "_", "@", "-"',
          }),
          CREATE_OPTIONS,
        )
          .example('$0 user create ana --display-name "Ana Lima"', 'a regular user')
          .example('$0 user create ops --role ADMIN', 'another administrator'),
      handler: create,
    },
    {
      command: 'list',
      describe: 'List users (admins)',
      builder: (command) =>
        withOptions(command, PAGING_OPTIONS).example('$0 user list --all --output json', 'every user, for a script'),
      handler: list,
    },
    {
      command: 'get <id>',
      describe: 'Show one user',
      builder: (command) => idPositional(command, 'User').example('$0 user get 3f2a…', 'show a user'),
      handler: get,
    },
    {
      command: 'delete <id>',
      describe: 'Delete a user (admins)',
      builder: (command) => idPositional(command, 'User').example('$0 user delete 3f2a…', 'delete a user'),
      handler: remove,
    },
    {
      command: 'me',
      describe: 'Show the user the API key belongs to',
      builder: (command) => command.example('$0 user me', 'who am I?'),
      handler: me,
    },
  ])
}
