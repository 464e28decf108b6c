import crypto from 'node:crypto'
import { conflictOf } from '../db/conflicts.js'
import type { UserRow } from '../db/sql/users.js'
import * as usersSql from '../db/sql/users.js'
import { AppError, alreadyExists, notFound } from '../errors/app-error.js'
import { createUserSchema, idSchema, listUsersSchema } from '../validation/identity.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { decodePageToken, nowMillis, pageOf, pageSizeOrDefault } from './paging.js'
import { type Principal, type Role, requirePermission } from './permissions.js'

export interface User {
  userId: string
  username: string
  displayName: string
  role: Role
  createdAt: number
  updatedAt: number
}

export function toUser(row: UserRow): User {
  return {
    userId: row.id,
    username: row.username,
    displayName: row.display_name,
    role: row.role,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
  }
}

export async function createUser(context: DomainContext, call: CallContext, input: unknown): Promise<User> {
  const principal = await context.authenticate(call)
  requirePermission(principal, 'CREATE_USER')
  const request = parseInput(createUserSchema, input)
  const now = nowMillis()
  const row: UserRow = {
    id: request.userId ?? crypto.randomUUID(),
    username: request.username,
    display_name: request.displayName ?? request.username,
    role: request.role,
    created_at: now,
    updated_at: now,
  }
  try {
    await usersSql.insertUser(context.sql, row)
  } catch (error) {
    const conflict = conflictOf(error)
    if (conflict === 'duplicate-username') throw alreadyExists(`a user named "${request.username}" already exists`)
    if (conflict === 'duplicate-user-id') throw alreadyExists(`a user with id ${row.id} already exists`)
    throw error
  }
  return toUser(row)
}

export async function listUsers(
  context: DomainContext,
  call: CallContext,
  input: unknown,
): Promise<{ users: User[]; nextToken?: string }> {
  const principal = await context.authenticate(call)
  requirePermission(principal, 'LIST_USERS')
  const request = parseInput(listUsersSchema, input)
  const pageSize = pageSizeOrDefault(request.maxResults)
  const rows = await usersSql.listUsers(context.sql, decodePageToken(request.nextToken), pageSize + 1)
  const page = pageOf(rows, pageSize, toUser)
  return { users: page.items, nextToken: page.nextToken }
}

export async function getUser(context: DomainContext, call: CallContext, userId: unknown): Promise<User> {
  const principal = await context.authenticate(call)
  const id = parseInput(idSchema, userId, 'userId')
  if (id !== principal.userId) requirePermission(principal, 'GET_USER')
  const row = await usersSql.findUserById(context.sql, id)
  if (!row) throw notFound(`user ${id}`)
  return toUser(row)
}

/** Served from the authenticated principal: authentication already read (and caches) the user. */
/**
 * The caller's User per authenticated principal. The authenticator keeps a principal for as
 * long as it caches the key, and a principal's user never changes: answering from it again
 * returns the same frozen object, so a transport may keep its encoding of it.
 */
const callers = new WeakMap<Principal, Readonly<User>>()

export async function getMe(context: DomainContext, call: CallContext): Promise<Readonly<User>> {
  const principal = await context.authenticate(call)
  let me = callers.get(principal)
  if (!me) {
    const { userId, role, user } = principal
    me = Object.freeze({
      userId,
      username: user.username,
      displayName: user.displayName,
      role,
      createdAt: user.createdAt,
      updatedAt: user.updatedAt,
    })
    callers.set(principal, me)
  }
  return me
}

/** Deletes a user and, with it, every API key the user owns. */
export async function deleteUser(context: DomainContext, call: CallContext, userId: unknown): Promise<void> {
  const principal = await context.authenticate(call)
  requirePermission(principal, 'DELETE_USER')
  const id = parseInput(idSchema, userId, 'userId')
  if (id === principal.userId)
    throw new AppError('FAILED_PRECONDITION', 'you cannot delete your own user; ask another admin')
  const deleted = await usersSql.deleteUser(context.sql, id)
  if (!deleted) throw notFound(`user ${id}`)
  context.authenticator.forgetUser(id)
  // Its spaces went with it (a cascade); which ones this server kept is not worth a query.
  context.spaceRows.clear()
  await context.authenticator.propagateRevocation()
}
