// Failures reach SDK users as ONE class, MemsvcError, built from the server's error trailer:
// the status name, the gRPC code, the message, the field at fault and the request id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { ENTRY_POINTS, loadSdk, type Sdk } from '../support/sdk.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const GRPC = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, UNAUTHENTICATED: 16 } as const
const MISSING_ID = '00000000-0000-4000-8000-000000000000'

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('the call succeeded')
    },
    (error: unknown) => error,
  )
}

describe.each(ENGINES)('SDK errors (%s)', (engine) => {
  let server: TestServer
  let rootKey: string

  beforeAll(async () => {
    server = await startTestServer({ engine })
    const sdk = await loadSdk('esm')
    const anonymous = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}` })
    rootKey = (await anonymous.system.initialize()).rootApiKey!
    anonymous.close()
  })

  afterAll(async () => {
    await server?.stop()
  })

  describe.each(ENTRY_POINTS)('entry point %s', (entry) => {
    let sdk: Sdk
    let client: InstanceType<Sdk['MemsvcClient']>
    beforeAll(async () => {
      sdk = await loadSdk(entry)
      client = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}`, apiKey: rootKey })
    })
    afterAll(() => client?.close())

    it('bad input: INVALID_ARGUMENT naming the field, with the request id', async () => {
      const error = await failure(
        client.embedders.create(
          {
            displayName: 'bad url',
            providerType: 'TEI',
            endpointUrl: 'not a url',
            modelIdentifier: 'm',
            dimensionality: 8,
          },
          { requestId: `sdk-errors-${entry}` },
        ),
      )
      expect(error).toBeInstanceOf(sdk.MemsvcError)
      expect(sdk.MemsvcError.is(error)).toBe(true)
      expect(error).toMatchObject({
        name: 'MemsvcError',
        code: 'INVALID_ARGUMENT',
        grpcStatus: GRPC.INVALID_ARGUMENT,
        field: 'endpointUrl',
        requestId: `sdk-errors-${entry}`,
      })
      expect((error as Error).message).toMatch(/endpointUrl/)
    })

    it('a missing resource: NOT_FOUND with a request id and no field', async () => {
      const error = await failure(client.memories.get({ memoryId: MISSING_ID }))
      expect(error).toBeInstanceOf(sdk.MemsvcError)
      expect(error).toMatchObject({ code: 'NOT_FOUND', grpcStatus: GRPC.NOT_FOUND, field: undefined, fields: [] })
      expect((error as InstanceType<Sdk['MemsvcError']>).requestId).toMatch(/\S/)
    })

    it('no key: UNAUTHENTICATED', async () => {
      const anonymous = new sdk.MemsvcClient({ address: `http://${server.grpcAddress}` })
      try {
        await expect(anonymous.apiKeys.list()).rejects.toMatchObject({
          name: 'MemsvcError',
          code: 'UNAUTHENTICATED',
          grpcStatus: GRPC.UNAUTHENTICATED,
        })
      } finally {
        anonymous.close()
      }
    })

    it('a bad address is a MemsvcError too, thrown by the constructor', () => {
      expect(() => new sdk.MemsvcClient({ address: 'ftp://example.com' })).toThrow(
        expect.objectContaining({ name: 'MemsvcError', code: 'INVALID_ARGUMENT' }),
      )
    })
  })
})
