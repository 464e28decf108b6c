// The MCP endpoint through the official SDK client, as an agent framework uses it:
// the tools it lists, and memory stored, found and deleted through them, on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { expectedAnswer, type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { httpRequest } from '../support/http-client.js'
import { connectMcp, type McpSession } from '../support/mcp-client.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'

const TOOL_NAMES = [
  'list_spaces',
  'create_space',
  'list_embedders',
  'add_memory',
  'get_memory',
  'get_ingestion_status',
  'delete_memory',
  'update_memory',
  'memory_history',
  'retrieve_memories',
]

describe.each(ENGINES)('MCP endpoint, happy cases (%s)', (engine) => {
  let fixture: MemoryFixture
  let chat: FakeRerankerLlm
  let mcp: McpSession
  let embedderId: string
  let llmId: string

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    chat = await startFakeRerankerLlm()
    embedderId = await fixture.registerEmbedder(fixture.alice)
    const llm = await fixture.call(
      'rest',
      'createLlm',
      { displayName: 'fake chat', providerType: 'VLLM', endpointUrl: chat.url, modelIdentifier: 'fake-chat' },
      fixture.alice.apiKey,
    )
    llmId = llm.body.llmId
    mcp = await connectMcp(fixture.server.restUrl, fixture.alice.apiKey)
  })
  afterAll(async () => {
    await mcp?.close()
    await chat?.close()
    await fixture?.stop()
  })

  it('lists every tool with a description and an object schema, and names the server', async () => {
    const { tools } = await mcp.client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES)
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(60)
      expect(tool.inputSchema.type, tool.name).toBe('object')
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
    }
    expect(tools.find((tool) => tool.name === 'retrieve_memories')!.inputSchema.required).toEqual([
      'message',
      'spaceIds',
    ])
    expect(mcp.client.getServerVersion()).toMatchObject({ name: 'memsvc' })
    expect(mcp.client.getInstructions()).toContain('add_memory')
  })

  it('creates a space, stores memories, waits for them, retrieves with a filter and an LLM answer, and deletes', async () => {
    const embedders = await mcp.call('list_embedders')
    expect(embedders.isError).toBe(false)
    expect(embedders.body.embedders.map((embedder: { embedderId: string }) => embedder.embedderId)).toContain(
      embedderId,
    )

    const space = await mcp.call('create_space', { name: 'agent notes', spaceEmbedders: [{ embedderId }] })
    expect(space.isError).toBe(false)
    const spaceId = space.body.spaceId
    expect(space.body).toMatchObject({ name: 'agent notes', ownerId: fixture.alice.userId })
    expect((await mcp.call('list_spaces')).body.spaces.map((listed: { spaceId: string }) => listed.spaceId)).toContain(
      spaceId,
    )

    const texts = [
      ['The invoice for March was paid by bank transfer on April 2.', { topic: 'billing' }],
      ['The user prefers dark mode and short answers.', { topic: 'preferences' }],
      ['Refunds for annual plans take five business days.', { topic: 'billing' }],
    ] as const
    const memoryIds: string[] = []
    for (const [originalContent, metadata] of texts) {
      const added = await mcp.call('add_memory', { spaceId, originalContent, metadata })
      expect(added.isError).toBe(false)
      expect(added.body).toMatchObject({ spaceId, metadata, processingStatus: 'PENDING' })
      memoryIds.push(added.body.memoryId)
    }
    for (const memoryId of memoryIds) {
      const status = await waitFor(`memory ${memoryId} COMPLETED`, async () => {
        const answer = await mcp.call('get_ingestion_status', { memoryId })
        return answer.body.processingStatus === 'COMPLETED' ? answer.body : undefined
      })
      expect(status).toEqual({ memoryId, processingStatus: 'COMPLETED', chunkCount: 1 })
    }

    const found = await mcp.call('retrieve_memories', {
      message: 'how long do refunds take',
      spaceIds: [spaceId],
      requestedSize: 2,
    })
    expect(found.isError).toBe(false)
    expect(found.body.chunks).toHaveLength(2)
    expect(found.body.chunks[0]).toMatchObject({ memoryId: memoryIds[2], chunkText: texts[2][0] })
    // The answer scores well; the other memory, about something else, scores low (0 when nothing matches).
    expect(found.body.chunks[0].relevanceScore).toBeGreaterThan(0.3)
    expect(found.body.chunks[1].relevanceScore).toBeLessThan(found.body.chunks[0].relevanceScore / 2)
    expect(found.body.notices).toBeUndefined()
    expect(found.body.memories.map((memory: { memoryId: string }) => memory.memoryId)).toContain(memoryIds[2])
    expect(found.body.answer).toBeUndefined()

    const filtered = await mcp.call('retrieve_memories', {
      message: 'dark mode answers',
      spaceIds: [spaceId],
      filter: "val('$.topic') = 'billing'",
    })
    expect(filtered.body.chunks.length).toBeGreaterThan(0)
    for (const chunk of filtered.body.chunks) expect([memoryIds[0], memoryIds[2]]).toContain(chunk.memoryId)

    const answered = await mcp.call('retrieve_memories', {
      message: 'refunds annual plans',
      spaceIds: [spaceId],
      requestedSize: 1,
      llmId,
    })
    expect(answered.body.answer).toBe(expectedAnswer(`[1] ${answered.body.chunks[0].chunkText}`))

    const read = await mcp.call('get_memory', { memoryId: memoryIds[1], includeContent: true })
    expect(read.body).toMatchObject({
      memoryId: memoryIds[1],
      processingStatus: 'COMPLETED',
      originalContent: texts[1][0],
      metadata: texts[1][1],
    })
    expect((await mcp.call('get_memory', { memoryId: memoryIds[1] })).body.originalContent).toBeUndefined()

    expect((await mcp.call('delete_memory', { memoryId: memoryIds[1] })).body).toEqual({
      memoryId: memoryIds[1],
      deleted: true,
    })
    const gone = await mcp.call('get_memory', { memoryId: memoryIds[1] })
    expect(gone.isError).toBe(true)
    expect(gone.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
  })

  it('updates a memory (metadata, validity, content) with a version precondition and reads its history', async () => {
    const space = await mcp.call('create_space', { name: 'updated notes', spaceEmbedders: [{ embedderId }] })
    const added = await mcp.call('add_memory', {
      spaceId: space.body.spaceId,
      originalContent: 'The office opens at nine.',
      metadata: { topic: 'office', draft: true },
    })
    const memoryId = added.body.memoryId
    await fixture.settled(memoryId)
    expect((await mcp.call('get_memory', { memoryId })).body).toMatchObject({ version: 1 })

    const merged = await mcp.call('update_memory', {
      memoryId,
      expectedVersion: 1,
      mergeMetadata: { reviewed: 'yes', draft: null },
      validUntil: '2031-01-01T00:00:00Z',
    })
    expect(merged.isError).toBe(false)
    expect(merged.body).toMatchObject({
      memoryId,
      version: 2,
      metadata: { topic: 'office', reviewed: 'yes' },
      validUntil: Date.parse('2031-01-01T00:00:00Z'),
    })
    expect(merged.body.metadata).not.toHaveProperty('draft')

    const rewritten = await mcp.call('update_memory', {
      memoryId,
      originalContent: 'The office opens at eight.',
      replaceMetadata: { topic: 'hours' },
      clearValidUntil: true,
    })
    expect(rewritten.isError).toBe(false)
    expect(rewritten.body).toMatchObject({ version: 3, metadata: { topic: 'hours' } })
    expect(rewritten.body.validUntil).toBeUndefined()
    const settled = await waitFor('the new content COMPLETED', async () => {
      const read = await mcp.call('get_memory', { memoryId, includeContent: true })
      return read.body.processingStatus === 'COMPLETED' && !read.body.contentPending ? read.body : undefined
    })
    expect(settled.originalContent).toBe('The office opens at eight.')

    const history = await mcp.call('memory_history', { memoryId })
    expect(history.isError).toBe(false)
    expect(history.body.changes.map((change: { version: number }) => change.version)).toEqual([3, 2])
    expect(history.body.changes[1]).toMatchObject({
      action: 'UPDATE',
      changedById: fixture.alice.userId,
      fields: expect.arrayContaining(['metadata', 'validUntil']),
      metadataChanges: expect.arrayContaining([
        { key: 'reviewed', after: 'yes' },
        { key: 'draft', before: true },
      ]),
    })
    expect(history.body.changes[0].fields).toEqual(expect.arrayContaining(['content', 'metadata', 'validUntil']))
    expect(history.body.changes[0].contentSha256Before).toBe(added.body.originalContentSha256)
    expect(history.body.changes[0].contentSha256After).toBe(settled.originalContentSha256)
    const firstPage = await mcp.call('memory_history', { memoryId, maxResults: 1 })
    expect(firstPage.body.changes).toHaveLength(1)
    const secondPage = await mcp.call('memory_history', {
      memoryId,
      maxResults: 1,
      nextToken: firstPage.body.nextToken,
    })
    expect(secondPage.body.changes.map((change: { version: number }) => change.version)).toEqual([2])
  })

  it('creates a keyword-only space with no embedder; retrieval answers from keywords and says no vector search ran', async () => {
    const space = await mcp.call('create_space', { name: 'keyword notes', textSearchLanguage: 'english' })
    expect(space.isError).toBe(false)
    expect(space.body).toMatchObject({ spaceEmbedders: [], textSearchLanguage: 'english' })
    const spaceId = space.body.spaceId
    const added = await mcp.call('add_memory', { spaceId, originalContent: 'The boiler is serviced every October.' })
    await waitFor('the keyword-only memory', async () => {
      const answer = await mcp.call('get_ingestion_status', { memoryId: added.body.memoryId })
      return answer.body.processingStatus === 'COMPLETED' ? answer.body : undefined
    })
    const found = await mcp.call('retrieve_memories', { message: 'when is the boiler serviced?', spaceIds: [spaceId] })
    expect(found.body.chunks.map((chunk: { memoryId: string }) => chunk.memoryId)).toEqual([added.body.memoryId])
    expect(found.body.notices).toEqual([
      { code: 'VECTOR_SEARCH_SKIPPED', spaceId, message: expect.stringContaining('has no embedders') },
    ])
    const vector = await mcp.call('retrieve_memories', { message: 'boiler', spaceIds: [spaceId], mode: 'VECTOR' })
    expect(vector.isError).toBe(true)
    expect(vector.body.error).toMatchObject({ status: 'INVALID_ARGUMENT', details: [{ field: 'spaceIds.0' }] })
  })

  it('acts on the same memories as the REST API', async () => {
    const space = await mcp.call('create_space', { name: 'shared with rest', spaceEmbedders: [{ embedderId }] })
    const added = await mcp.call('add_memory', {
      spaceId: space.body.spaceId,
      originalContent: 'stored over MCP',
      metadata: { via: 'mcp' },
    })
    const overRest = await httpRequest(`${fixture.server.restUrl}/v1/memories/${added.body.memoryId}`, {
      headers: { authorization: `Bearer ${fixture.alice.apiKey}` },
    })
    expect(overRest.status).toBe(200)
    expect(overRest.json()).toMatchObject({
      memoryId: added.body.memoryId,
      spaceId: space.body.spaceId,
      metadata: { via: 'mcp' },
    })
  })

  it('accepts the key as x-api-key', async () => {
    const session = await connectMcp(fixture.server.restUrl, fixture.alice.apiKey, { header: 'x-api-key' })
    try {
      const spaces = await session.call('list_spaces')
      expect(spaces.isError).toBe(false)
      expect(spaces.body.spaces.length).toBeGreaterThan(0)
    } finally {
      await session.close()
    }
  })

  it("accepts a browser request from the server's own origin", async () => {
    const origin = new URL(fixture.server.restUrl).origin
    const session = await connectMcp(fixture.server.restUrl, fixture.alice.apiKey, { headers: { origin } })
    try {
      expect((await session.call('list_spaces')).isError).toBe(false)
    } finally {
      await session.close()
    }
  })

  it('times each tool call by tool and outcome, and each request as POST /mcp', async () => {
    await mcp.call('list_spaces')
    await mcp.call('get_memory', { memoryId: '7f4f1c2e-3b7a-4d47-9a55-2f1f0f5b9c11' })
    const metrics = await httpRequest(`${fixture.server.restUrl}/metrics`, {
      headers: { 'x-service-metrics-key': 'test-metrics-secret' },
    })
    expect(metrics.body).toMatch(
      /^memsvc_mcp_tool_call_duration_seconds_count\{tool="list_spaces",status="OK"\} [1-9]/m,
    )
    expect(metrics.body).toMatch(
      /^memsvc_mcp_tool_call_duration_seconds_count\{tool="get_memory",status="NOT_FOUND"\} [1-9]/m,
    )
    expect(metrics.body).toMatch(
      /^http_server_request_duration_seconds_count\{method="POST",route="\/mcp",status_code="200"\} [1-9]/m,
    )
  })

  it('answers a notification with 202 and no body', async () => {
    const response = await httpRequest(`${fixture.server.restUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fixture.alice.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    expect(response.status).toBe(202)
    expect(response.body).toBe('')
  })
})
