// Floor for `GET /v1/apikeys`: the least a uWS server can do to answer an authenticated
// request from PostgreSQL — sha256 of the bearer key and one indexed lookup (the same
// query memsvc's authenticator runs), answered as JSON. Same uWS loader, same
// postgres.js and the same pool size as memsvc.
//   --db-url postgres://…  --postgres patched|unpatched  --pool-max N
import crypto from 'node:crypto'
import { loadUws } from '../../src/runtime/uws.js'
import { announce, COUNT_PATH, exitOnSignal, floorArgs } from './floor-common.js'
import { loadPostgres, type PostgresVariant } from './postgres-variant.js'

const BEARER = 'Bearer '

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
  const authorization = req.getHeader('authorization')
  const key = authorization.startsWith(BEARER) ? authorization.slice(BEARER.length) : authorization
  const hash = crypto.createHash('sha256').update(key).digest()
  sql`
    select k.id as key_id, k.user_id, u.role, k.status, k.expires_at
    from api_keys k join users u on u.id = k.user_id
    where k.key_hash = ${hash}`.then(
    (rows) => {
      completed++
      if (aborted) return
      res.cork(() => {
        if (rows.length === 0) res.writeStatus('401 Unauthorized')
        res.writeHeader('content-type', 'application/json').end(JSON.stringify(rows[0] ?? { error: 'invalid API key' }))
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
