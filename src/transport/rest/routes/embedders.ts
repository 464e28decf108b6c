import type { DomainContext } from '../../../domain/context.js'
import { createEmbedder, deleteEmbedder, getEmbedder, listEmbedders, updateEmbedder } from '../../../domain/embedders.js'
import type { HttpServer } from '../http-server.js'
import { requestProbe } from '../../../domain/probes.js'
import { callContext, customMethodTarget, jsonBody, listQuery } from '../request-input.js'

export function registerEmbedderRoutes(http: HttpServer, context: DomainContext): void {
  const work = { isWork: true, needsApiKey: true }
  http.route('POST', '/v1/embedders', async (request) => {
    const created = await createEmbedder(context, callContext(request), jsonBody(request))
    return { status: 201, headers: { location: `/v1/embedders/${created.embedderId}` }, json: created }
  }, work)
  http.route('GET', '/v1/embedders', async (request) => ({
    status: 200,
    json: await listEmbedders(context, callContext(request), listQuery(request)),
  }), work)
  http.route('GET', '/v1/embedders/:id', async (request) => ({
    status: 200,
    json: await getEmbedder(context, callContext(request), request.params.id),
  }), work)
  http.route('PUT', '/v1/embedders/:id', async (request) => ({
    status: 200,
    json: await updateEmbedder(context, callContext(request), request.params.id, jsonBody(request)),
  }), work)
  http.route('DELETE', '/v1/embedders/:id', async (request) => {
    await deleteEmbedder(context, callContext(request), request.params.id)
    return { status: 204 }
  }, work)
  // Re-runs the connectivity probe: POST /v1/embedders/{id}:probe → 202 with the job id.
  http.route('POST', '/v1/embedders/:id', async (request) => ({
    status: 202,
    json: await requestProbe(context, callContext(request), 'EMBEDDER', customMethodTarget(request, 'probe')),
  }), work)
}
