// Request limits (issue 30): no request a USER key can send makes the server hold memory or the
// event loop out of proportion. Before: a 4 MB `{"memoryIds":[1,1,…]}` made one validation error
// per element (131 MB answer, 1.5 GB RSS, /livez blocked 3 s) and a 20 MB one ended the process.
// Each route and method has a size limit (src/validation/request-limits.ts), lists are counted
// before their items are checked, a JSON body's array elements are counted before it is parsed,
// and an answer lists at most MAX_ERROR_DETAILS field errors.
import * as grpc from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BatchDeleteMemoriesRequest, ProcessingStatus } from '../../src/generated/memsvc/v1/memories.js'
import { CreateSpaceRequest } from '../../src/generated/memsvc/v1/spaces.js'
import { MAX_BATCH_SIZE } from '../../src/validation/memory.js'
import {
  DEFAULT_REQUEST_BYTES,
  MAX_ERROR_DETAILS,
  MAX_JSON_ARRAY_ELEMENTS,
} from '../../src/validation/request-limits.js'
import { ENGINES } from '../support/databases.js'
import { rawUnaryCall } from '../support/grpc-clients.js'
import { callJson } from '../support/http-client.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

const SOME_ID = '00000000-0000-4000-8000-000000000000'
/** /livez must answer within this while any request below is served (the bound). */
const LIVEZ_BOUND_MS = 1_000

const batchDeleteRequest = (memoryIds: string[]) => ({
  memoryIds,
  statusFilter: ProcessingStatus.PROCESSING_STATUS_UNSPECIFIED,
})

/** Polls /livez every 20 ms until stopped, keeping the slowest answer and the highest RSS seen. */
function watchServer(restUrl: string) {
  let slowestMs = 0
  let peakRss = process.memoryUsage().rss
  let running = true
  const loop = (async () => {
    while (running) {
      const asked = performance.now()
      await fetch(`${restUrl}/livez`).then((response) => response.arrayBuffer())
      slowestMs = Math.max(slowestMs, performance.now() - asked)
      peakRss = Math.max(peakRss, process.memoryUsage().rss)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return { slowestMs, peakRss }
    },
  }
}

describe.each(ENGINES)('request limits on %s', (engine) => {
  let fixture: MemoryFixture
  let restUrl: string
  let embedderId: string
  let spaceId: string

  const post = (path: string, body: string, key = fixture.alice.apiKey) =>
    callJson('POST', `${restUrl}${path}`, key, body)
  const grpcMetadata = () => {
    const metadata = new grpc.Metadata()
    metadata.set('authorization', `Bearer ${fixture.alice.apiKey}`)
    return metadata
  }
  const grpcFailure = async (path: string, payload: Buffer): Promise<grpc.ServiceError> => {
    const error = await rawUnaryCall(
      { address: fixture.server.grpcAddress },
      path,
      payload,
      30_000,
      grpcMetadata(),
    ).then(
      () => undefined,
      (failure: grpc.ServiceError) => failure,
    )
    if (!error) throw new Error(`${path} succeeded`)
    return error
  }

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    restUrl = fixture.server.restUrl
    embedderId = await fixture.registerEmbedder(fixture.alice)
    const space = await post('/v1/spaces', JSON.stringify({ name: 'limits', spaceEmbedders: [{ embedderId }] }))
    spaceId = space.json.spaceId
  })
  afterAll(async () => {
    await fixture?.stop()
  })

  describe('a list of many elements (defect 1)', () => {
    const batchDeleteOf = (elements: number) => `{"memoryIds":[${Array(elements).fill('1').join(',')}]}`

    it('a 20 MB batchDelete of 10 million elements is a 413 from its length, and the process lives', async () => {
      const watch = watchServer(restUrl)
      const answer = await post('/v1/memories:batchDelete', batchDeleteOf(10_000_000))
      const { slowestMs } = await watch.stop()
      expect(answer.status).toBe(413)
      expect(answer.json.error.message).toContain(`limit of ${DEFAULT_REQUEST_BYTES} bytes`)
      expect(slowestMs).toBeLessThan(LIVEZ_BOUND_MS)
    })

    it(`more than ${MAX_JSON_ARRAY_ELEMENTS} array elements under the size limit: 400 naming body, before parsing`, async () => {
      const answer = await post('/v1/memories:batchDelete', batchDeleteOf(MAX_JSON_ARRAY_ELEMENTS + 1))
      expect(answer.status).toBe(400)
      expect(answer.json.error.details).toEqual([
        { field: 'body', description: `has more than ${MAX_JSON_ARRAY_ELEMENTS} array elements` },
      ])
    })

    it('tens of thousands of bad ids: one error naming memoryIds, counted before any id is checked', async () => {
      const answer = await post('/v1/memories:batchDelete', batchDeleteOf(MAX_JSON_ARRAY_ELEMENTS - 10))
      expect(answer.status).toBe(400)
      expect(answer.json.error.details).toEqual([{ field: 'memoryIds', description: `at most ${MAX_BATCH_SIZE} ids` }])
      expect(answer.text.length).toBeLessThan(1_000)
    })

    it(`many bad fields at once: at most ${MAX_ERROR_DETAILS} listed, the message counts the rest`, async () => {
      const answer = await post(
        '/v1/memories:batchDelete',
        JSON.stringify({ memoryIds: Array.from({ length: MAX_BATCH_SIZE }, (_, index) => `bad-${index}`) }),
      )
      expect(answer.status).toBe(400)
      expect(answer.json.error.details).toHaveLength(MAX_ERROR_DETAILS)
      expect(answer.json.error.message).toBe(
        `memoryIds.0: must be a UUID (and ${MAX_BATCH_SIZE - 1} more, ${MAX_BATCH_SIZE - MAX_ERROR_DETAILS} of them not listed)`,
      )
    })

    it('gRPC: a message over its method limit is RESOURCE_EXHAUSTED before it is decoded', async () => {
      const ids = Array.from({ length: 60_000 }, () => SOME_ID)
      const payload = Buffer.from(BatchDeleteMemoriesRequest.encode(batchDeleteRequest(ids)).finish())
      expect(payload.length).toBeGreaterThan(DEFAULT_REQUEST_BYTES)
      const error = await grpcFailure('/memsvc.v1.MemoryService/BatchDeleteMemories', payload)
      expect(error.code).toBe(grpc.status.RESOURCE_EXHAUSTED)
      expect(error.details).toContain(`exceeds the limit of ${DEFAULT_REQUEST_BYTES} bytes`)
    })

    it('gRPC: 400,000 empty ids under the limit are one INVALID_ARGUMENT naming memoryIds', async () => {
      const ids = Array.from({ length: 400_000 }, () => '')
      const payload = Buffer.from(BatchDeleteMemoriesRequest.encode(batchDeleteRequest(ids)).finish())
      expect(payload.length).toBeLessThan(DEFAULT_REQUEST_BYTES)
      const error = await grpcFailure('/memsvc.v1.MemoryService/BatchDeleteMemories', payload)
      expect(error.code).toBe(grpc.status.INVALID_ARGUMENT)
      expect(error.metadata.get('x-error-field')).toEqual(['memoryIds'])
    })
  })

  describe('text the database cannot store as sent (defect 5)', () => {
    it('REST: the metadata number 1e999 is a 400 naming it, not a stored null', async () => {
      const body = `{"spaceId":"${spaceId}","originalContent":"note","metadata":{"weight":1e999}}`
      const answer = await post('/v1/memories', body)
      expect(answer.status).toBe(400)
      expect(answer.json.error.details).toEqual([{ field: 'metadata.weight', description: 'must be a finite number' }])
    })

    it('gRPC: a string field whose bytes are not UTF-8 is INVALID_ARGUMENT, not stored as U+FFFD', async () => {
      const marker = 'NAME-MARKER'
      const encoded = Buffer.from(
        CreateSpaceRequest.encode({ name: marker, labels: {}, spaceEmbedders: [{ embedderId }] }).finish(),
      )
      const at = encoded.indexOf(marker)
      encoded[at] = 0xff
      encoded[at + 1] = 0xfe
      const error = await grpcFailure('/memsvc.v1.SpaceService/CreateSpace', encoded)
      expect(error.code).toBe(grpc.status.INVALID_ARGUMENT)
      expect(error.details).toContain('CreateSpace request message')
    })
  })
})
