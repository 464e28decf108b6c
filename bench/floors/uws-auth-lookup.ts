// Floor for `GET /v1/apikeys`: the least a uWS server can do to answer an authenticated
// request from PostgreSQL — sha256 of the bearer key and one indexed lookup (auth-lookup.ts,
// shared with the gRPC floor), answered as JSON. Same uWS loader, same postgres.js and the
// same pool size as memsvc.
//   --db-url postgres://…  --postgres patched|unpatched  --pool-max N
import { loadUws } from '../../src/runtime/uws.js'
import { lookUpBearer } from './auth-lookup.js'
import { announce, COUNT_PATH, exitOnSignal, floorArgs } from './floor-common.js'
import { loadPostgres, type PostgresVariant } from './postgres-variant.js'

const options = floorArgs(['db-url', 'postgres', 'pool-max'])
const postgres = await loadPostgres(options.postgres as PostgresVariant)
const sql = postgres(options['db-url']!, { max: Number(options['pool-max']), onnotice: () => {} })
const uws = loadUws()
let completed = 0

const app = uws.App()
app.get(COUNT_PATH, (res) => {
  res.cork(() => res.writeHeader('content-type', 'application/json').end(`{"count":${completed}}`))
})
app.get('/*', (res, req) => {
  let aborted = false
  res.onAborted(() => {
    aborted = true
  })
  lookUpBearer(sql, req.getHeader('authorization')).then(
    (row) => {
      completed++
      if (aborted) return
      res.cork(() => {
        if (!row) res.writeStatus('401 Unauthorized')
        res.writeHeader('content-type', 'application/json').end(JSON.stringify(row ?? { error: 'invalid API key' }))
      })
    },
    (error: Error) => {
      if (aborted) return
      res.cork(() => res.writeStatus('500 Internal Server Error').end(error.message))
    },
  )
})
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('auth-lookup floor: cannot listen')
  announce(uws.us_socket_local_port(socket as never))
})
exitOnSignal(() => sql.end({ timeout: 1 }))
