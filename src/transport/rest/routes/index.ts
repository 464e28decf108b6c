import type { ServerConfig } from '../../../config/server-config.js'
import type { ServerContext } from '../../../domain/context.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import type { HttpServer } from '../http-server.js'
import type { RestRoute, RouteDeps } from '../rest-route.js'
import { ADMIN_ROUTES } from './admin.js'
import { API_KEY_ROUTES } from './api-keys.js'
import { CONSOLE_ROUTES } from './console.js'
import { EMBEDDER_ROUTES } from './embedders.js'
import { LLM_ROUTES } from './llms.js'
import { MCP_ROUTES } from './mcp.js'
import { MEMORY_ROUTES } from './memories.js'
import { openApiRoute } from './openapi.js'
import { OPERATIONS_ROUTES } from './operations.js'
import { RERANKER_ROUTES } from './rerankers.js'
import { SPACE_TRANSFER_ROUTES } from './space-transfer.js'
import { SPACE_ROUTES } from './spaces.js'
import { SYSTEM_ROUTES } from './system.js'
import { USER_ROUTES } from './users.js'

/**
 * Every REST route, in the order they are registered and their examples run (a later example
 * uses what an earlier one created; see ExamplePhase in openapi/operation.ts).
 */
export const REST_ROUTES: readonly RestRoute[] = [
  ...OPERATIONS_ROUTES,
  openApiRoute(() => REST_ROUTES),
  ...SYSTEM_ROUTES,
  ...USER_ROUTES,
  ...API_KEY_ROUTES,
  ...EMBEDDER_ROUTES,
  ...LLM_ROUTES,
  ...RERANKER_ROUTES,
  ...SPACE_ROUTES,
  ...MEMORY_ROUTES,
  ...SPACE_TRANSFER_ROUTES,
  ...MCP_ROUTES,
  ...CONSOLE_ROUTES,
  ...ADMIN_ROUTES,
]

export function registerRestRoutes(
  http: HttpServer,
  server: ServerContext,
  metrics: ServerMetrics,
  config: ServerConfig,
): void {
  const deps: RouteDeps = { server, metrics, config }
  for (const route of REST_ROUTES)
    http.route(route.method, route.pattern, (request) => route.handle(request, deps), route)
  http.finishRoutes()
}
