import type { ServerContext } from '../../../domain/context.js'
import {
  batchCreateMemories,
  batchDeleteMemories,
  createMemory,
  deleteMemory,
  getMemory,
  getMemoryContent,
  listMemories,
} from '../../../domain/memories.js'
import { retrieveMemories } from '../../../domain/retrieval.js'
import { MEMORY_BATCH_REQUEST_BYTES, MEMORY_REQUEST_BYTES } from '../../../validation/request-limits.js'
import { eventStream } from '../event-stream.js'
import type { HttpServer } from '../http-server.js'
import { callContext, jsonBody, listQuery } from '../request-input.js'
import type { RestRequest, RestResponse } from '../rest-messages.js'
import { retrieveQuery } from '../retrieve-query.js'

export function registerMemoryRoutes(http: HttpServer, server: ServerContext): void {
  const needsKey = { needsApiKey: true }
  const withOneMemory = { needsApiKey: true, maxBodyBytes: MEMORY_REQUEST_BYTES }
  const withMemories = { needsApiKey: true, maxBodyBytes: MEMORY_BATCH_REQUEST_BYTES }
  // 201 while PENDING; 200 with the stored memory when dedupe found the same content.
  http.route(
    'POST',
    '/v1/memories',
    async (request) => {
      const { memory, created } = await createMemory(server.domain, callContext(request), jsonBody(request))
      return { status: created ? 201 : 200, headers: { location: `/v1/memories/${memory.memoryId}` }, json: memory }
    },
    withOneMemory,
  )
  http.route(
    'POST',
    '/v1/memories:batchCreate',
    async (request) => ({
      status: 200,
      json: await batchCreateMemories(server.domain, callContext(request), jsonBody(request)),
    }),
    withMemories,
  )
  http.route(
    'POST',
    '/v1/memories:batchDelete',
    async (request) => ({
      status: 200,
      json: await batchDeleteMemories(server.domain, callContext(request), jsonBody(request)),
    }),
    needsKey,
  )
  // A stream of events (NDJSON, or SSE on Accept: text/event-stream); the GET form takes the same request as query parameters.
  const retrieve = async (request: RestRequest, input: unknown): Promise<RestResponse> => {
    const call = { ...callContext(request), signal: request.cancellation() }
    return { status: 200, stream: eventStream(request, await retrieveMemories(server.domain, call, input)) }
  }
  // Accept chooses between NDJSON and SSE.
  const streamed = { ...needsKey, readHeaders: ['accept'] }
  http.route('POST', '/v1/memories:retrieve', (request) => retrieve(request, jsonBody(request)), streamed)
  http.route('GET', '/v1/memories:retrieve', (request) => retrieve(request, retrieveQuery(request)), streamed)
  http.route(
    'GET',
    '/v1/memories/:id',
    async (request) => ({
      status: 200,
      json: await getMemory(server.domain, callContext(request), request.params.id),
    }),
    needsKey,
  )
  http.route(
    'GET',
    '/v1/memories/:id/content',
    async (request) => ({
      status: 200,
      json: await getMemoryContent(server.domain, callContext(request), request.params.id),
    }),
    needsKey,
  )
  http.route(
    'DELETE',
    '/v1/memories/:id',
    async (request) => {
      await deleteMemory(server.domain, callContext(request), request.params.id)
      return { status: 204 }
    },
    needsKey,
  )
  http.route(
    'GET',
    '/v1/spaces/:id/memories',
    async (request) => ({
      status: 200,
      json: await listMemories(server.domain, callContext(request), {
        ...listQuery(request),
        spaceId: request.params.id,
      }),
    }),
    needsKey,
  )
}
