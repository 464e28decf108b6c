// The MCP endpoint's failures: a tool's failure is a tool result with isError that
// carries the REST API's own error (same status, message and field details), never a transport
// failure; what is wrong with the HTTP request itself is refused at the HTTP level.
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OperationName } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { connectMcp, type McpSession } from '../support/mcp-client.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

const MISSING_ID = '7f4f1c2e-3b7a-4d47-9a55-2f1f0f5b9c11'
const MCP_ACCEPT = 'application/json, text/event-stream'

describe.each(ENGINES)('MCP endpoint, errors (%s)', (engine) => {
  let fixture: MemoryFixture
  let mcp: McpSession
  let spaceId: string

  beforeAll(async () => {
    // A small body limit, for the 413 case.
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, {}, { 'grpc-max-message-size-mb': 1 })
    const embedderId = await fixture.registerEmbedder(fixture.alice)
    spaceId = (
      await fixture.call(
        'rest',
        'createSpace',
        { name: 'errors', spaceEmbedders: [{ embedderId }] },
        fixture.alice.apiKey,
      )
    ).body.spaceId
    mcp = await connectMcp(fixture.server.restUrl, fixture.alice.apiKey)
  })
  afterAll(async () => {
    await mcp?.close()
    await fixture?.stop()
  })

  /** The tool's error and the REST route's error for the same input are one and the same. */
  async function expectSameAsRest(
    tool: string,
    args: Record<string, unknown>,
    operation: OperationName,
    input: Record<string, unknown> = args,
  ) {
    const answer = await mcp.call(tool, args)
    const overRest = await fixture.call('rest', operation, input, fixture.alice.apiKey)
    expect(answer.isError, tool).toBe(true)
    expect(overRest.status, operation).not.toBe('OK')
    const { requestId: _mcpRequestId, ...mcpError } = answer.body.error
    const { requestId: _restRequestId, ...restError } = overRest.body.error
    expect(mcpError, `${tool} ${JSON.stringify(args)}`).toEqual(restError)
    return mcpError
  }

  it("answers invalid arguments as tool errors with the REST API's messages and fields", async () => {
    expect(
      await expectSameAsRest('add_memory', { spaceId: 'not-a-uuid', originalContent: 'x' }, 'createMemory'),
    ).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      details: [{ field: 'spaceId', description: 'must be a UUID' }],
    })
    await expectSameAsRest('add_memory', { spaceId }, 'createMemory')
    await expectSameAsRest('add_memory', { spaceId, originalContent: '   ' }, 'createMemory')
    await expectSameAsRest('add_memory', { spaceId, originalContent: 'x', metadata: [1] }, 'createMemory')
    expect(
      await expectSameAsRest('add_memory', { spaceId, originalContent: 'x', colour: 'red' }, 'createMemory'),
    ).toMatchObject({ message: 'colour: unknown field' })
    await expectSameAsRest('create_space', { name: 'no such language', textSearchLanguage: 'klingon' }, 'createSpace')
    await expectSameAsRest('create_space', { name: '', spaceEmbedders: [{ embedderId: MISSING_ID }] }, 'createSpace')
    await expectSameAsRest('list_spaces', { maxResults: 0 }, 'listSpaces')
    await expectSameAsRest('get_memory', { memoryId: 'nope' }, 'getMemory')
  })

  it("refuses arguments the id-taking tools do not take, by name, as a REST body's unknown field", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['get_memory', { memoryId: MISSING_ID, colour: 'red' }, 'colour: unknown field'],
      ['get_memory', { memoryId: MISSING_ID, includeContent: 'yes' }, 'includeContent: must be true or false'],
      ['get_ingestion_status', { memoryId: MISSING_ID, verbose: true }, 'verbose: unknown field'],
      ['delete_memory', {}, 'memoryId: is required'],
    ]
    for (const [tool, args, message] of cases) {
      const answer = await mcp.call(tool, args)
      expect(answer.isError, tool).toBe(true)
      expect(answer.body.error, tool).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message })
    }
  })

  it('answers what is absent or taken as tool errors like REST does', async () => {
    expect(await expectSameAsRest('get_memory', { memoryId: MISSING_ID }, 'getMemory')).toMatchObject({
      code: 404,
      message: `memory ${MISSING_ID} not found`,
    })
    await expectSameAsRest('get_ingestion_status', { memoryId: MISSING_ID }, 'getMemory')
    await expectSameAsRest('delete_memory', { memoryId: MISSING_ID }, 'deleteMemory')
    await expectSameAsRest('add_memory', { spaceId: MISSING_ID, originalContent: 'x' }, 'createMemory')
    await expectSameAsRest(
      'create_space',
      { name: 'errors', spaceEmbedders: [{ embedderId: MISSING_ID }] },
      'createSpace',
    )
    const memoryId = (await mcp.call('add_memory', { spaceId, originalContent: 'taken' })).body.memoryId
    expect(
      await expectSameAsRest('add_memory', { spaceId, originalContent: 'again', memoryId }, 'createMemory'),
    ).toMatchObject({ code: 409, status: 'ALREADY_EXISTS' })
  })

  it('answers update_memory and memory_history failures as REST does: a stale version is 412, nothing changed', async () => {
    const memoryId = (await mcp.call('add_memory', { spaceId, originalContent: 'versioned', metadata: { n: 1 } })).body
      .memoryId
    await fixture.settled(memoryId)
    expect((await mcp.call('update_memory', { memoryId, expectedVersion: 1, mergeMetadata: { n: 2 } })).isError).toBe(
      false,
    )
    expect(
      await expectSameAsRest(
        'update_memory',
        { memoryId, expectedVersion: 1, mergeMetadata: { n: 3 } },
        'updateMemory',
      ),
    ).toMatchObject({ code: 412, status: 'FAILED_PRECONDITION' })
    expect((await mcp.call('get_memory', { memoryId })).body).toMatchObject({ version: 2, metadata: { n: 2 } })
    await expectSameAsRest('update_memory', { memoryId }, 'updateMemory')
    await expectSameAsRest('update_memory', { memoryId, colour: 'red' }, 'updateMemory')
    await expectSameAsRest('update_memory', { memoryId: 'nope', mergeMetadata: { n: 4 } }, 'updateMemory')
    await expectSameAsRest('update_memory', { memoryId: MISSING_ID, mergeMetadata: { n: 4 } }, 'updateMemory')
    await expectSameAsRest(
      'update_memory',
      { memoryId, replaceMetadata: { a: 1 }, mergeMetadata: { b: 2 } },
      'updateMemory',
    )
    await expectSameAsRest('update_memory', { memoryId, validUntil: 5, clearValidUntil: true }, 'updateMemory')
    const badDate = await mcp.call('update_memory', { memoryId, validUntil: 'next tuesday' })
    expect(badDate.isError).toBe(true)
    expect(badDate.body.error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      details: [{ field: 'validUntil', description: expect.stringContaining('ISO 8601') }],
    })
    await expectSameAsRest('memory_history', { memoryId: MISSING_ID }, 'getMemoryHistory')
    await expectSameAsRest('memory_history', { memoryId: 'nope' }, 'getMemoryHistory')
    await expectSameAsRest('memory_history', { memoryId, maxResults: 0 }, 'getMemoryHistory')
  })

  it('names the retrieval fields the tool takes', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ message: 'x', spaceIds: ['nope'] }, 'spaceIds.0', /must be a UUID/],
      [{ message: 'x', spaceIds: [] }, 'spaceIds', /at least one space/],
      [{ message: 'x', spaceIds: [spaceId, spaceId] }, 'spaceIds', /same space twice/],
      [{ message: '', spaceIds: [spaceId] }, 'message', /must not be empty/],
      [{ message: 'x', spaceIds: [spaceId], requestedSize: 0 }, 'requestedSize', /from 1 to 100/],
      [{ message: 'x', spaceIds: [spaceId], llmId: 'nope' }, 'llmId', /must be a UUID/],
      [{ message: 'x', spaceIds: [spaceId], filter: "val('$.a') = " }, 'filter', /position/],
      [{ message: 'x', spaceIds: [spaceId], mode: 'FUZZY' }, 'mode', /HYBRID/],
    ]
    for (const [args, field, description] of cases) {
      const answer = await mcp.call('retrieve_memories', args)
      const label = JSON.stringify(args)
      expect(answer.isError, label).toBe(true)
      expect(answer.body.error, label).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
      expect(answer.body.error.message, label).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `))
      expect(answer.body.error.message, label).toMatch(description)
      expect(answer.body.error.details[0].field, label).toBe(field)
    }
    const absent = await mcp.call('retrieve_memories', { message: 'x', spaceIds: [MISSING_ID] })
    expect(absent.body.error).toMatchObject({ code: 404, message: `space ${MISSING_ID} not found` })
    const noLlm = await mcp.call('retrieve_memories', { message: 'x', spaceIds: [spaceId], llmId: MISSING_ID })
    expect(noLlm.body.error).toMatchObject({
      code: 400,
      message: `llmId: there is no LLM ${MISSING_ID} you may use`,
      details: [{ field: 'llmId' }],
    })
  })

  it('answers an unknown tool with a protocol error, as the MCP specification asks', async () => {
    const error = await mcp.client.callTool({ name: 'drop_database', arguments: {} }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).code).toBe(-32602)
    expect((error as McpError).message).toContain('Unknown tool: "drop_database"')
  })

  it('refuses HTTP requests that are not MCP messages, and keeps serving', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      httpRequest(`${fixture.server.restUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${fixture.alice.apiKey}`,
          'content-type': 'application/json',
          accept: MCP_ACCEPT,
          ...headers,
        },
        body,
      })
    const malformed = await post('{"jsonrpc": "2.0", "method": ')
    expect(malformed.status).toBe(400)
    expect(malformed.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringContaining('body: malformed JSON') },
    })
    const deep = await post(`${'['.repeat(40)}${']'.repeat(40)}`)
    expect(deep.status).toBe(400)
    expect(deep.json().error).toMatchObject({ code: -32700, message: expect.stringContaining('nested more than') })
    const notJsonRpc = await post('{"hello": "world"}')
    expect(notJsonRpc.status).toBe(400)
    expect(notJsonRpc.json().error.code).toBe(-32600)
    expect((await post('{}', { accept: 'application/json' })).status).toBe(406)
    expect(
      (await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { 'content-type': 'text/plain' })).status,
    ).toBe(415)
    const badVersion = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', {
      'mcp-protocol-version': '1999-01-01',
    })
    expect(badVersion.status).toBe(400)
    expect(badVersion.json().error.message).toContain('Unsupported protocol version')
    expect((await mcp.call('list_spaces')).isError).toBe(false)
    expect(fixture.server.logs.filter((line) => line.includes(' ERROR '))).toEqual([])
  })

  it("answers a body above the server's limit with 413", async () => {
    const limit = fixture.server.config.maxMessageBytes
    const response = await httpRequest(`${fixture.server.restUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fixture.alice.apiKey}`,
        'content-type': 'application/json',
        accept: MCP_ACCEPT,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'add_memory', arguments: { spaceId, originalContent: 'x'.repeat(limit) } },
      }),
    })
    expect(response.status).toBe(413)
  })
})
