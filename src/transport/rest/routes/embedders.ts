import type { ServerContext } from '../../../domain/context.js'
import { createEmbedder, deleteEmbedder, getEmbedder, listEmbedders, updateEmbedder } from '../../../domain/embedders.js'
import type { HttpServer } from '../http-server.js'
import { requestProbe } from '../../../domain/probes.js'
import { callContext, customMethodTarget, jsonBody, listQuery } from '../request-input.js'

export function registerEmbedderRoutes(http: HttpServer, server: ServerContext): void {
  const needsKey = { needsApiKey: true }
  http.route('POST', '/v1/embedders', async (request) => {
    const created = await createEmbedder(server.domain, callContext(request), jsonBody(request))
    return { status: 201, headers: { location: `/v1/embedders/${created.embedderId}` }, json: created }
  }, needsKey)
  http.route('GET', '/v1/embedders', async (request) => ({
    status: 200,
    json: await listEmbedders(server.domain, callContext(request), listQuery(request)),
  }), needsKey)
  http.route('GET', '/v1/embedders/:id', async (request) => ({
    status: 200,
    json: await getEmbedder(server.domain, callContext(request), request.params.id),
  }), needsKey)
  http.route('PUT', '/v1/embedders/:id', async (request) => ({
    status: 200,
    json: await updateEmbedder(server.domain, callContext(request), request.params.id, jsonBody(request)),
  }), needsKey)
  http.route('DELETE', '/v1/embedders/:id', async (request) => {
    await deleteEmbedder(server.domain, callContext(request), request.params.id)
    return { status: 204 }
  }, needsKey)
  // Re-runs the connectivity probe: POST /v1/embedders/{id}:probe → 202 with the job id.
  http.route('POST', '/v1/embedders/:id', async (request) => ({
    status: 202,
    json: await requestProbe(server.domain, callContext(request), 'EMBEDDER', customMethodTarget(request, 'probe')),
  }), needsKey)
}
