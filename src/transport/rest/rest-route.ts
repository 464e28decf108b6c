import type { ServerConfig } from '../../config/server-config.js'
import type { ServerContext } from '../../domain/context.js'
import type { ServerMetrics } from '../../observability/metrics.js'
import type { HttpMethod, RouteOptions } from './http-server.js'
import type { Operation } from './openapi/operation.js'
import type { RestRequest, RestResponse } from './rest-messages.js'

/** What the handlers use of the server they are registered on. */
export interface RouteDeps {
  server: ServerContext
  metrics: ServerMetrics
  config: ServerConfig
}

/**
 * One REST route, described once: how it is served (the options) and what the OpenAPI document
 * says of it. routes/index.ts lists them; the server registers that list and the document
 * (openapi/generate.ts) is generated from it, so neither can name a route the other lacks.
 */
export interface RestRoute extends RouteOptions {
  method: HttpMethod
  /** The uWS pattern, with `:name` parameters. */
  pattern: string
  /** One operation, or one per custom method a `POST …/:id` route serves. */
  openapi: Operation | Operation[]
  handle(request: RestRequest, deps: RouteDeps): Promise<RestResponse> | RestResponse
}
