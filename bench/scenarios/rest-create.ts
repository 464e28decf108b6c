// POST /v1/apikeys  ÷  postgres.js single-row INSERT into api_keys, 16 in flight.
// wrk holds the same 16 requests in flight against memsvc.
import fs from 'node:fs'
import path from 'node:path'
import { runInsertFloor } from '../lib/floors.js'
import { compare } from './compare.js'
import { bearer, warmAndRunWrk } from './http-load.js'
import type { BenchContext, Comparison } from './types.js'

export const TARGET = 0.7
export const IN_FLIGHT = 16
const BODY = { labels: { bench: 'post' } }

export async function restCreate(context: BenchContext): Promise<Comparison> {
  const { options, server, fixtures, database, workDir, rss } = context
  const bodyFile = path.join(workDir, 'create-body.json')
  fs.writeFileSync(bodyFile, JSON.stringify(BODY))
  return compare({
    id: 'rest-create',
    measure: 'POST /v1/apikeys',
    floor: `postgres.js INSERT ×${IN_FLIGHT}`,
    target: TARGET,
    rounds: options.rounds,
    runProduct: () =>
      rss.during(
        warmAndRunWrk(options, server.pid, {
          url: `${server.restUrl}/v1/apikeys`,
          connections: IN_FLIGHT,
          method: 'POST',
          bodyFile,
          headers: bearer(fixtures.writer.key),
        }),
      ),
    runFloor: () =>
      runInsertFloor({
        dbUrl: database.url,
        userId: fixtures.floorUserId,
        seconds: options.seconds,
        warmupSeconds: options.warmupSeconds,
        concurrency: IN_FLIGHT,
        poolMax: options.poolMax,
      }),
  })
}
