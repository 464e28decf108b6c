import type { ServerContext } from '../../../domain/context.js'
import {
  addSpaceEmbedder,
  createSpace,
  deleteSpace,
  getSpace,
  listSpaces,
  removeSpaceEmbedder,
  updateSpace,
} from '../../../domain/spaces.js'
import type { HttpServer } from '../http-server.js'
import { callContext, customMethodTarget, jsonBody, listQuery } from '../request-input.js'

export function registerSpaceRoutes(http: HttpServer, server: ServerContext): void {
  const needsKey = { needsApiKey: true }
  http.route(
    'POST',
    '/v1/spaces',
    async (request) => {
      const created = await createSpace(server.domain, callContext(request), jsonBody(request))
      return { status: 201, headers: { location: `/v1/spaces/${created.spaceId}` }, json: created }
    },
    needsKey,
  )
  http.route(
    'GET',
    '/v1/spaces',
    async (request) => ({
      status: 200,
      json: await listSpaces(server.domain, callContext(request), listQuery(request)),
    }),
    needsKey,
  )
  http.route(
    'GET',
    '/v1/spaces/:id',
    async (request) => ({
      status: 200,
      json: await getSpace(server.domain, callContext(request), request.params.id),
    }),
    needsKey,
  )
  http.route(
    'PUT',
    '/v1/spaces/:id',
    async (request) => ({
      status: 200,
      json: await updateSpace(server.domain, callContext(request), request.params.id, jsonBody(request)),
    }),
    needsKey,
  )
  http.route(
    'DELETE',
    '/v1/spaces/:id',
    async (request) => {
      await deleteSpace(server.domain, callContext(request), request.params.id)
      return { status: 204 }
    },
    needsKey,
  )
  // POST /v1/spaces/{id}:addEmbedder → 202 (its back-fill runs as jobs); :removeEmbedder → 200.
  http.route(
    'POST',
    '/v1/spaces/:id',
    async (request) => {
      if ((request.params.id ?? '').endsWith(':addEmbedder')) {
        const space = await addSpaceEmbedder(
          server.domain,
          callContext(request),
          customMethodTarget(request, 'addEmbedder'),
          jsonBody(request),
        )
        return { status: 202, json: space }
      }
      return {
        status: 200,
        json: await removeSpaceEmbedder(
          server.domain,
          callContext(request),
          customMethodTarget(request, 'removeEmbedder'),
          jsonBody(request),
        ),
      }
    },
    needsKey,
  )
}
