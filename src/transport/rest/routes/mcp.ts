import { MEMORY_REQUEST_BYTES } from '../../../validation/request-limits.js'
import { Component } from '../openapi/operation.js'
import type { RestRoute } from '../rest-route.js'

/** The headers the MCP SDK's transport reads besides the ones every route copies, and the Origin check's. */
const MCP_READ_HEADERS = ['accept', 'mcp-protocol-version', 'mcp-session-id', 'x-api-key', 'origin', 'host'] as const

/**
 * The endpoint and the MCP SDK beneath it, loaded on the first call: the SDK builds its
 * protocol schemas (zod) as it loads, which every start paid for, and most servers never
 * see an MCP client.
 */
let endpointModule: Promise<typeof import('../../mcp/mcp-endpoint.js')> | undefined

/** MCP's envelope (JSON-RPC 2.0); what goes inside is MCP's own specification. */
const JSON_RPC_REQUEST = Component.written('JsonRpcRequest', {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'] },
    method: { type: 'string' },
    params: { type: 'object' },
  },
})

const JSON_RPC_RESPONSE = Component.written('JsonRpcResponse', {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    result: { type: 'object' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
})

/**
 * The MCP endpoint (src/transport/mcp) on the REST port. Its key is checked before its body is
 * read, as on every REST route; MCP clients may send it as `x-api-key` instead of Authorization.
 * Only POST: the server is stateless, so GET (an SSE stream) and DELETE (a session) answer 405.
 */
export const MCP_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/mcp',
    needsApiKey: true,
    // add_memory carries one memory's content.
    maxBodyBytes: MEMORY_REQUEST_BYTES,
    readHeaders: MCP_READ_HEADERS,
    apiKeyHeader: 'x-api-key',
    transport: 'mcp',
    openapi: {
      operationId: 'mcp',
      tag: 'mcp',
      summary: 'Model Context Protocol endpoint (streamable HTTP, stateless)',
      description:
        'JSON-RPC 2.0 messages of MCP; tools retrieve and store memories. The key may come as `x-api-key` or as a Bearer token.',
      body: JSON_RPC_REQUEST,
      answers: {
        200: {
          description: 'A JSON-RPC response, as JSON or as one SSE event, as Accept allows.',
          content: { 'application/json': JSON_RPC_RESPONSE, 'text/event-stream': { type: 'string' } },
        },
        202: { description: 'A notification was accepted; no body.' },
      },
      examples: [
        {
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          headers: { accept: 'application/json, text/event-stream' },
        },
      ],
      exampleStatus: 200,
    },
    handle: async (request, { server, metrics }) => {
      endpointModule ??= import('../../mcp/mcp-endpoint.js')
      return (await endpointModule).serveMcp({ server, toolDuration: metrics.mcpToolDuration }, request)
    },
  },
]
