// GET /v1/apikeys and ListApiKeys send each key's wire_json, which a trigger builds in the
// database on every insert and update (migration 4), while create and update answer with
// toApiKey() of a row. These must be the same wire form, on both engines: every optional
// field present and absent, labels empty and not, timestamps with sub-millisecond parts,
// writes made with plain SQL outside the server, and paging across the boundary.
import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Queryable } from '../../src/db/database.js'
import * as apiKeysSql from '../../src/db/sql/api-keys.js'
import { insertUser } from '../../src/db/sql/users.js'
import { issueApiKey, toApiKey } from '../../src/domain/api-keys.js'
import { ENGINES } from '../support/databases.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const KEY_COUNT = 7

/** toApiKey() of each row, in list order: created_at, then id (keys made in the same millisecond). */
async function expectedKeys(sql: Queryable, ids: string[]) {
  const keys = await Promise.all(ids.map(async (id) => toApiKey((await apiKeysSql.findApiKey(sql, id))!)))
  return keys.sort(
    (a, b) => a.createdAt - b.createdAt || (a.apiKeyId < b.apiKeyId ? -1 : a.apiKeyId > b.apiKeyId ? 1 : 0),
  )
}

describe.each(ENGINES)('API key list JSON built by the database (%s)', (engine) => {
  let server: TestServer
  let sql: Queryable
  const ownerId = crypto.randomUUID()
  const ids: string[] = []

  beforeAll(async () => {
    server = await startTestServer({ engine })
    sql = server.server.context.database!.primary
    const now = new Date()
    await insertUser(sql, {
      id: ownerId,
      username: `json-${ownerId.slice(0, 8)}`,
      display_name: 'JSON "quoted" \\ owner',
      role: 'USER',
      created_at: now,
      updated_at: now,
    })
    for (let i = 0; i < KEY_COUNT; i++) {
      const labels: Record<string, string> =
        i % 3 === 0 ? {} : { app: `search-${i}`, 'team.name': 'a "quoted" \\ value é' }
      const expiresAt = i % 2 === 0 ? new Date(Date.now() + 86_400_000 + i) : undefined
      const { row } = await issueApiKey(sql, { ownerId, creatorId: ownerId, labels, expiresAt })
      ids.push(row.id)
    }
    // Sub-millisecond timestamps, as a write outside the server could leave them.
    await sql`update api_keys set last_used_at = now() - interval '1.2345678 seconds' where id = ${ids[1]!}`
    await sql`update api_keys set last_used_at = '2026-01-02T03:04:05.678912Z' where id = ${ids[2]!}`
  })

  afterAll(async () => {
    await server?.stop()
  })

  it('a whole page equals toApiKey() of each row, in order, field for field and in field order', async () => {
    const page = await apiKeysSql.listApiKeysJson(sql, { ownerId, pageSize: 100 })
    const expected = await expectedKeys(sql, ids)
    expect(page.items.map((item) => JSON.parse(item))).toEqual(expected)
    // json_agg separates elements with ", ": only whitespace may differ, not the field order.
    const fieldOrder = (items: object[]) =>
      items.map((item) => Object.keys(item).filter((key) => item[key as keyof typeof item] !== undefined))
    expect(fieldOrder(page.items.map((item) => JSON.parse(item)))).toEqual(fieldOrder(expected))
    expect(page.next).toBeUndefined()
  })

  it('pages of 3 join up to the same list, the next position pointing at the last key of each full page', async () => {
    const seen: unknown[] = []
    let after: { createdAt: Date; id: string } | undefined
    let pages = 0
    do {
      const page = await apiKeysSql.listApiKeysJson(sql, { ownerId, pageSize: 3, after })
      const items = page.items.map((item) => JSON.parse(item)) as Array<{ apiKeyId: string; createdAt: number }>
      seen.push(...items)
      pages++
      if (page.next) {
        expect(page.next.id).toBe(items.at(-1)!.apiKeyId)
        expect(page.next.createdAt.getTime()).toBe(items.at(-1)!.createdAt)
      }
      after = page.next
    } while (after)
    expect(pages).toBe(Math.ceil(KEY_COUNT / 3))
    expect(seen).toEqual(await expectedKeys(sql, ids))
  })

  it('a page exactly as long as the rest has no next position; no match is an empty array', async () => {
    const exact = await apiKeysSql.listApiKeysJson(sql, { ownerId, pageSize: KEY_COUNT })
    expect(exact.items).toHaveLength(KEY_COUNT)
    expect(exact.next).toBeUndefined()
    const none = await apiKeysSql.listApiKeysJson(sql, { ownerId: crypto.randomUUID(), pageSize: 10 })
    expect(none).toEqual({ items: [] })
  })

  it('the status and label filters select the same keys as the rows do', async () => {
    await sql`update api_keys set status = 'INACTIVE' where id = ${ids[4]!}`
    const inactive = await apiKeysSql.listApiKeysJson(sql, { ownerId, pageSize: 100, status: 'INACTIVE' })
    expect(inactive.items.map((item) => JSON.parse(item))).toEqual(await expectedKeys(sql, [ids[4]!]))
    const labelled = await apiKeysSql.listApiKeysJson(sql, { ownerId, pageSize: 100, labels: { app: 'search-5' } })
    expect(labelled.items.map((item) => JSON.parse(item))).toEqual(await expectedKeys(sql, [ids[5]!]))
  })
})
