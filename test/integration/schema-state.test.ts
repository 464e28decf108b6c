// The start-up schema check (src/db/schema-state.ts): one query says whether a database needs
// migrations, vector storage or its encryption key recorded; anything missing or different
// sends start-up down the full path.

import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sql } from '../../src/db/database.js'
import { currentSchemaVectorSupport } from '../../src/db/schema-state.js'
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/databases.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'

describe.each(ENGINES)('schema check at start-up (%s)', (engine) => {
  let fixture: IdentityFixture
  let sql: Sql
  let keyId: string

  beforeAll(async () => {
    fixture = await startIdentityFixture(engine)
    sql = fixture.server.server.context.sql
    keyId = fixture.server.server.context.secrets.keyId
  })
  afterAll(async () => {
    await fixture?.stop()
  })

  it('a started server leaves a schema that the check finds current, with its pgvector version', async () => {
    expect(await currentSchemaVectorSupport(sql, keyId)).toEqual({
      available: true,
      version: expect.stringMatching(/^\d+\.\d+/),
    })
  })

  it('another encryption key sends start-up down the full path, which names the mismatch', async () => {
    expect(await currentSchemaVectorSupport(sql, 'another-key-id')).toBeUndefined()
  })

  it('a missing migration sends start-up down the full path', async () => {
    const [latest] = await sql<Array<{ version: number; name: string }>>`
      select version, name from schema_migrations order by version desc limit 1`
    await sql`delete from schema_migrations where version = ${latest!.version}`
    try {
      expect(await currentSchemaVectorSupport(sql, keyId)).toBeUndefined()
    } finally {
      await sql`insert into schema_migrations (version, name) values (${latest!.version}, ${latest!.name})`
    }
  })
})

describe('schema check at start-up on a fresh database', () => {
  let database: TestDatabase
  let sql: postgres.Sql

  beforeAll(async () => {
    database = await createTestDatabase()
    sql = postgres(database.url, { max: 1, onnotice: () => {} })
  })
  afterAll(async () => {
    await sql?.end()
    await database?.drop()
  })

  it('finds nothing current (no tables yet) rather than failing', async () => {
    expect(await currentSchemaVectorSupport(sql as unknown as Sql, 'any-key-id')).toBeUndefined()
  })
})
