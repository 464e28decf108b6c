import type { ServerContext } from '../../../domain/context.js'
import { createLlm, deleteLlm, getLlm, listLlms, updateLlm } from '../../../domain/llms.js'
import type { HttpServer } from '../http-server.js'
import { requestProbe } from '../../../domain/probes.js'
import { callContext, customMethodTarget, jsonBody, listQuery } from '../request-input.js'

export function registerLlmRoutes(http: HttpServer, server: ServerContext): void {
  const needsKey = { needsApiKey: true }
  http.route('POST', '/v1/llms', async (request) => {
    const created = await createLlm(server.domain, callContext(request), jsonBody(request))
    return { status: 201, headers: { location: `/v1/llms/${created.llmId}` }, json: created }
  }, needsKey)
  http.route('GET', '/v1/llms', async (request) => ({
    status: 200,
    json: await listLlms(server.domain, callContext(request), listQuery(request)),
  }), needsKey)
  http.route('GET', '/v1/llms/:id', async (request) => ({
    status: 200,
    json: await getLlm(server.domain, callContext(request), request.params.id),
  }), needsKey)
  http.route('PUT', '/v1/llms/:id', async (request) => ({
    status: 200,
    json: await updateLlm(server.domain, callContext(request), request.params.id, jsonBody(request)),
  }), needsKey)
  http.route('DELETE', '/v1/llms/:id', async (request) => {
    await deleteLlm(server.domain, callContext(request), request.params.id)
    return { status: 204 }
  }, needsKey)
  // Re-runs the connectivity probe: POST /v1/llms/{id}:probe → 202 with the job id.
  http.route('POST', '/v1/llms/:id', async (request) => ({
    status: 202,
    json: await requestProbe(server.domain, callContext(request), 'LLM', customMethodTarget(request, 'probe')),
  }), needsKey)
}
