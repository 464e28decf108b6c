import { createApiKey, deleteApiKey, listApiKeys, updateApiKey } from '../../../domain/api-keys.js'
import type { ServerContext } from '../../../domain/context.js'
import type { HttpServer } from '../http-server.js'
import { callContext, jsonBody, listQuery } from '../request-input.js'
import { listBody } from '../rest-messages.js'

export function registerApiKeyRoutes(http: HttpServer, server: ServerContext): void {
  const needsKey = { needsApiKey: true }
  http.route(
    'POST',
    '/v1/apikeys',
    async (request) => {
      const created = await createApiKey(server.domain, callContext(request), jsonBody(request))
      return { status: 201, headers: { location: `/v1/apikeys/${created.apiKeyMetadata.apiKeyId}` }, json: created }
    },
    needsKey,
  )
  http.route(
    'GET',
    '/v1/apikeys',
    async (request) => {
      const page = await listApiKeys(server.domain, callContext(request), listQuery(request))
      return { status: 200, text: listBody('keys', page.keysJson, page.nextToken) }
    },
    needsKey,
  )
  http.route(
    'PUT',
    '/v1/apikeys/:id',
    async (request) => ({
      status: 200,
      json: await updateApiKey(server.domain, callContext(request), request.params.id, jsonBody(request)),
    }),
    needsKey,
  )
  http.route(
    'DELETE',
    '/v1/apikeys/:id',
    async (request) => {
      await deleteApiKey(server.domain, callContext(request), request.params.id)
      return { status: 204 }
    },
    needsKey,
  )
}
