import type { ServerContext } from '../../../domain/context.js'
import { requestProbe } from '../../../domain/probes.js'
import type { RegistryUseCases } from '../../../domain/registration-use-cases.js'
import type { HttpServer } from '../http-server.js'
import { callContext, customMethodTarget, jsonBody, listQuery } from '../request-input.js'

/**
 * The routes of one registry kind (embedders, LLMs, rerankers): create, list, get,
 * update, delete and the probe custom method, the same for every kind.
 */
export function registerRegistrationRoutes<Item, Collection extends string>(
  http: HttpServer,
  server: ServerContext,
  kind: RegistryUseCases<Item, Collection>,
): void {
  const needsKey = { needsApiKey: true }
  const collection = `/v1/${kind.collection}`
  http.route(
    'POST',
    collection,
    async (request) => {
      const created = await kind.create(server.domain, callContext(request), jsonBody(request))
      return { status: 201, headers: { location: `${collection}/${kind.idOf(created)}` }, json: created }
    },
    needsKey,
  )
  http.route(
    'GET',
    collection,
    async (request) => ({
      status: 200,
      json: await kind.list(server.domain, callContext(request), listQuery(request)),
    }),
    needsKey,
  )
  http.route(
    'GET',
    `${collection}/:id`,
    async (request) => ({
      status: 200,
      json: await kind.get(server.domain, callContext(request), request.params.id),
    }),
    needsKey,
  )
  http.route(
    'PUT',
    `${collection}/:id`,
    async (request) => ({
      status: 200,
      json: await kind.update(server.domain, callContext(request), request.params.id, jsonBody(request)),
    }),
    needsKey,
  )
  http.route(
    'DELETE',
    `${collection}/:id`,
    async (request) => {
      await kind.delete(server.domain, callContext(request), request.params.id)
      return { status: 204 }
    },
    needsKey,
  )
  // Re-runs the connectivity probe: POST /v1/{collection}/{id}:probe → 202 with the job id.
  http.route(
    'POST',
    `${collection}/:id`,
    async (request) => ({
      status: 202,
      json: await requestProbe(
        server.domain,
        callContext(request),
        kind.resource,
        customMethodTarget(request, 'probe'),
      ),
    }),
    needsKey,
  )
}
