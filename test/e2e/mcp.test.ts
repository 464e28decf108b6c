// The MCP endpoint end to end: the official SDK client against the built
// executable, run from a directory without node_modules, as an agent framework would use it.
// MEMSVC_TRANSCRIPT=path writes the session as it went over the wire, for the report.
import fs from 'node:fs'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanUp, type RunningServer, startServer } from '../support/cli.js'
import { createSandbox, request, type Sandbox } from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { connectMcp, type McpSession } from '../support/mcp-client.js'
import { waitFor } from '../support/wait.js'

const TEST_TIMEOUT_MS = 90_000

let sandbox: Sandbox
let server: RunningServer
let embedder: FakeEmbedder
let baseUrl: string
let rootKey: string
const transcript: string[] = []

async function rest(method: string, pathname: string, apiKey: string | undefined, body?: unknown) {
  const response = await request(`${baseUrl}${pathname}`, {
    method,
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, json: (response.body ? JSON.parse(response.body) : undefined) as any }
}

/** A user with one key; returns the user id and the raw key. */
async function newUser(username: string): Promise<{ userId: string; apiKey: string; apiKeyId: string }> {
  const user = await rest('POST', '/v1/users', rootKey, { username, role: 'USER' })
  const key = await rest('POST', '/v1/apikeys', rootKey, { ownerId: user.json.userId })
  return { userId: user.json.userId, apiKey: key.json.rawApiKey, apiKeyId: key.json.apiKeyMetadata.apiKeyId }
}

async function expectRefused(apiKey: string, status: number): Promise<void> {
  const error = await connectMcp(baseUrl, apiKey, { transcript }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(StreamableHTTPError)
  expect((error as StreamableHTTPError).code).toBe(status)
}

beforeAll(async () => {
  sandbox = createSandbox()
  embedder = await startFakeEmbedder()
  server = await startServer(sandbox, { tls: false, dataDir: sandbox.makeDir('data') })
  baseUrl = server.process.restBase
  rootKey = (await rest('POST', '/v1/system/init', undefined)).json.rootApiKey
}, 150_000)

afterAll(async () => {
  if (process.env.MEMSVC_TRANSCRIPT) fs.writeFileSync(process.env.MEMSVC_TRANSCRIPT, `${transcript.join('\n')}\n`)
  await embedder?.close()
  await cleanUp([server], sandbox)
}, 30_000)

describe('MCP against the built executable', { timeout: TEST_TIMEOUT_MS }, () => {
  let alice: { userId: string; apiKey: string; apiKeyId: string }
  let bob: { userId: string; apiKey: string; apiKeyId: string }
  let session: McpSession
  let spaceId: string
  const memoryIds: string[] = []

  beforeAll(async () => {
    alice = await newUser('alice')
    bob = await newUser('bob')
    const registered = await rest('POST', '/v1/embedders', alice.apiKey, {
      displayName: 'local',
      providerType: 'TEI',
      endpointUrl: embedder.url,
      modelIdentifier: 'hashed-bow',
      dimensionality: embedder.dimensions,
    })
    expect(registered.status).toBe(201)
    session = await connectMcp(baseUrl, alice.apiKey, { transcript })
  })
  afterAll(async () => {
    await session?.close()
  })

  it('lists the tools', async () => {
    const { tools } = await session.client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([
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
    ])
    if (process.env.MEMSVC_TRANSCRIPT)
      fs.writeFileSync(`${process.env.MEMSVC_TRANSCRIPT}.tools.json`, JSON.stringify(tools, null, 2))
  })

  it('creates a space, adds memories, waits for them, retrieves and deletes', async () => {
    const [embedderEntry] = (await session.call('list_embedders')).body.embedders
    const space = await session.call('create_space', {
      name: 'agent memory',
      spaceEmbedders: [{ embedderId: embedderEntry.embedderId }],
    })
    expect(space.isError).toBe(false)
    spaceId = space.body.spaceId
    for (const [originalContent, metadata] of [
      ['Alice is allergic to peanuts.', { kind: 'health' }],
      ['Alice prefers meetings after 10am.', { kind: 'schedule' }],
    ] as const) {
      const added = await session.call('add_memory', { spaceId, originalContent, metadata })
      expect(added.body).toMatchObject({ spaceId, processingStatus: 'PENDING', metadata })
      memoryIds.push(added.body.memoryId)
    }
    for (const memoryId of memoryIds) {
      await waitFor(
        `memory ${memoryId} COMPLETED`,
        async () => (await session.call('get_ingestion_status', { memoryId })).body.processingStatus === 'COMPLETED',
      )
    }
    const found = await session.call('retrieve_memories', {
      message: 'what is alice allergic to',
      spaceIds: [spaceId],
      requestedSize: 1,
    })
    expect(found.isError).toBe(false)
    expect(found.body.chunks).toEqual([
      expect.objectContaining({
        memoryId: memoryIds[0],
        chunkText: 'Alice is allergic to peanuts.',
        relevanceScore: expect.any(Number),
      }),
    ])
    expect(found.body.memories).toEqual([
      expect.objectContaining({ memoryId: memoryIds[0], metadata: { kind: 'health' } }),
    ])

    expect((await session.call('delete_memory', { memoryId: memoryIds[1] })).body).toEqual({
      memoryId: memoryIds[1],
      deleted: true,
    })
    const gone = await session.call('get_ingestion_status', { memoryId: memoryIds[1] })
    expect(gone.isError).toBe(true)
    expect(gone.body.error).toMatchObject({
      code: 404,
      status: 'NOT_FOUND',
      message: `memory ${memoryIds[1]} not found`,
    })
  })

  it('refuses a wrong key and a revoked one before any tool runs', async () => {
    await expectRefused(`msk_${'x'.repeat(49)}`, 401)
    const revoked = await rest('POST', '/v1/apikeys', rootKey, { ownerId: alice.userId })
    expect((await rest('DELETE', `/v1/apikeys/${revoked.json.apiKeyMetadata.apiKeyId}`, rootKey)).status).toBe(204)
    await expectRefused(revoked.json.rawApiKey, 401)
  })

  it("keeps another user out of alice's space", async () => {
    const bobSession = await connectMcp(baseUrl, bob.apiKey, { transcript })
    try {
      expect((await bobSession.call('list_spaces')).body.spaces).toEqual([])
      for (const [tool, args] of [
        ['retrieve_memories', { message: 'allergic', spaceIds: [spaceId] }],
        ['add_memory', { spaceId, originalContent: 'bob was here' }],
      ] as const) {
        const refused = await bobSession.call(tool, args)
        expect(refused.isError, tool).toBe(true)
        expect(refused.body.error, tool).toMatchObject({
          code: 404,
          status: 'NOT_FOUND',
          message: `space ${spaceId} not found`,
        })
      }
      const memory = await bobSession.call('get_memory', { memoryId: memoryIds[0] })
      expect(memory.body.error).toMatchObject({ code: 404, message: `memory ${memoryIds[0]} not found` })
      expect((await bobSession.call('delete_memory', { memoryId: memoryIds[0] })).isError).toBe(true)
    } finally {
      await bobSession.close()
    }
    expect((await session.call('get_ingestion_status', { memoryId: memoryIds[0] })).body.processingStatus).toBe(
      'COMPLETED',
    )
  })

  it('answers GET and DELETE with 405: the server is stateless', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await request(`${baseUrl}/mcp`, {
        method,
        headers: { authorization: `Bearer ${alice.apiKey}`, accept: 'text/event-stream' },
      })
      expect(response.status, method).toBe(405)
      expect(response.headers.allow, method).toBe('POST')
    }
  })
})

describe('MCP over TLS', { timeout: TEST_TIMEOUT_MS }, () => {
  let tlsServer: RunningServer

  beforeAll(async () => {
    tlsServer = await startServer(sandbox, { tls: true, dataDir: sandbox.makeDir('data-tls') })
  }, 150_000)
  afterAll(async () => {
    await tlsServer?.process.stop('SIGTERM')
  })

  it('serves the same endpoint on the HTTPS port', async () => {
    const tlsBase = tlsServer.process.restBase
    expect(tlsBase).toMatch(/^https:/)
    const key = JSON.parse((await request(`${tlsBase}/v1/system/init`, { method: 'POST' })).body).rootApiKey
    const post = (message: unknown) =>
      request(`${tlsBase}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(message),
      })
    const initialized = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tls-check', version: '1' } },
    })
    expect(initialized.status).toBe(200)
    expect(JSON.parse(initialized.body).result.serverInfo.name).toBe('memsvc')
    const listed = await post({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'list_spaces', arguments: {} },
    })
    expect(JSON.parse(listed.body).result).toMatchObject({ structuredContent: { spaces: [] } })
  })
})
