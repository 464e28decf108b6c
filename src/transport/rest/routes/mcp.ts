import type { ServerContext } from '../../../domain/context.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import { MEMORY_REQUEST_BYTES } from '../../../validation/request-limits.js'
import type { HttpServer } from '../http-server.js'

/** The headers the MCP SDK's transport reads besides the ones every route copies, and the Origin check's. */
const MCP_READ_HEADERS = ['accept', 'mcp-protocol-version', 'mcp-session-id', 'x-api-key', 'origin', 'host'] as const

/**
 * The endpoint and the MCP SDK beneath it, loaded on the first call: the SDK builds its
 * protocol schemas (zod) as it loads, which every start paid for, and most servers never
 * see an MCP client.
 */
let endpointModule: Promise<typeof import('../../mcp/mcp-endpoint.js')> | undefined

/**
 * The MCP endpoint (src/transport/mcp) on the REST port. Its key is checked before its body is
 * read, as on every REST route; MCP clients may send it as `x-api-key` instead of Authorization.
 * Only POST: the server is stateless, so GET (an SSE stream) and DELETE (a session) answer 405.
 */
export function registerMcpRoutes(http: HttpServer, server: ServerContext, metrics: ServerMetrics): void {
  const endpoint = { server, toolDuration: metrics.mcpToolDuration }
  http.route(
    'POST',
    '/mcp',
    async (request) => {
      endpointModule ??= import('../../mcp/mcp-endpoint.js')
      return (await endpointModule).serveMcp(endpoint, request)
    },
    {
      needsApiKey: true,
      // add_memory carries one memory's content.
      maxBodyBytes: MEMORY_REQUEST_BYTES,
      readHeaders: MCP_READ_HEADERS,
      apiKeyHeader: 'x-api-key',
      transport: 'mcp',
    },
  )
}
