import type { Queryable } from '../database.js'

export interface UserRow {
  id: string
  username: string
  display_name: string
  role: 'ADMIN' | 'USER'
  created_at: Date
  updated_at: Date
}

export async function insertUser(sql: Queryable, user: UserRow): Promise<void> {
  await sql`insert into users ${sql(user as never)}`
}

export async function findUserById(sql: Queryable, id: string): Promise<UserRow | undefined> {
  const rows = await sql<UserRow[]>`select * from users where id = ${id}`
  return rows[0]
}

/** Keyset page ordered by (created_at, id). */
export async function listUsers(
  sql: Queryable,
  after: { createdAt: Date; id: string } | undefined,
  limit: number,
): Promise<UserRow[]> {
  return sql<UserRow[]>`
    select * from users
    ${after ? sql`where (created_at, id) > (${after.createdAt}, ${after.id})` : sql``}
    order by created_at, id
    limit ${limit}`
}

export async function deleteUser(sql: Queryable, id: string): Promise<boolean> {
  const rows = await sql`delete from users where id = ${id} returning id`
  return rows.length > 0
}
