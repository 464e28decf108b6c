import type { ServerConfig } from '../../../config/server-config.js'
import type { ServerContext } from '../../../domain/context.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import type { HttpServer } from '../http-server.js'
import { registerAdminRoutes } from './admin.js'
import { registerApiKeyRoutes } from './api-keys.js'
import { registerEmbedderRoutes } from './embedders.js'
import { registerLlmRoutes } from './llms.js'
import { registerMemoryRoutes } from './memories.js'
import { registerSpaceRoutes } from './spaces.js'
import { registerConsoleRoutes } from './console.js'
import { registerMcpRoutes } from './mcp.js'
import { registerOperationsRoutes } from './operations.js'
import { registerSystemRoutes } from './system.js'
import { registerUserRoutes } from './users.js'

export function registerRestRoutes(http: HttpServer, server: ServerContext, metrics: ServerMetrics, config: ServerConfig): void {
  registerOperationsRoutes(http, server.facts.lifecycle, metrics, config)
  registerSystemRoutes(http, server)
  registerUserRoutes(http, server)
  registerApiKeyRoutes(http, server)
  registerEmbedderRoutes(http, server)
  registerLlmRoutes(http, server)
  registerSpaceRoutes(http, server)
  registerMemoryRoutes(http, server)
  registerAdminRoutes(http, server)
  registerMcpRoutes(http, server, metrics)
  registerConsoleRoutes(http)
  http.finishRoutes()
}
