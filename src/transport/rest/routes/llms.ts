import type { DomainContext } from '../../../domain/context.js'
import { createLlm, deleteLlm, getLlm, listLlms, updateLlm } from '../../../domain/llms.js'
import type { HttpServer } from '../http-server.js'
import { requestProbe } from '../../../domain/probes.js'
import { callContext, customMethodTarget, jsonBody, listQuery } from '../request-input.js'

export function registerLlmRoutes(http: HttpServer, context: DomainContext): void {
  const work = { isWork: true, needsApiKey: true }
  http.route('POST', '/v1/llms', async (request) => {
    const created = await createLlm(context, callContext(request), jsonBody(request))
    return { status: 201, headers: { location: `/v1/llms/${created.llmId}` }, json: created }
  }, work)
  http.route('GET', '/v1/llms', async (request) => ({
    status: 200,
    json: await listLlms(context, callContext(request), listQuery(request)),
  }), work)
  http.route('GET', '/v1/llms/:id', async (request) => ({
    status: 200,
    json: await getLlm(context, callContext(request), request.params.id),
  }), work)
  http.route('PUT', '/v1/llms/:id', async (request) => ({
    status: 200,
    json: await updateLlm(context, callContext(request), request.params.id, jsonBody(request)),
  }), work)
  http.route('DELETE', '/v1/llms/:id', async (request) => {
    await deleteLlm(context, callContext(request), request.params.id)
    return { status: 204 }
  }, work)
  // Re-runs the connectivity probe: POST /v1/llms/{id}:probe → 202 with the job id.
  http.route('POST', '/v1/llms/:id', async (request) => ({
    status: 202,
    json: await requestProbe(context, callContext(request), 'LLM', customMethodTarget(request, 'probe')),
  }), work)
}
