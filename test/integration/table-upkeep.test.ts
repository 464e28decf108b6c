// memsvc's own ANALYZE and VACUUM (src/db/table-upkeep.ts), on the machine's PostgreSQL,
// whose autovacuum may be off (it is on these machines), and on the embedded database, which
// has no autovacuum but keeps the same table counters.
import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sql } from '../../src/db/database.js'
import type { TableUpkeepNeed } from '../../src/db/sql/table-upkeep.js'
import { TableUpkeep, UPKEEP_THRESHOLDS } from '../../src/db/table-upkeep.js'
import { createLogger } from '../../src/observability/logger.js'
import { ENGINES } from '../support/databases.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'

/** A backend reports its table counters when it goes idle, within PostgreSQL's 10 s idle flush. */
const STATISTICS_WAIT_MS = 30_000
const POLL_MS = 250
const JOBS_WRITTEN = UPKEEP_THRESHOLDS.vacuumDeadRows + 500

async function upkeepUntil(
  upkeep: TableUpkeep,
  found: (needs: TableUpkeepNeed[]) => boolean,
): Promise<TableUpkeepNeed[]> {
  const deadline = Date.now() + STATISTICS_WAIT_MS
  for (;;) {
    const needs = await upkeep.runOnce()
    if (found(needs) || Date.now() > deadline) return needs
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

describe.each(ENGINES)('table upkeep (%s)', (engine) => {
  let fixture: IdentityFixture
  let sql: Sql
  const lines: string[] = []
  let upkeep: TableUpkeep

  beforeAll(async () => {
    fixture = await startIdentityFixture(engine)
    sql = fixture.server.server.context.sql
    upkeep = new TableUpkeep(
      sql,
      createLogger('debug', (line) => lines.push(line)),
    )
  }, 240_000)
  afterAll(() => fixture?.stop())

  it('vacuums the job queue once its dead rows pass the threshold, analyzes it, and then finds nothing left to do', async () => {
    const ids = Array.from({ length: JOBS_WRITTEN }, () => crypto.randomUUID())
    // Finished already, so no worker claims them; each update leaves one dead row.
    await sql`
      insert into jobs (id, kind, payload, status, max_attempts, run_after, created_at, updated_at, finished_at)
      select id, 'test.upkeep', '{}', 'SUCCEEDED', 1, now(), now(), now(), now() from unnest(${ids}::uuid[]) as input (id)`
    await sql`update jobs set updated_at = now() where kind = 'test.upkeep'`

    const needs = await upkeepUntil(upkeep, (found) => found.some((need) => need.table === 'jobs' && need.vacuum))
    // Whether the insert's changes were counted yet or not, the vacuum analyzes too.
    expect(needs.find((need) => need.table === 'jobs')).toMatchObject({ vacuum: true })
    expect(lines.some((line) => /table upkeep table=jobs operation="vacuum analyze"/.test(line))).toBe(true)

    const [jobs] = await sql<Array<{ dead: number; vacuumed: boolean; analyzed: boolean }>>`
      select n_dead_tup::int as dead, last_vacuum is not null as vacuumed, last_analyze is not null as analyzed
      from pg_stat_user_tables where relname = 'jobs'`
    expect(jobs).toEqual({ dead: 0, vacuumed: true, analyzed: true })
    expect((await upkeep.runOnce()).some((need) => need.table === 'jobs')).toBe(false)
  }, 60_000)

  it('analyzes a table after enough of it changed, without vacuuming tables other than the queue', async () => {
    // A handful of keys, each changed often enough to pass the threshold of 50 changed rows.
    const [keys] = await sql<Array<{ count: number }>>`select count(*)::int as count from api_keys`
    const rounds = Math.ceil((UPKEEP_THRESHOLDS.analyzeBaseRows * 2) / keys!.count)
    for (let round = 0; round < rounds; round++) await sql`update api_keys set updated_at = now()`
    const needs = await upkeepUntil(upkeep, (found) => found.some((need) => need.table === 'api_keys'))
    expect(needs.every((need) => !need.vacuum || need.table === 'jobs')).toBe(true)
    expect(needs).toContainEqual({ table: 'api_keys', analyze: true, vacuum: false })
  }, 60_000)
})
