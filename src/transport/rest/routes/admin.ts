import type { ServerContext } from '../../../domain/context.js'
import { drainServer } from '../../../domain/drain.js'
import type { HttpServer } from '../http-server.js'
import { callContext, jsonBody } from '../request-input.js'

export function registerAdminRoutes(http: HttpServer, server: ServerContext): void {
  http.route(
    'POST',
    '/v1/admin:drain',
    async (request) => ({
      status: 200,
      json: await drainServer(server.domain, callContext(request), jsonBody(request)),
    }),
    { needsApiKey: true, drainExempt: 'drain-control' },
  )
}
