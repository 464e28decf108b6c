// gRPC ListApiKeys (h2load, pre-encoded request)  ÷  trivial grpc-js unary server
import fs from 'node:fs'
import path from 'node:path'
import { memsvcGrpcFailures } from '../lib/counters.js'
import { READER_KEYS } from '../lib/fixtures.js'
import { startFloor } from '../lib/floors.js'
import { LIST_API_KEYS_PATH, preflightListApiKeys, writeListApiKeysFrame } from '../lib/grpc-frame.js'
import { type GrpcLoad, runH2load } from '../lib/h2load.js'
import { type LoadResult, withCpuPerRequest } from '../lib/load-result.js'
import { compare } from './compare.js'
import type { BenchContext, Comparison } from './types.js'

export const TARGET = 0.8
/** 16 connections × 4 streams: the same 64 calls in flight as the HTTP read scenarios. */
const CONNECTIONS = 16
const STREAMS_PER_CONNECTION = 4

export async function grpcList(context: BenchContext): Promise<Comparison> {
  const { options, server, fixtures, workDir, rss, metricsSecret } = context
  const frameFile = path.join(workDir, 'list-api-keys.grpc')
  const frame = writeListApiKeysFrame(frameFile)
  const authorization = `Bearer ${fixtures.reader.key}`
  const responseFile = path.join(workDir, 'list-api-keys.json')
  fs.writeFileSync(responseFile, fixtures.listBody)

  // h2load sees only HTTP 200: check the gRPC status of these exact bytes on both servers first.
  const listed = await preflightListApiKeys(server.grpcAddress, frame, authorization)
  if (listed.keys.length !== READER_KEYS)
    throw new Error(`gRPC ListApiKeys returned ${listed.keys.length} keys, expected ${READER_KEYS}`)
  const floor = await startFloor('grpc-unary', { 'response-file': responseFile }, context.floorProfileDir)
  try {
    await preflightListApiKeys(`127.0.0.1:${floor.port}`, frame)
    const load = (address: string, seconds: number): GrpcLoad => ({
      url: `http://${address}${LIST_API_KEYS_PATH}`,
      frameFile,
      connections: CONNECTIONS,
      streams: STREAMS_PER_CONNECTION,
      seconds,
      headers: { authorization },
    })
    const warmAndRun = async (address: string, pid: number): Promise<LoadResult> => {
      if (options.warmupSeconds > 0) await runH2load(load(address, options.warmupSeconds))
      return withCpuPerRequest(pid, () => runH2load(load(address, options.seconds)))
    }
    const endpoint = { restUrl: server.restUrl, secret: metricsSecret }
    return await compare({
      id: 'grpc-list',
      measure: 'gRPC ListApiKeys',
      floor: 'grpc-js unary (fixed reply)',
      target: TARGET,
      rounds: options.rounds,
      runProduct: async () => {
        // A non-OK gRPC status is still HTTP 200 to h2load: count them from memsvc's metrics.
        const failuresBefore = await memsvcGrpcFailures(endpoint, 'memsvc.v1.ApiKeyService', 'ListApiKeys')
        const result = await rss.during(warmAndRun(server.grpcAddress, server.pid))
        const failed = (await memsvcGrpcFailures(endpoint, 'memsvc.v1.ApiKeyService', 'ListApiKeys')) - failuresBefore
        return { ...result, errors: result.errors + failed }
      },
      runFloor: () => warmAndRun(`127.0.0.1:${floor.port}`, floor.pid),
    })
  } finally {
    await floor.stop()
  }
}
