import type { ServerConfig } from '../../../config/server-config.js'
import type { ServerContext } from '../../../domain/context.js'
import { embedderUseCases } from '../../../domain/embedders.js'
import { llmUseCases } from '../../../domain/llms.js'
import { rerankerUseCases } from '../../../domain/rerankers.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import type { HttpServer } from '../http-server.js'
import { registerAdminRoutes } from './admin.js'
import { registerApiKeyRoutes } from './api-keys.js'
import { registerConsoleRoutes } from './console.js'
import { registerMcpRoutes } from './mcp.js'
import { registerMemoryRoutes } from './memories.js'
import { registerOpenApiRoute } from './openapi.js'
import { registerOperationsRoutes } from './operations.js'
import { registerRegistrationRoutes } from './registrations.js'
import { registerSpaceRoutes } from './spaces.js'
import { registerSystemRoutes } from './system.js'
import { registerUserRoutes } from './users.js'

export function registerRestRoutes(
  http: HttpServer,
  server: ServerContext,
  metrics: ServerMetrics,
  config: ServerConfig,
): void {
  registerOperationsRoutes(http, server.facts.lifecycle, metrics, config)
  registerSystemRoutes(http, server)
  registerOpenApiRoute(http)
  registerUserRoutes(http, server)
  registerApiKeyRoutes(http, server)
  registerRegistrationRoutes(http, server, embedderUseCases)
  registerRegistrationRoutes(http, server, llmUseCases)
  registerRegistrationRoutes(http, server, rerankerUseCases)
  registerSpaceRoutes(http, server)
  registerMemoryRoutes(http, server)
  registerAdminRoutes(http, server)
  registerMcpRoutes(http, server, metrics)
  registerConsoleRoutes(http)
  http.finishRoutes()
}
