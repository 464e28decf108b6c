import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import type { ZodType } from 'zod/v4'
import type { CallContext } from '../../domain/call-context.js'
import type { ServerContext } from '../../domain/context.js'
import { AppError, toAppError } from '../../errors/app-error.js'
import type { SeriesHistogram } from '../../observability/series-histogram.js'
import { parsedJson } from '../rest/request-input.js'
import { errorBody, type RestRequest, type RestResponse } from '../rest/rest-messages.js'
import { echoed, invalidBody, invalidParams, JsonRpcError, type JsonRpcErrorObject } from './json-rpc-errors.js'
import { ZodJsonSchemaValidator } from './json-schema-validator.js'
import { MCP_TOOLS, type McpTool } from './mcp-tools.js'

/**
 * POST /mcp: the MCP Streamable HTTP transport, served by the official SDK's
 * Server and its Web-standard transport in stateless mode with JSON answers. Stateless, a
 * request carries everything it needs (the key, the JSON-RPC messages): each one gets its own
 * Server and transport, nothing is kept between requests, and any memsvc process behind a
 * load balancer can answer any request. There is no session, so no SSE stream to GET and no
 * session to DELETE (both answer 405).
 */

/** JSON-RPC 2.0's codes for a body that is not JSON, and for a refusal of the server's own. */
const JSONRPC_PARSE_ERROR = -32700
const JSONRPC_SERVER_ERROR = -32000

/**
 * The SDK reads the request's URL only to hand it to handlers, which do not use it: a fixed one
 * keeps a client's Host header out of it.
 */
const ENDPOINT_URL = 'http://localhost/mcp'

const INSTRUCTIONS =
  'memsvc stores text as memories in spaces and finds them again by meaning. Typical use: list_spaces to find a spaceId ' +
  '(or list_embedders then create_space); add_memory to store text (it is indexed in the background: get_ingestion_status ' +
  'says when it is COMPLETED); retrieve_memories to find what is relevant to a message. Errors come back as tool results ' +
  "with the service's error (code, status, message naming the field at fault)."

const NANOSECONDS_PER_SECOND = 1e9

/** What the endpoint serves with: the server's context and where tool calls are timed. */
export interface McpEndpoint {
  server: ServerContext
  toolDuration: SeriesHistogram<'tool' | 'status'>
}

const TOOL_LIST: Tool[] = MCP_TOOLS.map(({ name, description, inputSchema, annotations }) => ({
  name,
  description,
  inputSchema,
  annotations,
}))
const TOOLS_BY_NAME = new Map<string, McpTool>(MCP_TOOLS.map((tool) => [tool.name, tool]))

/**
 * The requests this server answers, each with the SDK schema its handler parses it by: initialize and
 * ping are answered by the SDK itself, the tools by mcpServer. A request for any other method is
 * answered -32601 before the SDK sees it, so a handler added without its entry here fails at once.
 */
const ANSWERED_REQUESTS = new Map<string, ZodType>(
  [InitializeRequestSchema, PingRequestSchema, ListToolsRequestSchema, CallToolRequestSchema].map((schema) => [
    schema.shape.method.value,
    schema,
  ]),
)

export async function serveMcp(endpoint: McpEndpoint, request: RestRequest): Promise<RestResponse> {
  const refusal = crossOriginRefusal(request.headers)
  if (refusal) return jsonRpcError(refusal, request.requestId)
  let body: unknown
  try {
    body = parsedJson(request)
  } catch (error) {
    if (error instanceof AppError) return jsonRpcError(error, request.requestId)
    throw error
  }
  const call: CallContext = {
    requestId: request.requestId,
    transport: 'mcp',
    authorization: request.headers.authorization,
    principal: request.principal,
    // An agent that disconnects also stops the LLM or rerank call a retrieve_memories tool started.
    signal: request.cancellation(),
  }
  const mcp = mcpServer(endpoint, call)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await mcp.connect(transport)
  refuseMalformedRequests(transport)
  try {
    const response = await transport.handleRequest(
      new Request(ENDPOINT_URL, { method: 'POST', headers: request.headers }),
      { parsedBody: body },
    )
    // The transport answers a body that is JSON but no JSON-RPC message -32700, which JSON-RPC keeps for
    // text that is not JSON (answered above), and an empty batch 202, as if it held only notifications.
    // Its refusals of the HTTP request itself (406, 415) come first and stand.
    const bodyRefusal = response.status === 400 || response.status === 202 ? invalidBody(body) : undefined
    if (bodyRefusal) return { status: 400, json: { jsonrpc: '2.0', id: null, error: bodyRefusal } }
    return await restResponse(response)
  } finally {
    await mcp.close()
  }
}

/**
 * Answers a request for a method this server does not answer (-32601, naming it) or whose params the
 * method's schema refuses (-32602, naming the field) before the SDK dispatches it: the SDK would answer
 * the latter -32603, an internal error, with zod's issue list as the message.
 */
function refuseMalformedRequests(transport: Transport): void {
  const dispatch = transport.onmessage
  transport.onmessage = (message, extra) => {
    if (!isJSONRPCRequest(message)) return dispatch?.(message, extra)
    const refusal = requestRefusal(message)
    if (refusal === undefined) return dispatch?.(message, extra)
    // Sent as the SDK sends a handler's error: the transport answers once every request in the body has its answer.
    transport
      .send({ jsonrpc: '2.0', id: message.id, error: refusal })
      .catch((error: unknown) => transport.onerror?.(error as Error))
  }
}

function requestRefusal(request: JSONRPCRequest): JsonRpcErrorObject | undefined {
  const schema = ANSWERED_REQUESTS.get(request.method)
  if (schema) return invalidParams(request, schema)
  const answered = [...ANSWERED_REQUESTS.keys()].join(', ')
  return {
    code: ErrorCode.MethodNotFound,
    message: `Method not found: ${JSON.stringify(echoed(request.method))} (this server answers ${answered})`,
  }
}

/** A Server for one request, its tools acting as the caller. */
function mcpServer(endpoint: McpEndpoint, call: CallContext): Server {
  const mcp = new Server(
    { name: 'memsvc', version: endpoint.server.facts.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: new ZodJsonSchemaValidator() },
  )
  mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }))
  mcp.setRequestHandler(CallToolRequestSchema, (toolCall) =>
    callTool(endpoint, call, toolCall.params.name, toolCall.params.arguments ?? {}),
  )
  return mcp
}

/**
 * Runs a tool. Its failure, invalid arguments included, is a tool result with isError, carrying the
 * REST API's error body (the same code, status, message and field details), so the model can read it
 * and correct itself; a tool that does not exist is a protocol error, -32602 (MCP specification
 * 2025-11-25, server/tools, "Error Handling": input validation errors are tool execution errors, an
 * unknown tool a protocol error). The SDK's McpServer answers both as tool results; this follows the
 * specification.
 */
async function callTool(
  endpoint: McpEndpoint,
  call: CallContext,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const tool = TOOLS_BY_NAME.get(name)
  if (!tool) {
    const message = `Unknown tool: ${JSON.stringify(echoed(name))} (tools/list names the tools)`
    throw new JsonRpcError(ErrorCode.InvalidParams, message, {
      details: [{ field: 'params.name', description: 'names no tool this server has' }],
    })
  }
  const started = process.hrtime.bigint()
  const observe = (status: string) =>
    endpoint.toolDuration
      .series({ tool: name, status })
      .observe(Number(process.hrtime.bigint() - started) / NANOSECONDS_PER_SECOND)
  try {
    const value = (await tool.run(endpoint.server.domain, call, args)) as Record<string, unknown>
    observe('OK')
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value }
  } catch (error) {
    const appError = toolError(endpoint.server, call, name, error)
    observe(appError.code)
    const body = errorBody(appError, call.requestId) as Record<string, unknown>
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body }
  }
}

/** The error to answer; one that is not the caller's or the database's doing is logged here and answered as INTERNAL. */
function toolError(server: ServerContext, call: CallContext, tool: string, error: unknown): AppError {
  const appError = toAppError(error)
  if (appError.code === 'INTERNAL') {
    server.facts.log.error('MCP tool failed', {
      requestId: call.requestId,
      transport: call.transport,
      tool,
      error:
        error instanceof Error ? `${error.name}: ${error.message}` : `non-error value of type ${typeof error} thrown`,
      stack: (error as Error | undefined)?.stack,
    })
  }
  return appError
}

/**
 * DNS-rebinding and cross-site protection (MCP specification, transports: servers must check
 * Origin). A browser names the page's origin on every cross-origin POST; a page on another origin
 * (a rebinding attacker's included) never has this server's host, so anything but the server's
 * own origin is refused. Clients that are not browsers send no Origin.
 */
function crossOriginRefusal(headers: Record<string, string>): AppError | undefined {
  const origin = headers.origin
  if (origin === undefined) return undefined
  const refusal = new AppError(
    'PERMISSION_DENIED',
    `origin ${JSON.stringify(origin.slice(0, 200))} may not call /mcp; only the server's own origin may`,
  )
  let originUrl: URL
  try {
    originUrl = new URL(origin)
  } catch {
    return refusal
  }
  const host = headers.host
  if (host === undefined) return refusal
  let ownHost: string
  try {
    // Normalised as the origin is (lower case, no default port for its scheme).
    ownHost = new URL(`${originUrl.protocol}//${host}`).host
  } catch {
    return refusal
  }
  return originUrl.host === ownHost ? undefined : refusal
}

/** A refusal before the SDK saw the request, written as JSON-RPC (the SDK answers its own refusals so). */
function jsonRpcError(error: AppError, requestId: string): RestResponse {
  const code = error.code === 'INVALID_ARGUMENT' ? JSONRPC_PARSE_ERROR : JSONRPC_SERVER_ERROR
  return {
    status: error.httpStatus,
    json: {
      jsonrpc: '2.0',
      id: null,
      error: { code, message: error.message, data: { status: error.code, details: error.details, requestId } },
    },
  }
}

async function restResponse(response: Response): Promise<RestResponse> {
  const text = await response.text()
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (name !== 'content-type') headers[name] = value
  })
  return { status: response.status, headers, text, contentType: response.headers.get('content-type') ?? undefined }
}
