import type { ServerContext } from '../../../domain/context.js'
import { getSystemInfo, initializeSystem } from '../../../domain/system.js'
import type { HttpServer } from '../http-server.js'

export function registerSystemRoutes(http: HttpServer, server: ServerContext): void {
  http.route('GET', '/v1/system/info', async () => ({ status: 200, json: await getSystemInfo(server) }))
  http.route('POST', '/v1/system/init', async () => ({ status: 200, json: await initializeSystem(server.domain) }))
}
