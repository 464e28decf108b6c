// gRPC ListApiKeys (h2load, pre-encoded request)  ÷  grpc-js + sha256 + PG lookup (target),
// and  ÷  grpc-js with a fixed reply (reported beside it)
import fs from 'node:fs'
import path from 'node:path'
import { memsvcGrpcFailures } from '../lib/counters.js'
import { READER_KEYS } from '../lib/fixtures.js'
import { startFloor } from '../lib/floors.js'
import { LIST_API_KEYS_PATH, preflightListApiKeys, writeListApiKeysFrame } from '../lib/grpc-frame.js'
import { type GrpcLoad, runH2load } from '../lib/h2load.js'
import { type LoadResult, withCpuPerRequest } from '../lib/load-result.js'
import { compareWithFloors } from './compare.js'
import type { BenchContext, Comparison } from './types.js'

/** Against the floor that authenticates each call as the REST floor does. */
export const TARGET = 0.9
/** 16 connections × 4 streams: the same 64 calls in flight as the HTTP read scenarios. */
const CONNECTIONS = 16
const STREAMS_PER_CONNECTION = 4
const UNAUTHENTICATED_STATUS = /grpc-status 16\b/

export async function grpcList(context: BenchContext): Promise<Comparison[]> {
  const { options, server, fixtures, workDir, rss, metricsSecret, database } = context
  const frameFile = path.join(workDir, 'list-api-keys.grpc')
  const frame = writeListApiKeysFrame(frameFile)
  const authorization = `Bearer ${fixtures.reader.key}`
  const responseFile = path.join(workDir, 'list-api-keys.json')
  fs.writeFileSync(responseFile, fixtures.listBody)

  // h2load sees only HTTP 200: check the gRPC status and the ten keys of these exact bytes on every server first.
  const preflight = async (address: string, name: string) => {
    const listed = await preflightListApiKeys(address, frame, authorization)
    if (listed.keys.length !== READER_KEYS)
      throw new Error(`gRPC ListApiKeys on ${name} returned ${listed.keys.length} keys, expected ${READER_KEYS}`)
  }
  await preflight(server.grpcAddress, 'memsvc')
  const fixedFloor = await startFloor('grpc-unary', { 'response-file': responseFile }, context.floorProfileDir)
  try {
    const lookupFloor = await startFloor(
      'grpc-auth-lookup',
      { 'db-url': database.url, 'pool-max': String(options.poolMax), 'response-file': responseFile },
      context.floorProfileDir,
    )
    try {
      await preflight(`127.0.0.1:${fixedFloor.port}`, 'the fixed-reply floor')
      await preflight(`127.0.0.1:${lookupFloor.port}`, 'the auth-lookup floor')
      // The auth-lookup floor must refuse a key it cannot find (UNAUTHENTICATED), or it would not be looking.
      const refusal = await preflightListApiKeys(`127.0.0.1:${lookupFloor.port}`, frame, 'Bearer not-a-key').then(
        () => 'answered',
        (error: Error) => error.message,
      )
      if (!UNAUTHENTICATED_STATUS.test(refusal))
        throw new Error(`the gRPC auth-lookup floor, given an unknown key: ${refusal}; expected grpc-status 16`)
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
      return await compareWithFloors({
        measure: 'gRPC ListApiKeys',
        rounds: options.rounds,
        runProduct: async () => {
          // A non-OK gRPC status is still HTTP 200 to h2load: count them from memsvc's metrics.
          const failuresBefore = await memsvcGrpcFailures(endpoint, 'memsvc.v1.ApiKeyService', 'ListApiKeys')
          const result = await rss.during(warmAndRun(server.grpcAddress, server.pid))
          const failed = (await memsvcGrpcFailures(endpoint, 'memsvc.v1.ApiKeyService', 'ListApiKeys')) - failuresBefore
          return { ...result, errors: result.errors + failed }
        },
        floors: [
          {
            id: 'grpc-list',
            floor: 'grpc-js + sha256 + PG lookup',
            target: TARGET,
            runFloor: () => warmAndRun(`127.0.0.1:${lookupFloor.port}`, lookupFloor.pid),
          },
          {
            id: 'grpc-list-fixed',
            floor: 'grpc-js unary (fixed reply)',
            runFloor: () => warmAndRun(`127.0.0.1:${fixedFloor.port}`, fixedFloor.pid),
          },
        ],
      })
    } finally {
      await lookupFloor.stop()
    }
  } finally {
    await fixedFloor.stop()
  }
}
