// Floor for gRPC ListApiKeys that does what the REST auth-lookup floor does, over grpc-js:
// per call, sha256 of the bearer key from the call's metadata and the same indexed lookup
// (auth-lookup.ts), through postgres.js with the same pool size as memsvc. A call whose key
// matches nothing is refused (UNAUTHENTICATED); the others get the fixed reply of the
// fixed-reply floor (grpc-unary.ts): the reader's ten keys, so response encoding costs the
// same as memsvc's.
//   --db-url postgres://…  --pool-max N  --response-file FILE (the REST JSON of GET /v1/apikeys)
import fs from 'node:fs'
import * as grpc from '@grpc/grpc-js'
import postgres from 'postgres'
import { ApiKeyServiceService, type ListApiKeysResponse } from '../../src/generated/memsvc/v1/apikeys.js'
import { lookUpBearer } from './auth-lookup.js'
import { announce, exitOnSignal, floorArgs } from './floor-common.js'

const options = floorArgs(['db-url', 'pool-max', 'response-file'])
const sql = postgres(options['db-url']!, { max: Number(options['pool-max']), onnotice: () => {} })
// Domain objects and the generated string enums share their values (see transport/grpc/services).
const response = JSON.parse(fs.readFileSync(options['response-file']!, 'utf8')) as ListApiKeysResponse

const server = new grpc.Server()
const unimplemented: grpc.handleUnaryCall<unknown, unknown> = (_call, callback) =>
  callback({ code: grpc.status.UNIMPLEMENTED })
const listApiKeys: grpc.handleUnaryCall<unknown, ListApiKeysResponse> = (call, callback) => {
  const authorization = call.metadata.get('authorization')[0]
  lookUpBearer(sql, typeof authorization === 'string' ? authorization : '').then(
    (row) =>
      row ? callback(null, response) : callback({ code: grpc.status.UNAUTHENTICATED, details: 'invalid API key' }),
    (error: Error) => callback({ code: grpc.status.INTERNAL, details: error.message }),
  )
}
server.addService(ApiKeyServiceService, {
  createApiKey: unimplemented,
  updateApiKey: unimplemented,
  deleteApiKey: unimplemented,
  listApiKeys,
})
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error
  announce(port)
})
exitOnSignal(async () => {
  server.forceShutdown()
  await sql.end({ timeout: 1 })
})
