// authenticated GET /v1/apikeys (the caller owns 10 keys)
//   ÷ uWS + sha256 + one postgres lookup per request
import { startFloor } from '../lib/floors.js'
import { compare } from './compare.js'
import { bearer, READ_CONNECTIONS, warmAndRunWrk } from './http-load.js'
import type { BenchContext, Comparison } from './types.js'

export const TARGET = 0.95

export async function restList(context: BenchContext): Promise<Comparison> {
  const { options, server, fixtures, database, rss } = context
  const floor = await startFloor(
    'uws-auth-lookup',
    { 'db-url': database.url, postgres: 'patched', 'pool-max': String(options.poolMax) },
    context.floorProfileDir,
  )
  try {
    const headers = bearer(fixtures.reader.key)
    return await compare({
      id: 'rest-list',
      measure: 'GET /v1/apikeys (10 keys)',
      floor: 'uWS + sha256 + PG lookup',
      target: TARGET,
      rounds: options.rounds,
      runProduct: () =>
        rss.during(
          warmAndRunWrk(options, server.pid, {
            url: `${server.restUrl}/v1/apikeys`,
            connections: READ_CONNECTIONS,
            headers,
          }),
        ),
      runFloor: () =>
        warmAndRunWrk(options, floor.pid, {
          url: `http://127.0.0.1:${floor.port}/v1/apikeys`,
          connections: READ_CONNECTIONS,
          headers,
        }),
    })
  } finally {
    await floor.stop()
  }
}
