import crypto from 'node:crypto'
import * as grpc from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServerContext } from '../../src/domain/context.js'
import { AppError } from '../../src/errors/app-error.js'
import { Lifecycle } from '../../src/lifecycle/lifecycle.js'
import { createLogger } from '../../src/observability/logger.js'
import { createMetrics } from '../../src/observability/metrics.js'
import { GrpcServer } from '../../src/transport/grpc/grpc-server.js'
import { registerGrpcServices } from '../../src/transport/grpc/services/index.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

/**
 * The last-resort guard of the gRPC wrapper, method by method. The production service
 * definitions and wrapper are used; only the implementations are swapped for ones that
 * misbehave in each way a bug could, selected per call by the x-fault metadata.
 */

type Fault = 'sync-throw' | 'rejects-non-error' | 'unencodable-response' | 'non-ascii-field'
const FAULTS: Fault[] = ['sync-throw', 'rejects-non-error', 'unencodable-response', 'non-ascii-field']

/** Resolves as a plain value (no `then`) and throws on any other property read: no encoder gets past it. */
const unencodable = () =>
  new Proxy(
    {},
    {
      get: (_target, property) => {
        if (property === 'then') return undefined
        throw new Error('this response cannot be encoded')
      },
    },
  )

function misbehave(fault: string): unknown {
  switch (fault) {
    case 'sync-throw':
      throw new TypeError('a synchronous bug')
    case 'rejects-non-error':
      return Promise.reject(undefined)
    case 'unencodable-response':
      return Promise.resolve(unencodable())
    default:
      return Promise.reject(
        new AppError('INVALID_ARGUMENT', 'labels.\ud800: bad key', [
          { field: 'labels.é\u0000', description: 'bad key' },
        ]),
      )
  }
}

interface Method {
  path: string
  key: string
  /** Whether the response encoder reads the response at all (google.protobuf.Empty does not). */
  encoderReadsResponse: boolean
}

function encoderReads(serialize: grpc.serialize<unknown>): boolean {
  try {
    serialize(unencodable())
    return false
  } catch {
    return true
  }
}

const methods: Method[] = []
let server: GrpcServer
let address: string
let client: grpc.Client
const logs: string[] = []

beforeAll(async () => {
  const lifecycle = new Lifecycle()
  lifecycle.transition('READY')
  const log = createLogger('debug', (line) => logs.push(line))
  server = new GrpcServer({
    maxMessageBytes: 1 << 20,
    lifecycle,
    metrics: createMetrics(lifecycle, async () => []),
    log,
  })
  // registerGrpcServices adds every production service; each implementation is replaced by a faulty one.
  const recorder = {
    addService(definition: grpc.ServiceDefinition, _implementation: unknown, options?: unknown) {
      const faulty: Record<string, unknown> = {}
      for (const [key, method] of Object.entries(definition)) {
        methods.push({ path: method.path, key, encoderReadsResponse: encoderReads(method.responseSerialize) })
        // A server-streaming method is implemented by an object whose open() starts the stream; a
        // client-streaming one by an object whose receive() reads the messages.
        faulty[key] = method.responseStream
          ? {
              open: () => misbehave(currentFault),
              failureMessage: (error: AppError) => ({ status: { code: error.code, message: error.message } }),
            }
          : method.requestStream
            ? { receive: () => misbehave(currentFault) }
            : () => misbehave(currentFault)
      }
      server.addService(definition, faulty as never, options as never)
    },
  }
  registerGrpcServices(recorder as unknown as GrpcServer, {} as ServerContext)
  const port = await server.bind('127.0.0.1', 0)
  address = `127.0.0.1:${port}`
  client = new grpc.Client(address, grpc.credentials.createInsecure())
})

afterAll(async () => {
  client?.close()
  await server?.shutdown(1000)
})

// The implementations read the fault of the call in flight; calls below run one at a time.
let currentFault: Fault = 'sync-throw'

function rawCall(path: string, body: Buffer, requestId: string): Promise<{ error: grpc.ServiceError | null }> {
  const metadata = new grpc.Metadata()
  metadata.set('x-request-id', requestId)
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (value: Buffer) => value,
      (value: Buffer) => value,
      body,
      metadata,
      { deadline: Date.now() + 5000 },
      (error) => resolve({ error }),
    )
  })
}

describe('the gRPC wrapper answers every misbehaving method with a status and the request id, and stays up', () => {
  it('registers every production method', () => {
    expect(methods.length).toBeGreaterThanOrEqual(20)
  })

  for (const fault of FAULTS) {
    it(`${fault}: every method answers, none ends the process`, async () => {
      currentFault = fault
      const outcomes: string[] = []
      for (const method of methods) {
        const requestId = `guard-${fault}-${method.key}`
        const { error } = await rawCall(method.path, Buffer.alloc(0), requestId)
        if (fault === 'unencodable-response' && !method.encoderReadsResponse) {
          expect(error, method.path).toBeNull()
          continue
        }
        expect(error, method.path).not.toBeNull()
        const wanted = fault === 'non-ascii-field' ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL
        outcomes.push(`${method.path} ${grpc.status[error!.code]} ${error!.metadata.get('x-request-id')[0]}`)
        expect(error!.code, `${method.path}: ${error!.details}`).toBe(wanted)
        expect(error!.metadata.get('x-request-id')).toEqual([requestId])
        if (fault === 'non-ascii-field') {
          expect(error!.metadata.get('x-error-field').map((field) => decodeURIComponent(String(field)))).toEqual([
            'labels.é\u0000',
          ])
          expect(error!.details).toBe('labels.\ufffd: bad key')
        }
      }
      expect(outcomes.length).toBeGreaterThan(methods.length / 2)
    })
  }

  it('logs each INTERNAL with its request id and no raw internals in the answer', async () => {
    currentFault = 'sync-throw'
    const { error } = await rawCall(methods[0]!.path, Buffer.alloc(0), 'guard-log-check')
    expect(error!.details).toBe('internal error')
    expect(logs.some((line) => line.includes('guard-log-check') && line.includes('a synchronous bug'))).toBe(true)
  })
})

describe('malformed protobuf bytes are INVALID_ARGUMENT on every method of a real server', () => {
  let real: TestServer
  let realClient: grpc.Client
  beforeAll(async () => {
    real = await startTestServer({ engine: 'embedded' })
    realClient = new grpc.Client(real.grpcAddress, grpc.credentials.createInsecure())
  })
  afterAll(async () => {
    realClient?.close()
    await real?.stop()
  })

  // Field 1, length-delimited, claiming 255 bytes that never come.
  const TRUNCATED = Buffer.from([0x0a, 0xff, 0x01])

  it('every method', async () => {
    const answered: string[] = []
    for (const method of methods) {
      const requestId = crypto.randomUUID()
      const metadata = new grpc.Metadata()
      metadata.set('x-request-id', requestId)
      const error = await new Promise<grpc.ServiceError | null>((resolve) => {
        realClient.makeUnaryRequest(
          method.path,
          (value: Buffer) => value,
          (value: Buffer) => value,
          TRUNCATED,
          metadata,
          { deadline: Date.now() + 5000 },
          (failure) => resolve(failure),
        )
      })
      expect(error?.code, `${method.path}: ${error?.details}`).toBe(grpc.status.INVALID_ARGUMENT)
      expect(error!.metadata.get('x-request-id')).toEqual([requestId])
      answered.push(method.path)
    }
    expect(answered).toHaveLength(methods.length)
    const health = await fetch(`${real.restUrl}/readyz`)
    expect(health.status).toBe(200)
  })
})
