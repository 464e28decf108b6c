// The MCP endpoint's boundaries: the key is checked before any tool runs, tools act
// with the caller's permissions (another user's space and memories read as absent), browsers on
// other origins are refused, and no raw key reaches a response or a log line.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { connectMcp, type McpSession } from '../support/mcp-client.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

const MCP_ACCEPT = 'application/json, text/event-stream'
const FORGED_KEY = `msk_${'Z'.repeat(49)}`

describe.each(ENGINES)('MCP endpoint, security (%s)', (engine) => {
  let fixture: MemoryFixture
  let alice: McpSession
  let bob: McpSession
  let spaceId: string
  let publicSpaceId: string
  let memoryId: string

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    const embedderId = await fixture.registerEmbedder(fixture.alice)
    alice = await connectMcp(fixture.server.restUrl, fixture.alice.apiKey)
    bob = await connectMcp(fixture.server.restUrl, fixture.bob.apiKey)
    spaceId = (await alice.call('create_space', { name: 'private', spaceEmbedders: [{ embedderId }] })).body.spaceId
    publicSpaceId = (
      await alice.call('create_space', { name: 'public', spaceEmbedders: [{ embedderId }], publicRead: true })
    ).body.spaceId
    memoryId = (await alice.call('add_memory', { spaceId, originalContent: 'the launch code is in the drawer' })).body
      .memoryId
    await fixture.settled(memoryId)
  })
  afterAll(async () => {
    await alice?.close()
    await bob?.close()
    await fixture?.stop()
  })

  /** A tools/call with `headers`, as it would reach the server without the SDK's help. */
  const rawToolCall = (headers: Record<string, string>, name: string, args: Record<string, unknown>) =>
    httpRequest(`${fixture.server.restUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    })

  const memoryCount = async () =>
    (await fixture.call('rest', 'listMemories', { spaceId }, fixture.alice.apiKey)).body.memories.length

  it('refuses a missing, wrong or revoked key with 401 before any tool runs', async () => {
    const before = await memoryCount()
    const revoked = await fixture.newKey(fixture.alice)
    expect(
      (await fixture.call('rest', 'deleteApiKey', { apiKeyId: revoked.apiKeyId }, fixture.root.apiKey)).status,
    ).toBe('OK')
    const attempts: Array<[string, Record<string, string>]> = [
      ['no key', {}],
      ['forged key', { authorization: `Bearer ${FORGED_KEY}` }],
      ['forged x-api-key', { 'x-api-key': FORGED_KEY }],
      ['revoked key', { authorization: `Bearer ${revoked.apiKey}` }],
      ['revoked x-api-key', { 'x-api-key': revoked.apiKey }],
      ['not a key', { authorization: 'Basic YWxpY2U6c2VjcmV0' }],
    ]
    for (const [label, headers] of attempts) {
      const response = await rawToolCall(headers, 'add_memory', { spaceId, originalContent: `written with ${label}` })
      expect(response.status, label).toBe(401)
      expect(response.json().error, label).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' })
    }
    expect(await memoryCount()).toBe(before)
  })

  it('refuses a wrong key to the SDK client at connect, as an HTTP 401', async () => {
    const error = await connectMcp(fixture.server.restUrl, FORGED_KEY).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(StreamableHTTPError)
    expect((error as StreamableHTTPError).code).toBe(401)
  })

  it('reads the Authorization header first when both carry a key', async () => {
    const response = await rawToolCall(
      { authorization: `Bearer ${FORGED_KEY}`, 'x-api-key': fixture.alice.apiKey },
      'list_spaces',
      {},
    )
    expect(response.status).toBe(401)
  })

  it("keeps bob out of alice's space and memories: they read as absent, as over REST", async () => {
    const listed = (await bob.call('list_spaces')).body.spaces.map((space: { spaceId: string }) => space.spaceId)
    expect(listed).not.toContain(spaceId)
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['retrieve_memories', { message: 'launch code', spaceIds: [spaceId] }, `space ${spaceId} not found`],
      ['add_memory', { spaceId, originalContent: 'bob was here' }, `space ${spaceId} not found`],
      ['get_memory', { memoryId, includeContent: true }, `memory ${memoryId} not found`],
      ['get_ingestion_status', { memoryId }, `memory ${memoryId} not found`],
      ['delete_memory', { memoryId }, `memory ${memoryId} not found`],
      ['update_memory', { memoryId, mergeMetadata: { by: 'bob' } }, `memory ${memoryId} not found`],
      ['memory_history', { memoryId }, `memory ${memoryId} not found`],
    ]
    for (const [tool, args, message] of refusals) {
      const answer = await bob.call(tool, args)
      expect(answer.isError, tool).toBe(true)
      expect(answer.body.error, tool).toMatchObject({ code: 404, status: 'NOT_FOUND', message })
      expect(JSON.stringify(answer.body), tool).not.toContain('launch code')
    }
    const kept = (await alice.call('get_memory', { memoryId })).body
    expect(kept).toMatchObject({ processingStatus: 'COMPLETED', version: 1 })
    expect(kept.metadata).not.toHaveProperty('by')
    expect(await memoryCount()).toBeGreaterThan(0)
  })

  it('lets bob retrieve from a public space but not write to it, as over REST', async () => {
    const found = await bob.call('retrieve_memories', { message: 'anything', spaceIds: [publicSpaceId] })
    expect(found.isError).toBe(false)
    const write = await bob.call('add_memory', { spaceId: publicSpaceId, originalContent: 'bob was here' })
    const overRest = await fixture.call(
      'rest',
      'createMemory',
      { spaceId: publicSpaceId, originalContent: 'bob was here' },
      fixture.bob.apiKey,
    )
    expect(write.isError).toBe(true)
    expect(write.body.error.status).toBe(overRest.status)
    expect(write.body.error.message).toBe(overRest.message)
  })

  it('refuses a browser on another origin with 403 before any tool runs', async () => {
    const before = await memoryCount()
    for (const origin of [
      'http://evil.example',
      'null',
      `http://localhost.evil.example:${new URL(fixture.server.restUrl).port}`,
      'not a url',
    ]) {
      const response = await rawToolCall({ authorization: `Bearer ${fixture.alice.apiKey}`, origin }, 'add_memory', {
        spaceId,
        originalContent: 'from a web page',
      })
      expect(response.status, origin).toBe(403)
      expect(response.json(), origin).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { status: 'PERMISSION_DENIED' } },
      })
    }
    expect(await memoryCount()).toBe(before)
  })

  it('puts no raw key in any answer or log line', async () => {
    const answers = [
      await alice.call('list_spaces'),
      await bob.call('get_memory', { memoryId }),
      await alice.call('list_embedders'),
    ]
    const seen = JSON.stringify(answers) + fixture.server.logs.join('\n')
    for (const key of [fixture.alice.apiKey, fixture.bob.apiKey, FORGED_KEY]) expect(seen).not.toContain(key.slice(4))
  })
})
