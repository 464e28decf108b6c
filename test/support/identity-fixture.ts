import type { StartOptions } from '../../src/server/server.js'
import { ApiClient, type Transport } from './api-client.js'
import type { Engine } from './databases.js'
import { startTestServer, type TestServer } from './test-server.js'

export interface Actor {
  userId: string
  apiKey: string
  apiKeyId: string
}

/**
 * A running server with a root admin, a second admin and two plain users, each
 * holding one key. Every raw key handed out is remembered, so that security tests
 * can scan responses and logs for them.
 */
export interface IdentityFixture {
  server: TestServer
  client: ApiClient
  root: Actor
  admin: Actor
  alice: Actor
  bob: Actor
  rawKeys: Set<string>
  /** Every response body seen through `call`, for the secret scan. */
  responses: unknown[]
  call: ApiClient['call']
  /** Creates a fresh key for `owner` (as root) and returns it. */
  newKey(owner: Actor, input?: Record<string, unknown>): Promise<Actor>
  stop(): Promise<void>
}

let userCounter = 0

export async function startIdentityFixture(
  engine: Engine,
  flags: Record<string, unknown> = {},
  startOptions?: StartOptions,
): Promise<IdentityFixture> {
  const server = await startTestServer({ engine, flags, startOptions })
  const client = new ApiClient({ restUrl: server.restUrl, grpcAddress: server.grpcAddress })
  const rawKeys = new Set<string>()
  const responses: unknown[] = []
  const call: ApiClient['call'] = async (transport: Transport, operation, input, apiKey) => {
    const result = await client.call(transport, operation, input, apiKey)
    responses.push(result.body)
    if (result.status === 'OK' && typeof result.body?.rawApiKey === 'string') rawKeys.add(result.body.rawApiKey)
    if (result.status === 'OK' && typeof result.body?.rootApiKey === 'string') rawKeys.add(result.body.rootApiKey)
    return result
  }

  const init = await call('rest', 'initializeSystem')
  if (init.status !== 'OK' || !init.body.rootApiKey) throw new Error(`system init failed: ${JSON.stringify(init.body)}`)
  const rootKeys = await call('rest', 'listApiKeys', {}, init.body.rootApiKey)
  const root: Actor = {
    userId: init.body.userId,
    apiKey: init.body.rootApiKey,
    apiKeyId: rootKeys.body.keys[0].apiKeyId,
  }

  const newKey = async (owner: Actor | { userId: string }, input: Record<string, unknown> = {}): Promise<Actor> => {
    const created = await call('rest', 'createApiKey', { ownerId: owner.userId, ...input }, root.apiKey)
    if (created.status !== 'OK') throw new Error(`key creation failed: ${JSON.stringify(created.body)}`)
    return { userId: owner.userId, apiKey: created.body.rawApiKey, apiKeyId: created.body.apiKeyMetadata.apiKeyId }
  }
  const newUser = async (role: 'ADMIN' | 'USER', name: string): Promise<Actor> => {
    const created = await call('rest', 'createUser', { username: `${name}-${++userCounter}`, role }, root.apiKey)
    if (created.status !== 'OK') throw new Error(`user creation failed: ${JSON.stringify(created.body)}`)
    return newKey({ userId: created.body.userId })
  }

  return {
    server,
    client,
    root,
    admin: await newUser('ADMIN', 'admin'),
    alice: await newUser('USER', 'alice'),
    bob: await newUser('USER', 'bob'),
    rawKeys,
    responses,
    call,
    newKey,
    async stop() {
      client.close()
      await server.stop()
    },
  }
}
