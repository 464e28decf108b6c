import * as grpc from '@grpc/grpc-js'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AdminServiceService } from '../../src/generated/memsvc/v1/admin.js'
import { ApiKeyServiceService } from '../../src/generated/memsvc/v1/apikeys.js'
import { EmbedderServiceService } from '../../src/generated/memsvc/v1/embedders.js'
import { LlmServiceService } from '../../src/generated/memsvc/v1/llms.js'
import { MemoryServiceService } from '../../src/generated/memsvc/v1/memories.js'
import { RerankerServiceService } from '../../src/generated/memsvc/v1/rerankers.js'
import { SpaceServiceService } from '../../src/generated/memsvc/v1/spaces.js'
import { SystemServiceService } from '../../src/generated/memsvc/v1/system.js'
import { UserServiceService } from '../../src/generated/memsvc/v1/users.js'
import { type ApiResult, OPERATIONS, type OperationName, type Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { fuzzInputs, idFieldOf, spoiledBytes } from '../support/fuzz-inputs.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { EMBEDDER, LLM, RERANKER } from './registry-cases.js'

/**
 * Property-based bad input (fast-check) on every operation of both transports, against a
 * real server: REST-shaped inputs over the schemas' fields through both transports, and
 * spoiled protobuf bytes straight onto the gRPC wire. Bounded: a fixed seed and a fixed
 * number of runs per operation. Goal: no 5xx / INTERNAL / UNKNOWN, no hang, no ERROR log
 * line, and the server answers normally afterwards.
 */

const SEED = 20_261_124
const RUNS = Number(process.env.MEMSVC_FUZZ_RUNS ?? 20)
const HANG_MS = 10_000

const SERVICES: Record<string, grpc.ServiceDefinition> = {
  system: SystemServiceService,
  users: UserServiceService,
  apikeys: ApiKeyServiceService,
  admin: AdminServiceService,
  embedders: EmbedderServiceService,
  llms: LlmServiceService,
  rerankers: RerankerServiceService,
  spaces: SpaceServiceService,
  memories: MemoryServiceService,
}

/** Statuses the server may answer bad input with: anything but a server fault or silence. */
const SERVER_FAULTS = new Set(['INTERNAL', 'UNKNOWN', 'DEADLINE_EXCEEDED', 'UNAVAILABLE', 'DATA_LOSS'])
const isServerFault = (transport: Transport, result: ApiResult) =>
  transport === 'rest'
    ? result.rawStatus >= 500
    : SERVER_FAULTS.has(result.status) || result.rawStatus === grpc.status.UNKNOWN

/** grpc-js reports a request its client cannot encode as INTERNAL with this message, without sending anything. */
const CLIENT_ENCODING_FAILURE = 'Request message serialization failure'
/** A thrown client call that means the server misbehaved: no answer, a dropped connection, a body that is not JSON. */
const SERVER_SIDE_FAILURE = /^no answer|fetch failed|JSON/

interface Row {
  operation: string
  transport: string
  tried: number
  failed: number
  unsendable: number
  examples: string[]
}

const withDeadline = <T>(promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS).unref(),
    ),
  ])

/** Lone surrogates cannot be percent-encoded; a path segment gets the well-formed text, encoded. */
const pathSegment = (value: unknown) => encodeURIComponent(String(value).replace(/[\ud800-\udfff]/g, '\ufffd'))

function printTable(engine: string, rows: Row[]): void {
  const lines = [
    `fuzz (${engine}, seed ${SEED}, ${RUNS} runs per operation and mode)`,
    'operation          transport   tried  failed  unsendable',
  ]
  for (const row of rows)
    lines.push(
      `${row.operation.padEnd(18)} ${row.transport.padEnd(10)} ${String(row.tried).padStart(6)} ${String(row.failed).padStart(7)} ${String(row.unsendable).padStart(11)}`,
    )
  const total = rows.reduce((sum, row) => ({ tried: sum.tried + row.tried, failed: sum.failed + row.failed }), {
    tried: 0,
    failed: 0,
  })
  lines.push(`total: ${total.tried} requests, ${total.failed} failed`)
  console.log(lines.join('\n'))
}

/**
 * One engine by default (the first of MEMSVC_TEST_ENGINES) keeps npm test's share modest;
 * MEMSVC_FUZZ_ENGINES=postgresql,embedded runs it on both.
 */
const FUZZ_ENGINES = process.env.MEMSVC_FUZZ_ENGINES
  ? (process.env.MEMSVC_FUZZ_ENGINES.split(',') as typeof ENGINES)
  : ENGINES.slice(0, 1)

describe.each(FUZZ_ENGINES)('generated bad input on every operation never gets a server fault (%s)', (engine) => {
  let fixture: IdentityFixture
  let rawClient: grpc.Client
  const rows: Row[] = []
  const knownIds: string[] = []
  let logLinesBefore = 0

  beforeAll(async () => {
    fixture = await startIdentityFixture(engine)
    rawClient = new grpc.Client(fixture.server.grpcAddress, grpc.credentials.createInsecure())
    // Real ids to aim at, owned by bob: another user's resources as well as missing ones.
    const embedder = await fixture.call('rest', 'createEmbedder', EMBEDDER.input(), fixture.bob.apiKey)
    const llm = await fixture.call('rest', 'createLlm', LLM.input(), fixture.bob.apiKey)
    const reranker = await fixture.call('rest', 'createReranker', RERANKER.input(), fixture.bob.apiKey)
    knownIds.push(
      fixture.bob.userId,
      fixture.bob.apiKeyId,
      embedder.body.embedderId,
      llm.body.llmId,
      reranker.body.rerankerId,
    )
    logLinesBefore = fixture.server.logs.length
  })
  afterAll(async () => {
    if (rows.length > 0) printTable(engine, rows)
    rawClient?.close()
    await fixture?.stop()
  })

  const validInput = (operation: OperationName): Record<string, unknown> => {
    if (operation === 'createEmbedder') return EMBEDDER.input()
    if (operation === 'createLlm') return LLM.input()
    if (operation === 'createReranker') return RERANKER.input()
    if (operation === 'createUser') return { username: `fuzz-${crypto.randomUUID().slice(0, 8)}` }
    if (operation === 'updateApiKey') return { status: 'ACTIVE' }
    if (operation === 'updateEmbedder' || operation === 'updateLlm' || operation === 'updateReranker')
      return { displayName: 'fuzzed' }
    return {}
  }

  /** Drain would stop the server for every later case: only callers who may not drain send it. */
  const callerKey = (operation: OperationName, pick: number) => {
    if (operation === 'drain') return pick % 2 === 0 ? fixture.alice.apiKey : undefined
    return pick % 2 === 0 ? fixture.root.apiKey : fixture.alice.apiKey
  }

  const operations = Object.keys(OPERATIONS) as OperationName[]

  const grpcMethodOf = (operation: OperationName) => {
    const spec = OPERATIONS[operation].grpc as { client: string; method: string; request(input: unknown): unknown }
    return { spec, method: SERVICES[spec.client]![spec.method]! }
  }

  const rawGrpc = (path: string, bytes: Buffer, apiKey: string | undefined) =>
    new Promise<grpc.ServiceError | null>((resolve) => {
      const metadata = new grpc.Metadata()
      if (apiKey) metadata.set('authorization', `Bearer ${apiKey}`)
      rawClient.makeUnaryRequest(
        path,
        (value: Buffer) => value,
        (value: Buffer) => value,
        bytes,
        metadata,
        { deadline: Date.now() + HANG_MS },
        (error) => resolve(error),
      )
    })

  /**
   * The proto message of the input, sent as it is: a field whose value the proto type
   * cannot hold (an object for an int32) is left out rather than the whole message, so
   * that every other hostile field still reaches the server.
   */
  async function typedGrpcCall(
    operation: OperationName,
    input: Record<string, unknown>,
    apiKey: string | undefined,
  ): Promise<ApiResult> {
    const { spec, method } = grpcMethodOf(operation)
    const message = spec.request(input) as Record<string, unknown>
    const encodes = (candidate: unknown) => {
      try {
        method.requestSerialize(candidate)
        return true
      } catch {
        return false
      }
    }
    // Each field is tried on top of a valid message: proto maps and lists must be present for the encoder.
    const valid = spec.request(validInput(operation)) as Record<string, unknown>
    const sendable = encodes(message)
      ? message
      : {
          ...valid,
          ...Object.fromEntries(
            Object.entries(message).filter(([name, value]) => encodes({ ...valid, [name]: value })),
          ),
        }
    if (!encodes(sendable)) throw new Error(`${CLIENT_ENCODING_FAILURE}: no field of the input encodes`)
    const error = await rawGrpc(method.path, method.requestSerialize(sendable), apiKey)
    const status = error ? (grpc.status[error.code] ?? String(error.code)) : 'OK'
    return { status, rawStatus: error?.code ?? 0, body: undefined, fields: [], message: error?.details ?? '' }
  }

  for (const transport of ['rest', 'grpc'] as const) {
    it(`over ${transport}: arbitrary values in every field of every operation`, async () => {
      for (const operation of operations) {
        const row: Row = { operation, transport, tried: 0, failed: 0, unsendable: 0, examples: [] }
        rows.push(row)
        const samples = fc.sample(fc.tuple(fuzzInputs(operation, validInput(operation), knownIds), fc.nat()), {
          numRuns: RUNS,
          seed: SEED,
        })
        for (const [input, pick] of samples) {
          const idField = idFieldOf(operation)
          const sent = transport === 'rest' && idField ? { ...input, [idField]: pathSegment(input[idField]) } : input
          let result: ApiResult
          try {
            result = await withDeadline(
              transport === 'rest'
                ? fixture.client.call(transport, operation, sent, callerKey(operation, pick))
                : typedGrpcCall(operation, sent, callerKey(operation, pick)),
            )
          } catch (error) {
            // The client could not put the value on the wire (no query-string form, no proto encoding): nothing reached the server.
            if (!SERVER_SIDE_FAILURE.test(String((error as Error).message))) {
              row.unsendable++
              continue
            }
            row.tried++
            row.failed++
            row.examples.push(`${(error as Error).message}: ${JSON.stringify(sent).slice(0, 300)}`)
            continue
          }
          row.tried++
          if (isServerFault(transport, result)) {
            row.failed++
            row.examples.push(`${result.status} ${result.message}: ${JSON.stringify(sent).slice(0, 300)}`)
          }
        }
      }
      const failures = rows.filter((row) => row.transport === transport && row.failed > 0)
      expect(failures.map((row) => `${row.operation}: ${row.examples.slice(0, 3).join(' | ')}`)).toEqual([])
    })
  }

  it('over gRPC: spoiled protobuf bytes of every method', async () => {
    for (const operation of operations) {
      const { spec, method } = grpcMethodOf(operation)
      const row: Row = { operation, transport: 'grpc-bytes', tried: 0, failed: 0, unsendable: 0, examples: [] }
      rows.push(row)
      const valid = method.requestSerialize(
        spec.request({
          ...validInput(operation),
          ...(idFieldOf(operation) ? { [idFieldOf(operation)!]: knownIds[0] } : {}),
        }),
      )
      for (const bytes of fc.sample(spoiledBytes(valid), { numRuns: RUNS, seed: SEED })) {
        const error = await rawGrpc(
          method.path,
          bytes,
          operation === 'drain' ? fixture.alice.apiKey : fixture.root.apiKey,
        )
        const code = error ? error.code : grpc.status.OK
        row.tried++
        if (SERVER_FAULTS.has(grpc.status[code]!) || code === grpc.status.UNKNOWN) {
          row.failed++
          row.examples.push(`${grpc.status[code]}: ${bytes.toString('hex').slice(0, 120)}`)
        }
      }
    }
    const failures = rows.filter((row) => row.transport === 'grpc-bytes' && row.failed > 0)
    expect(failures.map((row) => `${row.operation}: ${row.examples.slice(0, 3).join(' | ')}`)).toEqual([])
  })

  it('afterwards: no ERROR log line, and the server answers normally', async () => {
    const errors = fixture.server.logs.slice(logLinesBefore).filter((line) => / ERROR /.test(line))
    expect(errors.slice(0, 5)).toEqual([])
    expect((await fetch(`${fixture.server.restUrl}/readyz`)).status).toBe(200)
    for (const transport of ['rest', 'grpc'] as const)
      expect((await fixture.call(transport, 'getMe', {}, fixture.alice.apiKey)).status).toBe('OK')
  })
})
