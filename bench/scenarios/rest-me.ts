// authenticated GET /v1/users/me  ÷  uWS returning fixed JSON (the same bytes)
import fs from 'node:fs'
import path from 'node:path'
import { startFloor } from '../lib/floors.js'
import { compare } from './compare.js'
import { bearer, READ_CONNECTIONS, warmAndRunWrk } from './http-load.js'
import type { BenchContext, Comparison } from './types.js'

export const TARGET = 0.6

export async function restMe(context: BenchContext): Promise<Comparison> {
  const { options, server, fixtures, workDir, rss } = context
  const bodyFile = path.join(workDir, 'users-me.json')
  fs.writeFileSync(bodyFile, fixtures.meBody)
  const floor = await startFloor('uws-fixed-json', { 'body-file': bodyFile }, context.floorProfileDir)
  try {
    const headers = bearer(fixtures.reader.key)
    return await compare({
      id: 'rest-me',
      measure: 'GET /v1/users/me',
      floor: 'uWS fixed JSON',
      target: TARGET,
      rounds: options.rounds,
      runProduct: () =>
        rss.during(
          warmAndRunWrk(options, server.pid, {
            url: `${server.restUrl}/v1/users/me`,
            connections: READ_CONNECTIONS,
            headers,
          }),
        ),
      runFloor: () =>
        warmAndRunWrk(options, floor.pid, {
          url: `http://127.0.0.1:${floor.port}/v1/users/me`,
          connections: READ_CONNECTIONS,
          headers,
        }),
    })
  } finally {
    await floor.stop()
  }
}
