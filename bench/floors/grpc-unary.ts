// Floor for gRPC ListApiKeys: a trivial grpc-js unary server. It serves the same method
// (so h2load sends the same frame to both) and answers with a fixed response of the
// same shape memsvc returns (the reader's ten keys), so response encoding costs the
// same on both sides; it does no authentication and no database work.
//   --response-file FILE   (the REST JSON of GET /v1/apikeys: same fields as the proto)
import fs from 'node:fs'
import * as grpc from '@grpc/grpc-js'
import { ApiKeyServiceService, type ListApiKeysResponse } from '../../src/generated/memsvc/v1/apikeys.js'
import { announce, exitOnSignal, floorArgs } from './floor-common.js'

const options = floorArgs(['response-file'])
// Domain objects and the generated string enums share their values (see transport/grpc/services).
const response = JSON.parse(fs.readFileSync(options['response-file']!, 'utf8')) as ListApiKeysResponse

const server = new grpc.Server()
const unimplemented: grpc.handleUnaryCall<unknown, unknown> = (_call, callback) =>
  callback({ code: grpc.status.UNIMPLEMENTED })
server.addService(ApiKeyServiceService, {
  createApiKey: unimplemented,
  updateApiKey: unimplemented,
  deleteApiKey: unimplemented,
  listApiKeys: (_call: unknown, callback: grpc.sendUnaryData<ListApiKeysResponse>) => callback(null, response),
})
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error
  announce(port)
})
exitOnSignal(() => void server.forceShutdown())
