import type { DomainContext } from '../../../domain/context.js'
import { getSystemInfo, initializeSystem } from '../../../domain/system.js'
import type { HttpServer } from '../http-server.js'

export function registerSystemRoutes(http: HttpServer, context: DomainContext): void {
  const work = { isWork: true }
  http.route('GET', '/v1/system/info', async () => ({ status: 200, json: await getSystemInfo(context) }), work)
  http.route('POST', '/v1/system/init', async () => ({ status: 200, json: await initializeSystem(context) }), work)
}
