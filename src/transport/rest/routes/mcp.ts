import type { ServerContext } from '../../../domain/context.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import { MCP_READ_HEADERS, serveMcp } from '../../mcp/mcp-endpoint.js'
import type { HttpServer } from '../http-server.js'

/**
 * The MCP endpoint (src/transport/mcp) on the REST port. Its key is checked before its body is
 * read, as on every REST route; MCP clients may send it as `x-api-key` instead of Authorization.
 * Only POST: the server is stateless, so GET (an SSE stream) and DELETE (a session) answer 405.
 */
export function registerMcpRoutes(http: HttpServer, server: ServerContext, metrics: ServerMetrics): void {
  const endpoint = { server, toolDuration: metrics.mcpToolDuration }
  http.route('POST', '/mcp', (request) => serveMcp(endpoint, request), {
    needsApiKey: true,
    readHeaders: MCP_READ_HEADERS,
    apiKeyHeader: 'x-api-key',
    transport: 'mcp',
  })
}
