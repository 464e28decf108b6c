import type { Queryable } from '../database.js'

/** One row of a memory's history (migration 14); `changes` is a MemoryChangeDetails (src/domain/memory-changes.ts). */
export interface MemoryChangeRow {
  id: string
  memory_id: string
  space_id: string
  action: 'UPDATE' | 'DELETE'
  version: number
  changed_at: Date
  changed_by: string
  api_key_id: string | null
  changes: Record<string, unknown>
}

export type NewMemoryChange = Omit<MemoryChangeRow, 'id' | 'changed_at'>

export async function insertMemoryChange(tx: Queryable, change: NewMemoryChange): Promise<void> {
  await tx`
    insert into memory_changes (memory_id, space_id, action, version, changed_at, changed_by, api_key_id, changes)
    values (${change.memory_id}, ${change.space_id}, ${change.action}, ${change.version}, now(), ${change.changed_by},
      ${change.api_key_id}, ${tx.json(change.changes as never)})`
}

/** Newest first; `before` is the id of the last row of the previous page. Ids are bigint, read as text. */
export async function listMemoryChanges(
  sql: Queryable,
  memoryId: string,
  page: { before?: string; limit: number },
): Promise<MemoryChangeRow[]> {
  return sql<MemoryChangeRow[]>`
    select id::text as id, memory_id, space_id, action, version, changed_at, changed_by, api_key_id, changes
    from memory_changes where memory_id = ${memoryId} ${page.before ? sql`and id < ${page.before}::bigint` : sql``}
    order by id desc limit ${page.limit}`
}

/** The space a memory's history belongs to, once the memory itself may be gone. */
export async function spaceOfMemoryChanges(sql: Queryable, memoryId: string): Promise<string | undefined> {
  const rows = await sql<Array<{ space_id: string }>>`
    select space_id from memory_changes where memory_id = ${memoryId} order by id desc limit 1`
  return rows[0]?.space_id
}
