// The writes PostgreSQL refuses that the use cases answer as API errors (src/db/conflicts.ts):
// decoded from the errors both engines raise, and named after constraints the migrated schema
// has, so that a renamed constraint cannot quietly turn a 409 into a 500.
import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { conflictOf, DUPLICATE_CONSTRAINTS } from '../../src/db/conflicts.js'
import type { Sql } from '../../src/db/database.js'
import { ENGINES } from '../support/databases.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

describe.each(ENGINES)('database conflicts (%s)', (engine) => {
  let server: TestServer
  let sql: Sql

  beforeAll(async () => {
    server = await startTestServer({ engine })
    sql = server.server.context.sql
  })
  afterAll(async () => server?.stop())

  const insertUser = (id: string, username: string) =>
    sql`insert into users (id, username, display_name, role, created_at, updated_at)
        values (${id}, ${username}, ${username}, 'USER', now(), now())`

  const refusal = async (write: Promise<unknown>) =>
    write.then(
      () => expect.unreachable('the write was taken'),
      (error) => error,
    )

  it('names only constraints the migrated schema has', async () => {
    const names = [...DUPLICATE_CONSTRAINTS.keys()]
    const rows = await sql<{ relname: string }[]>`
      select relname from pg_class where relkind = 'i' and relname = any(${names})`
    expect(rows.map((row) => row.relname).sort()).toEqual(names.sort())
  })

  it('decodes a taken id, a taken unique value and a missing reference', async () => {
    const id = crypto.randomUUID()
    await insertUser(id, 'conflicted')
    expect(conflictOf(await refusal(insertUser(id, 'other')))).toBe('duplicate-user-id')
    expect(conflictOf(await refusal(insertUser(crypto.randomUUID(), 'conflicted')))).toBe('duplicate-username')
    const orphan = sql`insert into api_keys (id, user_id, key_hash, key_prefix, status, created_at, updated_at, created_by, updated_by)
      values (${crypto.randomUUID()}, ${crypto.randomUUID()}, ${Buffer.from('hash')}, 'msk_', 'ACTIVE', now(), now(), ${id}, ${id})`
    expect(conflictOf(await refusal(orphan))).toBe('missing-reference')
  })

  it('leaves every other failure undecoded', async () => {
    expect(conflictOf(await refusal(sql`select * from no_such_table`))).toBeUndefined()
    expect(conflictOf(new Error('not a database error'))).toBeUndefined()
    expect(conflictOf(undefined)).toBeUndefined()
  })
})
