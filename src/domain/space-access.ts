import type { Queryable } from '../db/database.js'
import type { SpaceRow } from '../db/sql/spaces.js'
import * as spacesSql from '../db/sql/spaces.js'
import { AppError, notFound, permissionDenied } from '../errors/app-error.js'
import type { DomainContext } from './context.js'
import { hasPermission, type Permission, type Principal, requireOwnership } from './permissions.js'

/**
 * Who may do what with a space and the memories in it. A space and its memories belong
 * to the space's owner. Another user's space is NOT_FOUND, exactly as if it did not exist,
 * unless the caller holds the _ANY permission or the space is publicRead: then it can be
 * read (GET, LIST) but writing answers PERMISSION_DENIED.
 */

export type SpaceResource = 'SPACE' | 'MEMORY'
export type SpaceAction = 'GET' | 'LIST' | 'CREATE' | 'UPDATE' | 'DELETE'

const READS: ReadonlySet<SpaceAction> = new Set(['GET', 'LIST'])

export function requireSpaceAccess(
  principal: Principal,
  space: SpaceRow | undefined,
  resource: SpaceResource,
  action: SpaceAction,
  what: string,
): SpaceRow {
  if (!space) throw notFound(what)
  const own = space.owner_id === principal.userId
  const any = hasPermission(principal, `${action}_${resource}_ANY` as Permission)
  if (own || any) {
    requireOwnership(principal, resource, action, space.owner_id)
    return space
  }
  if (!space.public_read) throw notFound(what)
  if (!READS.has(action))
    throw permissionDenied(`space ${space.id} is shared for reading only; only its owner may change it or its memories`)
  // A public space is read with the caller's own permission: its readers need no _ANY.
  requireOwnership(principal, resource, action, principal.userId)
  return space
}

/** The space, if the caller may act on it as asked; rows read to be changed are locked. */
export async function findAccessibleSpace(
  sql: Queryable,
  principal: Principal,
  spaceId: string,
  resource: SpaceResource,
  action: SpaceAction,
): Promise<SpaceRow> {
  const changes = action === 'UPDATE' || action === 'DELETE'
  // A memory change holding the space FOR UPDATE deadlocked with ingest runs of the same space:
  // their chunk statistics take KEY SHARE on the space while they hold their memories' rows.
  const lock = changes ? (resource === 'SPACE' ? 'update' : 'key-share') : undefined
  const space = await spacesSql.findSpace(sql, spaceId, { lock })
  return requireSpaceAccess(principal, space, resource, action, `space ${spaceId}`)
}

/** Memory calls need pgvector; without it they say which extension is missing and how to install it. */
export function requireVectorStorage(context: DomainContext): void {
  const support = context.vectorSupport
  if (!support.available)
    throw new AppError('FAILED_PRECONDITION', `memories are unavailable on this server: ${support.reason}`)
}
