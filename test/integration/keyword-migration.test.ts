// Migration 11 on a database that already holds spaces and chunks from before it: the spaces
// become english, their chunks' search vectors are made again in english, the BM25 statistics
// are counted from them, and from then on the triggers keep them as chunks come and go.
import crypto from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATIONS, migrate } from '../../src/db/migrations.js'
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/databases.js'

const KEYWORD_MIGRATION = 11
const TEXTS = ['The oceans are deep and the ocean is wide.', 'Gardens need water.', 'Oceans and gardens.']

/** What a database answers, whichever engine: rows of a query. */
type Query = (text: string, params?: unknown[]) => Promise<Array<Record<string, any>>>

/** The schema before migration 11, a user, one space and a memory per text with its chunk. */
async function oldSchemaWithChunks(query: Query, run: (sql: string) => Promise<unknown>): Promise<string> {
  for (const migration of MIGRATIONS.filter((entry) => entry.version < KEYWORD_MIGRATION)) await run(migration.sql)
  const user = crypto.randomUUID()
  const space = crypto.randomUUID()
  await query(`insert into users values ($1, 'u', 'u', 'ADMIN', now(), now())`, [user])
  await query(
    `insert into spaces (id, owner_id, name, default_chunking, created_at, updated_at, created_by, updated_by)
     values ($1, $2, 'old', '{}', now(), now(), $2, $2)`,
    [space, user],
  )
  for (const text of TEXTS) {
    const memory = crypto.randomUUID()
    await query(
      `insert into memories (id, space_id, content, content_type, content_sha256, chunking, status, created_at, updated_at, created_by, updated_by)
       values ($1, $2, $3, 'text/plain', '\\x00', '{}', 'COMPLETED', now(), now(), $4, $4)`,
      [memory, space, text, user],
    )
    await query(
      `insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
       values ($1, $2, $3, 0, $4, 0, length($4))`,
      [crypto.randomUUID(), memory, space, text],
    )
  }
  return space
}

/** The statistics as the triggers keep them, and as they would be counted from the chunks now. */
async function expectStatisticsExact(query: Query, space: string): Promise<void> {
  const kept = await query(`select word, chunk_count from space_word_stats where space_id = $1 order by word`, [space])
  const counted = await query(
    `select w.word, count(*)::int as chunk_count from chunks c, unnest(tsvector_to_array(c.search_vector)) w (word)
     where c.space_id = $1 group by w.word order by w.word`,
    [space],
  )
  expect(kept).toEqual(counted)
  const [totals] = await query(
    `select chunk_count::int as chunks, lexeme_count::int as lexemes from space_text_stats where space_id = $1`,
    [space],
  )
  const [actual] = await query(
    `select count(*)::int as chunks, coalesce(sum(length(search_vector)), 0)::int as lexemes from chunks where space_id = $1`,
    [space],
  )
  expect(totals ?? { chunks: 0, lexemes: 0 }).toEqual(actual)
}

async function expectMigrated(query: Query, space: string): Promise<void> {
  expect(await query(`select text_search_language from spaces where id = $1`, [space])).toEqual([
    { text_search_language: 'english' },
  ])
  const vectors = await query(
    `select count(*)::int as stale from chunks where search_vector <> to_tsvector('english', text)`,
  )
  expect(vectors).toEqual([{ stale: 0 }])
  // 'simple' kept "the" and did not stem; english drops it and makes "oceans" "ocean".
  const [first] = await query(`select search_vector::text as vector from chunks where text like 'The oceans%'`)
  expect(first!.vector).toBe("'deep':4 'ocean':2,7 'wide':9")
  expect(
    await query(`select chunk_count from space_word_stats where space_id = $1 and word = 'ocean'`, [space]),
  ).toEqual([{ chunk_count: 2 }])
  await expectStatisticsExact(query, space)

  // From now on the triggers keep them: a chunk stored, then a memory deleted with its chunk.
  const [memory] = await query(`select id from memories where content = $1`, [TEXTS[1]])
  await query(
    `insert into chunks (id, memory_id, space_id, chunk_index, text, start_offset, end_offset)
     values ($1, $2, $3, 1, 'Deep gardens by the ocean.', 0, 10)`,
    [crypto.randomUUID(), memory!.id, space],
  )
  await expectStatisticsExact(query, space)
  await query(`delete from memories where content = $1`, [TEXTS[0]])
  await expectStatisticsExact(query, space)
  expect(
    await query(`select chunk_count from space_word_stats where space_id = $1 and word = 'wide'`, [space]),
  ).toEqual([])
  // A space deleted takes its statistics with it.
  await query(`delete from spaces where id = $1`, [space])
  expect(await query(`select count(*)::int as rows from space_word_stats`)).toEqual([{ rows: 0 }])
  expect(await query(`select count(*)::int as rows from space_text_stats`)).toEqual([{ rows: 0 }])
}

describe.skipIf(!ENGINES.includes('postgresql'))('migration 11 on existing chunks (postgresql)', () => {
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

  it('makes old spaces english, indexes their chunks again and counts their words; the triggers keep the counts', async () => {
    const query: Query = (text, params = []) => sql.unsafe(text, params as never[])
    // As migrate() itself records them, so that it then applies 11 and what follows only.
    await sql`create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`
    const space = await oldSchemaWithChunks(query, async (text) => sql.unsafe(text))
    for (const migration of MIGRATIONS.filter((entry) => entry.version < KEYWORD_MIGRATION))
      await sql`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`
    expect(await migrate(sql)).toEqual(
      MIGRATIONS.filter((entry) => entry.version >= KEYWORD_MIGRATION).map((entry) => entry.version),
    )
    await expectMigrated(query, space)
  })
})

describe.skipIf(!ENGINES.includes('embedded'))('migration 11 on existing chunks (PGlite)', () => {
  let db: PGlite

  beforeAll(async () => {
    db = await PGlite.create()
  })
  afterAll(async () => {
    await db?.close()
  })

  it('makes old spaces english, indexes their chunks again and counts their words; the triggers keep the counts', async () => {
    const query: Query = async (text, params = []) => (await db.query<Record<string, any>>(text, params)).rows
    const space = await oldSchemaWithChunks(query, (text) => db.exec(text))
    for (const migration of MIGRATIONS.filter((entry) => entry.version >= KEYWORD_MIGRATION))
      await db.exec(migration.sql)
    await expectMigrated(query, space)
  })
})
