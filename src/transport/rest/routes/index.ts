import type { ServerConfig } from '../../../config/server-config.js'
import type { DomainContext } from '../../../domain/context.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import type { HttpServer } from '../http-server.js'
import { registerAdminRoutes } from './admin.js'
import { registerApiKeyRoutes } from './api-keys.js'
import { registerEmbedderRoutes } from './embedders.js'
import { registerLlmRoutes } from './llms.js'
import { registerConsoleRoutes } from './console.js'
import { registerOperationsRoutes } from './operations.js'
import { registerSystemRoutes } from './system.js'
import { registerUserRoutes } from './users.js'

export function registerRestRoutes(http: HttpServer, context: DomainContext, metrics: ServerMetrics, config: ServerConfig): void {
  registerOperationsRoutes(http, context.lifecycle, metrics, config)
  registerSystemRoutes(http, context)
  registerUserRoutes(http, context)
  registerApiKeyRoutes(http, context)
  registerEmbedderRoutes(http, context)
  registerLlmRoutes(http, context)
  registerAdminRoutes(http, context)
  registerConsoleRoutes(http)
  http.finishRoutes()
}
