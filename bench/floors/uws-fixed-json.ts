// Floor for `GET /v1/users/me`: a uWS server answering every request with fixed JSON —
// the exact bytes memsvc returned for the reader's /v1/users/me, so both sides send the
// same body. Same uWS loader as memsvc.
//   --body-file FILE
import fs from 'node:fs'
import { loadUws } from '../../src/runtime/uws.js'
import { announce, COUNT_PATH, exitOnSignal, floorArgs } from './floor-common.js'

const options = floorArgs(['body-file'])
const body = fs.readFileSync(options['body-file']!)
const uws = loadUws()
let completed = 0

const app = uws.App()
app.get(COUNT_PATH, (res) => {
  res.cork(() => res.writeHeader('content-type', 'application/json').end(`{"count":${completed}}`))
})
app.get('/*', (res) => {
  completed++
  res.cork(() => res.writeHeader('content-type', 'application/json; charset=utf-8').end(body))
})
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('fixed-json floor: cannot listen')
  announce(uws.us_socket_local_port(socket as never))
})
exitOnSignal()
