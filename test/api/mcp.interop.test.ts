// MCP interoperability: the official SDK client (Client over StreamableHTTPClientTransport) drives
// every tool the server lists, with valid and with invalid arguments, and every error answered is the
// one JSON-RPC 2.0 or the MCP specification (2025-11-25, server/tools, "Error Handling") names: an
// unknown tool or a malformed tools/call is the protocol error -32602, invalid tool arguments are a
// tool result with isError. What the SDK client cannot send (a tools/call without params.name, text
// that is not JSON, JSON that is no JSON-RPC message, a method MCP does not define) goes as raw
// JSON-RPC. The protocol does not depend on the database, and the other MCP suites run on both
// engines, so this one runs on the first engine configured.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  CallToolResultSchema,
  EmptyResultSchema,
  ErrorCode,
  ListToolsResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { connectMcp, type McpSession } from '../support/mcp-client.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

const engine = ENGINES[0]!
const MISSING_ID = '7f4f1c2e-3b7a-4d47-9a55-2f1f0f5b9c11'
const REMEMBERED_TEXT = 'The quarterly report is due on the first Friday of April.'

type Answer = any

/** How one tool is driven: a call the fixture makes meaningful, and a call it refuses by naming a field. */
interface ToolCase {
  validArguments(): Record<string, unknown>
  expectValidAnswer(answer: Answer): void
  invalidArguments: Record<string, unknown>
  fieldAtFault: string
}

/** Raw JSON-RPC the SDK client would not send, and the answer JSON-RPC 2.0 or MCP names for it. */
interface RawCase {
  sent: string
  body: string
  httpStatus: number
  /** The request's id for a message the server dispatched; null for a body refused whole (Streamable HTTP). */
  id: number | null
  code: number
  message: RegExp
}

const request = (method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) })

const RAW_CASES: RawCase[] = [
  {
    sent: 'a tools/call without params.name',
    body: request('tools/call', { arguments: {} }),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.InvalidParams,
    message: /^params\.name: is required$/,
  },
  {
    sent: 'a tools/call without params',
    body: request('tools/call'),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.InvalidParams,
    message: /^params: is required$/,
  },
  {
    sent: 'a tools/call whose name is not a string',
    body: request('tools/call', { name: 7 }),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.InvalidParams,
    message: /^params\.name: must be a string$/,
  },
  {
    sent: 'a tools/call of an unknown tool',
    body: request('tools/call', { name: 'no_such_tool', arguments: {} }),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.InvalidParams,
    message: /^Unknown tool: "no_such_tool" \(tools\/list names the tools\)$/,
  },
  {
    sent: 'an initialize without params',
    body: request('initialize'),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.InvalidParams,
    message: /^params: is required$/,
  },
  {
    sent: 'an initialize with ill-typed params',
    body: request('initialize', { protocolVersion: 20251125 }),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.InvalidParams,
    message: /^params\.protocolVersion: must be a string \(and 2 more\)$/,
  },
  {
    sent: 'a ping whose params are an array',
    body: request('ping', []),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidParams,
    message: /^params: must be an object$/,
  },
  {
    sent: 'a tools/list whose params._meta is not an object',
    body: request('tools/list', { _meta: 5 }),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidParams,
    message: /^params\._meta: must be an object$/,
  },
  {
    sent: 'a method MCP does not define',
    body: request('memories/forget'),
    httpStatus: 200,
    id: 1,
    code: ErrorCode.MethodNotFound,
    message:
      /^Method not found: "memories\/forget" \(this server answers initialize, ping, tools\/list, tools\/call\)$/,
  },
  {
    sent: 'text that is not JSON',
    body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    httpStatus: 400,
    id: null,
    code: ErrorCode.ParseError,
    message: /^body: malformed JSON: /,
  },
  {
    sent: 'JSON that is no JSON-RPC message',
    body: '{"hello": "world"}',
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^jsonrpc: is required \(and 3 more\)$/,
  },
  {
    sent: 'a JSON-RPC 1.0 request',
    body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' }),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^jsonrpc: must be "2\.0"$/,
  },
  {
    sent: 'a request whose method is not a string',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 42 }),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^method: must be a string$/,
  },
  {
    sent: 'a request whose id is null',
    body: JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^id: must be a string or a number$/,
  },
  {
    sent: 'a request whose id is not an integer',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'ping' }),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^id: must be a string or an integer$/,
  },
  {
    sent: 'a request with a member JSON-RPC does not define',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', colour: 'red' }),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^colour: unknown field$/,
  },
  {
    sent: 'a request whose params are neither an object nor an array',
    body: request('ping', 3),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^params: must be an object$/,
  },
  {
    sent: 'a body that is a number',
    body: '5',
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^body: must be an object$/,
  },
  {
    sent: 'an empty batch',
    body: '[]',
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^body: is an empty batch$/,
  },
  {
    sent: 'a batch holding a malformed message',
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 42 },
    ]),
    httpStatus: 400,
    id: null,
    code: ErrorCode.InvalidRequest,
    message: /^\[1\]\.method: must be a string$/,
  },
]

/** MCP methods a server offers only with a capability this one does not declare. */
const UNOFFERED_METHODS: Array<[string, Record<string, unknown>]> = [
  ['resources/list', {}],
  ['resources/templates/list', {}],
  ['resources/read', { uri: 'memsvc://memories' }],
  ['prompts/list', {}],
  ['prompts/get', { name: 'summary' }],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'summary' }, argument: { name: 'a', value: 'b' } }],
  ['logging/setLevel', { level: 'info' }],
]

/** What the SDK client threw, or a failure when it resolved. */
async function rejection(promise: Promise<unknown>): Promise<McpError> {
  const outcome = await promise.then(
    (value) => ({ resolved: value }),
    (thrown: unknown) => ({ thrown }),
  )
  if ('resolved' in outcome) throw new Error(`expected an McpError, got ${JSON.stringify(outcome.resolved)}`)
  expect(outcome.thrown).toBeInstanceOf(McpError)
  return outcome.thrown as McpError
}

describe(`MCP interoperability through the official SDK client (${engine})`, () => {
  let fixture: MemoryFixture
  let session: McpSession
  let client: Client
  let listedTools: string[]
  let embedderId: string
  let spaceId: string
  let memoryId: string
  let disposableMemoryId: string

  const toolCases: Record<string, ToolCase> = {
    list_spaces: {
      validArguments: () => ({ maxResults: 10 }),
      expectValidAnswer: (answer) =>
        expect(answer.spaces.map((space: { spaceId: string }) => space.spaceId)).toContain(spaceId),
      invalidArguments: { maxResults: 0 },
      fieldAtFault: 'maxResults',
    },
    create_space: {
      validArguments: () => ({ name: 'created over MCP', spaceEmbedders: [{ embedderId }] }),
      expectValidAnswer: (answer) =>
        expect(answer).toMatchObject({ name: 'created over MCP', ownerId: fixture.alice.userId }),
      invalidArguments: { name: 'no such language', textSearchLanguage: 'klingon' },
      fieldAtFault: 'textSearchLanguage',
    },
    list_embedders: {
      validArguments: () => ({}),
      expectValidAnswer: (answer) =>
        expect(answer.embedders.map((embedder: { embedderId: string }) => embedder.embedderId)).toContain(embedderId),
      invalidArguments: { maxResults: 'ten' },
      fieldAtFault: 'maxResults',
    },
    add_memory: {
      validArguments: () => ({ spaceId, originalContent: 'Added through the MCP interop suite.' }),
      expectValidAnswer: (answer) => expect(answer).toMatchObject({ spaceId, processingStatus: 'PENDING' }),
      invalidArguments: { spaceId: 'not-a-uuid', originalContent: 'x' },
      fieldAtFault: 'spaceId',
    },
    get_memory: {
      validArguments: () => ({ memoryId, includeContent: true }),
      expectValidAnswer: (answer) => expect(answer).toMatchObject({ memoryId, originalContent: REMEMBERED_TEXT }),
      invalidArguments: { memoryId: MISSING_ID, includeContent: 'yes' },
      fieldAtFault: 'includeContent',
    },
    get_ingestion_status: {
      validArguments: () => ({ memoryId }),
      expectValidAnswer: (answer) => expect(answer).toEqual({ memoryId, processingStatus: 'COMPLETED', chunkCount: 1 }),
      invalidArguments: {},
      fieldAtFault: 'memoryId',
    },
    delete_memory: {
      validArguments: () => ({ memoryId: disposableMemoryId }),
      expectValidAnswer: (answer) => expect(answer).toEqual({ memoryId: disposableMemoryId, deleted: true }),
      invalidArguments: { memoryId: MISSING_ID, force: true },
      fieldAtFault: 'force',
    },
    update_memory: {
      validArguments: () => ({ memoryId, mergeMetadata: { reviewed: true } }),
      expectValidAnswer: (answer) =>
        expect(answer).toMatchObject({ memoryId, version: 2, metadata: { reviewed: true } }),
      invalidArguments: { memoryId: MISSING_ID, expectedVersion: 0, mergeMetadata: { reviewed: true } },
      fieldAtFault: 'expectedVersion',
    },
    memory_history: {
      validArguments: () => ({ memoryId }),
      expectValidAnswer: (answer) =>
        expect(answer.changes).toEqual([
          expect.objectContaining({ action: 'UPDATE', version: 2, fields: ['metadata'] }),
        ]),
      invalidArguments: { memoryId: 'not-a-uuid' },
      fieldAtFault: 'memoryId',
    },
    retrieve_memories: {
      validArguments: () => ({ message: 'when is the quarterly report due', spaceIds: [spaceId], requestedSize: 1 }),
      expectValidAnswer: (answer) =>
        expect(answer.chunks).toEqual([expect.objectContaining({ memoryId, chunkText: REMEMBERED_TEXT })]),
      invalidArguments: { message: 'x', spaceIds: [] },
      fieldAtFault: 'spaceIds',
    },
  }

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    const apiKey = fixture.alice.apiKey
    embedderId = await fixture.registerEmbedder(fixture.alice)
    const space = await fixture.call(
      'rest',
      'createSpace',
      { name: 'interop', spaceEmbedders: [{ embedderId }] },
      apiKey,
    )
    spaceId = space.body.spaceId
    const remembered = await fixture.call('rest', 'createMemory', { spaceId, originalContent: REMEMBERED_TEXT }, apiKey)
    memoryId = remembered.body.memoryId
    const disposable = await fixture.call('rest', 'createMemory', { spaceId, originalContent: 'to delete' }, apiKey)
    disposableMemoryId = disposable.body.memoryId
    await fixture.settled(memoryId)
    await fixture.settled(disposableMemoryId)
    session = await connectMcp(fixture.server.restUrl, apiKey)
    client = session.client
    listedTools = (await client.listTools()).tools.map((tool) => tool.name)
  })
  afterAll(async () => {
    await session?.close()
    await fixture?.stop()
  })

  /** The case for a listed tool; a tool added to the server without one fails here, by name. */
  function caseOf(tool: string): ToolCase {
    const toolCase = toolCases[tool]
    if (!toolCase) throw new Error(`tools/list names ${tool}, which has no case in this suite`)
    return toolCase
  }

  it('has a case for every tool tools/list names, and names every tool it has a case for', () => {
    expect([...listedTools].sort()).toEqual(Object.keys(toolCases).sort())
  })

  it('answers a valid call of every listed tool with its result', async () => {
    for (const tool of listedTools) {
      const toolCase = caseOf(tool)
      const result = await client.callTool({ name: tool, arguments: toolCase.validArguments() })
      expect(result.isError ?? false, `${tool}: ${JSON.stringify(result.content)}`).toBe(false)
      toolCase.expectValidAnswer(result.structuredContent)
    }
  })

  it('answers invalid arguments to every listed tool as a tool execution error naming the field', async () => {
    for (const tool of listedTools) {
      const { invalidArguments, fieldAtFault } = caseOf(tool)
      // Resolves: MCP 2025-11-25 makes input validation a tool execution error, which the model reads.
      const result = await client.callTool({ name: tool, arguments: invalidArguments })
      expect(result.isError, tool).toBe(true)
      const error = (result.structuredContent as Answer).error
      expect(error, tool).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
      expect(error.message, tool).toMatch(new RegExp(`^${fieldAtFault}: \\S`))
      expect(error.details[0].field, tool).toBe(fieldAtFault)
      const content = result.content as Array<{ type: string; text: string }>
      expect(JSON.parse(content[0]!.text), tool).toEqual(result.structuredContent)
    }
  })

  it('answers an unknown tool with the protocol error -32602', async () => {
    const error = await rejection(client.callTool({ name: 'no_such_tool', arguments: {} }))
    expect(error.code).toBe(ErrorCode.InvalidParams)
    expect(error.message).toBe('MCP error -32602: Unknown tool: "no_such_tool" (tools/list names the tools)')
    expect(error.data).toEqual({ details: [{ field: 'params.name', description: 'names no tool this server has' }] })
  })

  it('answers ill-typed tools/call and tools/list params from the SDK client with -32602 naming the field', async () => {
    const badArguments = await rejection(
      client.request(
        { method: 'tools/call', params: { name: 'list_spaces', arguments: ['maxResults', 1] } },
        CallToolResultSchema,
      ),
    )
    expect(badArguments.code).toBe(ErrorCode.InvalidParams)
    expect(badArguments.message).toBe('MCP error -32602: params.arguments: must be an object')
    const badCursor = await rejection(
      client.request({ method: 'tools/list', params: { cursor: 5 as unknown as string } }, ListToolsResultSchema),
    )
    expect(badCursor.code).toBe(ErrorCode.InvalidParams)
    expect(badCursor.message).toBe('MCP error -32602: params.cursor: must be a string')
  })

  it.each(UNOFFERED_METHODS)('answers %s, which this server does not offer, with -32601', async (method, params) => {
    const error = await rejection(client.request({ method, params }, EmptyResultSchema))
    expect(error.code).toBe(ErrorCode.MethodNotFound)
    expect(error.message).toContain(`Method not found: "${method}"`)
  })

  /** A raw POST /mcp, with the headers the Streamable HTTP transport asks for. */
  const post = (body: string) =>
    fetch(`${fixture.server.restUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fixture.alice.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body,
    })

  for (const { sent, body, httpStatus, id, code, message } of RAW_CASES) {
    it(`answers ${sent} with JSON-RPC ${code}`, async () => {
      const response = await post(body)
      expect(response.status).toBe(httpStatus)
      const answer = await response.json()
      expect(answer).toMatchObject({ jsonrpc: '2.0', id, error: { code } })
      expect(answer.error.message).toMatch(message)
    })
  }

  it('answers the well-formed requests of a batch and refuses the malformed one beside them', async () => {
    const response = await post(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
      ]),
    )
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: ErrorCode.InvalidParams,
          message: 'params.name: is required',
          data: { details: [{ field: 'params.name', description: 'is required' }] },
        },
      },
    ])
  })
})
