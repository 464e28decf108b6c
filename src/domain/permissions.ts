import type { Queryable } from '../db/database.js'
import * as usersSql from '../db/sql/users.js'
import { AppError, notFound } from '../errors/app-error.js'

export type Role = 'ADMIN' | 'USER'
export const ROLES: Role[] = ['ADMIN', 'USER']

const RESOURCE_ACTIONS = {
  APIKEY: ['CREATE', 'DELETE', 'LIST', 'UPDATE'],
  EMBEDDER: ['CREATE', 'LIST', 'GET', 'UPDATE', 'DELETE'],
  LLM: ['CREATE', 'LIST', 'GET', 'UPDATE', 'DELETE'],
  RERANKER: ['CREATE', 'LIST', 'GET', 'UPDATE', 'DELETE'],
  SPACE: ['CREATE', 'LIST', 'GET', 'UPDATE', 'DELETE'],
  // A memory belongs to its space's owner; an update makes a new version of it (version, history).
  MEMORY: ['CREATE', 'LIST', 'GET', 'UPDATE', 'DELETE'],
} as const

export type ResourceName = keyof typeof RESOURCE_ACTIONS
type Scope = 'OWN' | 'ANY'
type ResourcePermission = {
  [R in ResourceName]: `${(typeof RESOURCE_ACTIONS)[R][number]}_${R}_${Scope}`
}[ResourceName]

export type Permission = ResourcePermission | 'DRAIN_SERVER' | 'CREATE_USER' | 'LIST_USERS' | 'GET_USER' | 'DELETE_USER'

function resourcePermissions(scope: Scope): Permission[] {
  return Object.entries(RESOURCE_ACTIONS).flatMap(([resource, actions]) =>
    actions.map((action) => `${action}_${resource}_${scope}` as Permission),
  )
}

/** The one table of who may do what. Every check reads it. */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  USER: new Set(resourcePermissions('OWN')),
  ADMIN: new Set([
    ...resourcePermissions('OWN'),
    ...resourcePermissions('ANY'),
    'DRAIN_SERVER',
    'CREATE_USER',
    'LIST_USERS',
    'GET_USER',
    'DELETE_USER',
  ]),
}

/** Who is calling: established by authentication, read by every use case. */
export interface Principal {
  userId: string
  role: Role
  apiKeyId: string
  /**
   * The caller's user record as read with the key. Cached with it and evicted by the
   * same change feed (role changes and deletion), so GET /v1/users/me needs no query.
   */
  user: { username: string; displayName: string; createdAt: number; updatedAt: number }
}

export function hasPermission(principal: Principal, permission: Permission): boolean {
  return ROLE_PERMISSIONS[principal.role].has(permission)
}

export function requirePermission(principal: Principal, permission: Permission): void {
  if (!hasPermission(principal, permission)) throw new AppError('PERMISSION_DENIED', `requires ${permission}`)
}

/**
 * For an action on a resource owned by `ownerId`: the caller's own resources need
 * the _OWN form, anyone else's the _ANY form.
 */
export function requireOwnership(principal: Principal, resource: ResourceName, action: string, ownerId: string): void {
  const scope: Scope = ownerId === principal.userId ? 'OWN' : 'ANY'
  requirePermission(principal, `${action}_${resource}_${scope}` as Permission)
}

/**
 * The owner of something being created: the caller unless the request names another.
 * Creating for someone else needs the _ANY permission, and that someone must exist.
 */
export async function authoriseOwner(
  sql: Queryable,
  principal: Principal,
  resource: ResourceName,
  requestedOwnerId: string | undefined,
): Promise<string> {
  const ownerId = requestedOwnerId ?? principal.userId
  requireOwnership(principal, resource, 'CREATE', ownerId)
  if (ownerId !== principal.userId && !(await usersSql.findUserById(sql, ownerId))) throw notFound(`user ${ownerId}`)
  return ownerId
}
