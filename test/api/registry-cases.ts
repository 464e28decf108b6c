import crypto from 'node:crypto'
import { expect } from 'vitest'
import type { ApiResult, OperationName, Transport } from '../support/api-client.js'
import { startFakeEmbedder } from '../support/fake-embedder.js'
import { startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import type { Actor, IdentityFixture } from '../support/identity-fixture.js'
import { waitFor } from '../support/wait.js'
import type { ApiCase } from './identity-cases.js'

/**
 * The embedder, LLM and reranker registry as a table, in the shape of identity-cases:
 * every case runs over REST and gRPC, on PostgreSQL and PGlite. Cases shared by the
 * resources are generated once per resource; each case prepares what it consumes.
 */

export const INT32_MAX = 2_147_483_647
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

let counter = 0
/** Unique per call, so no two cases (or transports) ever register the same thing. */
export const unique = () => `${++counter}-${crypto.randomUUID().slice(0, 8)}`
export const newSecret = () => `sk-test-${crypto.randomBytes(18).toString('base64url')}`

/** A local provider (started by the case that probes it) and the create fields that point a registration at it. */
interface ProbeTarget {
  overrides: Record<string, unknown>
  close(): Promise<void>
}

/** The local rerank and chat server answers both an LLM's and a reranker's probe at its default path. */
async function startRerankAndChatTarget(): Promise<ProbeTarget> {
  const provider = await startFakeRerankerLlm()
  return { overrides: { endpointUrl: provider.url }, close: () => provider.close() }
}

interface Resource {
  noun: string
  idField: 'embedderId' | 'llmId' | 'rerankerId'
  /** The list response's field, which is also the table's name. */
  listField: 'embedders' | 'llms' | 'rerankers'
  ops: {
    create: OperationName
    list: OperationName
    get: OperationName
    update: OperationName
    delete: OperationName
    probe: OperationName
  }
  /** A valid create input with only the required fields (and a unique model). */
  input(overrides?: Record<string, unknown>): Record<string, unknown>
  providerTypes: readonly string[]
  defaultApiPath(providerType: string): string
  /** Required fields, each of which alone missing is a 400 naming it. */
  required: string[]
  /** A provider type valid only for another resource. */
  foreignProviderType: string
  /** One field that makes a create input invalid (the secret scan sends it with a secret). */
  invalidSetting: Record<string, unknown>
  startProbeTarget(): Promise<ProbeTarget>
}

export const EMBEDDER: Resource = {
  noun: 'embedder',
  idField: 'embedderId',
  listField: 'embedders',
  ops: {
    create: 'createEmbedder',
    list: 'listEmbedders',
    get: 'getEmbedder',
    update: 'updateEmbedder',
    delete: 'deleteEmbedder',
    probe: 'probeEmbedder',
  },
  input: (overrides = {}) => ({
    displayName: 'Sentence embedder',
    providerType: 'VLLM',
    endpointUrl: 'http://127.0.0.1:8000',
    modelIdentifier: `embed-model-${unique()}`,
    dimensionality: 768,
    ...overrides,
  }),
  providerTypes: ['VENDORA', 'VLLM', 'TEI', 'LLAMA_CPP', 'VENDORE', 'VENDORD', 'VENDORF'],
  defaultApiPath: (providerType) =>
    providerType === 'VENDORD' ? '/v2/embed' : providerType === 'TEI' ? '/embed' : '/embeddings',
  required: ['displayName', 'providerType', 'endpointUrl', 'modelIdentifier', 'dimensionality'],
  foreignProviderType: 'OLLAMA',
  invalidSetting: { dimensionality: -1 },
  async startProbeTarget() {
    const provider = await startFakeEmbedder()
    return {
      overrides: { endpointUrl: provider.url, dimensionality: provider.dimensions },
      close: () => provider.close(),
    }
  },
}

export const LLM: Resource = {
  noun: 'LLM',
  idField: 'llmId',
  listField: 'llms',
  ops: {
    create: 'createLlm',
    list: 'listLlms',
    get: 'getLlm',
    update: 'updateLlm',
    delete: 'deleteLlm',
    probe: 'probeLlm',
  },
  input: (overrides = {}) => ({
    displayName: 'Chat model',
    providerType: 'VLLM',
    endpointUrl: 'https://llm.example.test:8443',
    modelIdentifier: `chat-model-${unique()}`,
    ...overrides,
  }),
  providerTypes: [
    'VENDORA',
    'VENDORB_PROXY',
    'VENDORC_ROUTER',
    'VLLM',
    'OLLAMA',
    'LLAMA_CPP',
    'CUSTOM_VENDORA_COMPATIBLE',
  ],
  defaultApiPath: () => '/v1/chat/completions',
  required: ['displayName', 'endpointUrl', 'modelIdentifier', 'providerType'],
  foreignProviderType: 'TEI',
  invalidSetting: { maxContextLength: -1 },
  startProbeTarget: startRerankAndChatTarget,
}

export const RERANKER: Resource = {
  noun: 'reranker',
  idField: 'rerankerId',
  listField: 'rerankers',
  ops: {
    create: 'createReranker',
    list: 'listRerankers',
    get: 'getReranker',
    update: 'updateReranker',
    delete: 'deleteReranker',
    probe: 'probeReranker',
  },
  input: (overrides = {}) => ({
    displayName: 'Cross-encoder reranker',
    providerType: 'VLLM',
    endpointUrl: 'http://127.0.0.1:8000',
    modelIdentifier: `rerank-model-${unique()}`,
    ...overrides,
  }),
  providerTypes: ['VENDORA', 'VLLM', 'TEI', 'LLAMA_CPP', 'VENDORE', 'VENDORD', 'VENDORF'],
  defaultApiPath: (providerType) =>
    providerType === 'VENDORD' ? '/v2/rerank' : providerType === 'TEI' ? '/rerank' : '/v1/rerank',
  required: ['displayName', 'providerType', 'endpointUrl', 'modelIdentifier'],
  foreignProviderType: 'OLLAMA',
  invalidSetting: { endpointUrl: 'ftp://rerank.example.test' },
  startProbeTarget: startRerankAndChatTarget,
}

export const RESOURCES = [EMBEDDER, LLM, RERANKER]

/**
 * Probes of registrations made by earlier cases (pointing nowhere) may queue ahead of the one a case asks for,
 * each taking its timeout: in the full suite on two cores one waited over 50 s.
 */
const PROBE_WAIT_MS = 90_000

type Who = 'root' | 'admin' | 'alice' | 'bob'

/** Registers through REST as `who` and returns the resource (the test's own set-up, not a case). */
export async function register(
  fixture: IdentityFixture,
  resource: Resource,
  who: Who | Actor,
  overrides: Record<string, unknown> = {},
): Promise<any> {
  const actor = typeof who === 'string' ? fixture[who] : who
  const created = await fixture.call('rest', resource.ops.create, resource.input(overrides), actor.apiKey)
  if (created.status !== 'OK') throw new Error(`${resource.noun} registration failed: ${created.message}`)
  return created.body
}

async function freshUser(fixture: IdentityFixture): Promise<Actor> {
  const user = await fixture.call('rest', 'createUser', { username: `reg-${unique()}` }, fixture.root.apiKey)
  return fixture.newKey({ userId: user.body.userId } as Actor)
}

const ids = (result: ApiResult, resource: Resource): string[] =>
  result.body[resource.listField].map((item: any) => item[resource.idField])

/** Every response shape: never the secret, a short hex fingerprint instead. */
export function expectNoSecretFields(item: Record<string, any>): void {
  expect(JSON.stringify(item)).not.toMatch(/inlineSecret|inline_secret/)
  if (item.credentials?.kind === 'API_KEY') expect(item.credentials.apiKey.secretFingerprint).toMatch(/^[0-9a-f]{8}$/)
}

function sharedHappyCases(r: Resource): ApiCase[] {
  const op = r.ops
  const n = r.noun
  return [
    {
      name: `${n}: create with the required fields only takes every default and returns 201 with a Location`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => r.input({ providerType: 'VLLM' }),
      verify: (result, _p, fixture, transport) => {
        const item = result.body
        expect(item[r.idField]).toMatch(/^[0-9a-f-]{36}$/)
        if (transport === 'rest') expect(result.headers?.get('location')).toBe(`/v1/${r.listField}/${item[r.idField]}`)
        expect(item).toMatchObject({
          ownerId: fixture.alice.userId,
          providerType: 'VLLM',
          apiPath: r.defaultApiPath('VLLM'),
          supportedModalities: ['TEXT'],
          labels: {},
          credentials: { kind: 'NONE' },
          createdById: fixture.alice.userId,
          updatedById: fixture.alice.userId,
        })
        expect(item.createdAt).toBe(item.updatedAt)
        expect(item.createdAt).toBeGreaterThan(Date.now() - 60_000)
        for (const absent of ['description', 'version', 'monitoringEndpoint']) expect(item[absent]).toBeUndefined()
        expect(item.credentials.apiKey).toBeUndefined()
        expect(item.credentials.cloudAdc).toBeUndefined()
      },
    },
    ...r.providerTypes.map(
      (providerType): ApiCase => ({
        name: `${n}: provider type ${providerType} is accepted and its apiPath defaults to ${r.defaultApiPath(providerType)}`,
        operation: op.create,
        as: 'alice',
        expect: 'OK',
        httpStatus: 201,
        input: () => r.input({ providerType }),
        verify: (result) =>
          expect(result.body).toMatchObject({ providerType, apiPath: r.defaultApiPath(providerType) }),
      }),
    ),
    {
      name: `${n}: an explicit apiPath overrides the provider default`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => r.input({ providerType: 'VENDORA', apiPath: '/custom/v9/run?api-version=2' }),
      verify: (result) => expect(result.body.apiPath).toBe('/custom/v9/run?api-version=2'),
    },
    {
      name: `${n}: create keeps a client-chosen id`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      prepare: async () => ({ id: crypto.randomUUID() }),
      input: (prepared) => r.input({ [r.idField]: prepared.id }),
      verify: (result, prepared) => expect(result.body[r.idField]).toBe(prepared.id),
    },
    {
      name: `${n}: create accepts snake_case field names, as the spec's example sends them`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      only: 'rest',
      input: () => {
        const snake: Record<string, unknown> = {}
        for (const [name, value] of Object.entries(r.input()))
          snake[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value
        snake.credentials = { kind: 'API_KEY', api_key: { inline_secret: newSecret(), header_name: 'x-api-key' } }
        snake.supported_modalities = ['TEXT', 'IMAGE']
        return snake
      },
      verify: (result) => {
        expect(result.body).toMatchObject({
          displayName: expect.any(String),
          supportedModalities: ['TEXT', 'IMAGE'],
          credentials: { kind: 'API_KEY', apiKey: { headerName: 'x-api-key' } },
        })
        expectNoSecretFields(result.body)
      },
    },
    {
      name: `${n}: an admin registers for another user (CREATE_${r.noun.toUpperCase()}_ANY)`,
      operation: op.create,
      as: 'admin',
      expect: 'OK',
      httpStatus: 201,
      input: (_p, fixture) => r.input({ ownerId: fixture.alice.userId }),
      verify: async (result, _p, fixture, transport) => {
        expect(result.body).toMatchObject({ ownerId: fixture.alice.userId, createdById: fixture.admin.userId })
        const seen = await fixture.call(
          transport,
          op.get,
          { [r.idField]: result.body[r.idField] },
          fixture.alice.apiKey,
        )
        expect(seen.status).toBe('OK')
      },
    },
    {
      name: `${n}: a user registers for themselves by naming their own ownerId`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: (_p, fixture) => r.input({ ownerId: fixture.alice.userId }),
      verify: (result, _p, fixture) => expect(result.body.ownerId).toBe(fixture.alice.userId),
    },
    {
      name: `${n}: every optional common setting is stored and returned`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () =>
        r.input({
          description: 'Serves the search team',
          supportedModalities: ['TEXT', 'IMAGE', 'AUDIO', 'VIDEO'],
          labels: { team: 'search', 'env.stage': 'prod-1', tier_a: 'x' },
          version: '2024-05-01',
          monitoringEndpoint: 'https://metrics.example.test/status',
        }),
      verify: (result) =>
        expect(result.body).toMatchObject({
          description: 'Serves the search team',
          supportedModalities: ['TEXT', 'IMAGE', 'AUDIO', 'VIDEO'],
          labels: { team: 'search', 'env.stage': 'prod-1', tier_a: 'x' },
          version: '2024-05-01',
          monitoringEndpoint: 'https://metrics.example.test/status',
        }),
    },
    ...(['TEXT', 'IMAGE', 'AUDIO', 'VIDEO'] as const).map(
      (modality): ApiCase => ({
        name: `${n}: modality ${modality} alone is accepted`,
        operation: op.create,
        as: 'alice',
        expect: 'OK',
        httpStatus: 201,
        input: () => r.input({ supportedModalities: [modality] }),
        verify: (result) => expect(result.body.supportedModalities).toEqual([modality]),
      }),
    ),
    {
      name: `${n}: a modality given twice is kept once`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => r.input({ supportedModalities: ['IMAGE', 'TEXT', 'IMAGE'] }),
      verify: (result) => expect(result.body.supportedModalities).toEqual(['IMAGE', 'TEXT']),
    },
    {
      name: `${n}: endpoint and monitoring URLs may be plain http with a port and path`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () =>
        r.input({ endpointUrl: 'http://10.0.0.7:11434/base', monitoringEndpoint: 'http://localhost:9100/metrics' }),
      verify: (result) =>
        expect(result.body).toMatchObject({
          endpointUrl: 'http://10.0.0.7:11434/base',
          monitoringEndpoint: 'http://localhost:9100/metrics',
        }),
    },
    {
      name: `${n}: a display name of 200 characters is accepted`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => r.input({ displayName: 'd'.repeat(200) }),
    },
    // Credential forms.
    {
      name: `${n}: an inline API key defaults to "Authorization: Bearer", and only its fingerprint comes back`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      prepare: async () => ({ secret: newSecret() }),
      input: (prepared) => r.input({ credentials: { kind: 'API_KEY', apiKey: { inlineSecret: prepared.secret } } }),
      verify: (result, prepared) => {
        expect(result.body.credentials).toMatchObject({
          kind: 'API_KEY',
          apiKey: { headerName: 'Authorization', prefix: 'Bearer' },
        })
        expectNoSecretFields(result.body)
        expect(JSON.stringify(result.body)).not.toContain(prepared.secret)
        // Keyed: not guessable offline from the secret alone.
        expect(result.body.credentials.apiKey.secretFingerprint).not.toBe(
          crypto.createHash('sha256').update(prepared.secret).digest('hex').slice(0, 8),
        )
      },
    },
    {
      name: `${n}: an inline API key in another header is sent bare unless a prefix is given`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () =>
        r.input({ credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret(), headerName: 'X-Api-Key' } } }),
      verify: (result) => expect(result.body.credentials.apiKey).toMatchObject({ headerName: 'X-Api-Key', prefix: '' }),
    },
    {
      name: `${n}: an inline API key with a custom header and prefix`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () =>
        r.input({
          credentials: {
            kind: 'API_KEY',
            apiKey: { inlineSecret: newSecret(), headerName: 'api-key', prefix: 'Token' },
          },
        }),
      verify: (result) =>
        expect(result.body.credentials.apiKey).toMatchObject({ headerName: 'api-key', prefix: 'Token' }),
    },
    {
      name: `${n}: the same secret shows the same fingerprint; another secret a different one`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      prepare: async (fixture) => {
        const secret = newSecret()
        const first = await register(fixture, r, 'alice', {
          credentials: { kind: 'API_KEY', apiKey: { inlineSecret: secret } },
        })
        return { secret, first }
      },
      input: (prepared) => r.input({ credentials: { kind: 'API_KEY', apiKey: { inlineSecret: prepared.secret } } }),
      verify: async (result, prepared, fixture) => {
        expect(result.body.credentials.apiKey.secretFingerprint).toBe(
          prepared.first.credentials.apiKey.secretFingerprint,
        )
        const other = await register(fixture, r, 'alice', {
          credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
        })
        expect(other.credentials.apiKey.secretFingerprint).not.toBe(prepared.first.credentials.apiKey.secretFingerprint)
      },
    },
    {
      name: `${n}: cloud application default credentials with scopes and a quota project`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () =>
        r.input({
          credentials: {
            kind: 'CLOUD_ADC',
            cloudAdc: {
              scopes: ['https://www.example.test/auth/cloud-platform', 'openid'],
              quotaProjectId: 'billing-project-1',
            },
          },
        }),
      verify: (result) =>
        expect(result.body.credentials).toEqual({
          kind: 'CLOUD_ADC',
          cloudAdc: {
            scopes: ['https://www.example.test/auth/cloud-platform', 'openid'],
            quotaProjectId: 'billing-project-1',
          },
        }),
    },
    {
      name: `${n}: cloud application default credentials with no extra settings`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => r.input({ credentials: { kind: 'CLOUD_ADC' } }),
      verify: (result) =>
        expect(result.body.credentials).toMatchObject({ kind: 'CLOUD_ADC', cloudAdc: { scopes: [] } }),
    },
    {
      name: `${n}: credentials of kind NONE`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => r.input({ credentials: { kind: 'NONE' } }),
      verify: (result) => expect(result.body.credentials).toEqual({ kind: 'NONE' }),
    },
    // Duplicates are exact: any differing part makes a new registration.
    {
      name: `${n}: the same registration with other credentials is not a duplicate`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      prepare: async (fixture) =>
        register(fixture, r, 'alice', { credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } } }),
      input: (prepared) => ({
        ...r.input(),
        modelIdentifier: prepared.modelIdentifier,
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
      }),
    },
    {
      name: `${n}: the same registration on another API path is not a duplicate`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ ...r.input(), modelIdentifier: prepared.modelIdentifier, apiPath: '/other' }),
    },
    {
      name: `${n}: the same registration by another owner is not a duplicate`,
      operation: op.create,
      as: 'bob',
      expect: 'OK',
      httpStatus: 201,
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ ...r.input(), modelIdentifier: prepared.modelIdentifier }),
    },
    // Read.
    {
      name: `${n}: get returns the registration as create did`,
      operation: op.get,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', {
          labels: { a: '1' },
          credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
        }),
      input: (prepared) => ({ [r.idField]: prepared[r.idField] }),
      verify: (result, prepared) => {
        expect(result.body).toMatchObject(prepared)
        expectNoSecretFields(result.body)
      },
    },
    {
      name: `${n}: list returns only the caller's registrations`,
      operation: op.list,
      as: 'bob',
      expect: 'OK',
      prepare: async (fixture) => ({
        mine: await register(fixture, r, 'bob'),
        theirs: await register(fixture, r, 'alice'),
      }),
      input: () => ({ maxResults: 1000 }),
      verify: (result, prepared, fixture) => {
        expect(ids(result, r)).toContain(prepared.mine[r.idField])
        expect(ids(result, r)).not.toContain(prepared.theirs[r.idField])
        for (const item of result.body[r.listField]) {
          expect(item.ownerId).toBe(fixture.bob.userId)
          expectNoSecretFields(item)
        }
      },
    },
    {
      name: `${n}: list pages with maxResults and nextToken, without overlap`,
      operation: op.list,
      as: (prepared) => prepared.owner.apiKey,
      expect: 'OK',
      prepare: async (fixture) => {
        const owner = await freshUser(fixture)
        const created = []
        for (let i = 0; i < 5; i++) created.push((await register(fixture, r, owner))[r.idField])
        return { owner, created }
      },
      input: () => ({ maxResults: 2 }),
      verify: async (result, prepared, fixture, transport) => {
        const seen = ids(result, r)
        expect(seen).toHaveLength(2)
        let token = result.body.nextToken
        while (token) {
          const page = await fixture.call(
            transport,
            op.list,
            { maxResults: 2, nextToken: token },
            prepared.owner.apiKey,
          )
          expect(page.status).toBe('OK')
          seen.push(...ids(page, r))
          token = page.body.nextToken
        }
        expect(seen).toEqual(prepared.created)
      },
    },
    {
      name: `${n}: list filters by label`,
      operation: op.list,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) => {
        const tag = unique()
        const matching = await register(fixture, r, 'alice', { labels: { batch: tag, colour: 'red' } })
        await register(fixture, r, 'alice', { labels: { batch: tag, colour: 'blue' } })
        await register(fixture, r, 'alice', { labels: { colour: 'red' } })
        return { tag, matching }
      },
      input: (prepared) => ({ labelFilter: { batch: prepared.tag, colour: 'red' } }),
      verify: (result, prepared) => expect(ids(result, r)).toEqual([prepared.matching[r.idField]]),
    },
    {
      name: `${n}: list filters by provider type`,
      operation: op.list,
      as: (prepared) => prepared.owner.apiKey,
      expect: 'OK',
      prepare: async (fixture) => {
        const owner = await freshUser(fixture)
        const wanted = await register(fixture, r, owner, { providerType: 'LLAMA_CPP' })
        await register(fixture, r, owner, { providerType: 'VLLM' })
        return { owner, wanted }
      },
      input: () => ({ providerType: 'LLAMA_CPP' }),
      verify: (result, prepared) => expect(ids(result, r)).toEqual([prepared.wanted[r.idField]]),
    },
    {
      name: `${n}: an admin lists another user's registrations with ownerId`,
      operation: op.list,
      as: 'admin',
      expect: 'OK',
      prepare: async (fixture) => register(fixture, r, 'bob'),
      input: (_p, fixture) => ({ ownerId: fixture.bob.userId, maxResults: 1000 }),
      verify: (result, prepared, fixture) => {
        expect(ids(result, r)).toContain(prepared[r.idField])
        for (const item of result.body[r.listField]) expect(item.ownerId).toBe(fixture.bob.userId)
      },
    },
    {
      name: `${n}: an empty list has no nextToken`,
      operation: op.list,
      as: (prepared) => prepared.apiKey,
      expect: 'OK',
      prepare: async (fixture) => freshUser(fixture),
      verify: (result) => {
        expect(result.body[r.listField]).toEqual([])
        expect(result.body.nextToken).toBeUndefined()
      },
    },
    // Update.
    {
      name: `${n}: update replaces the fields given, keeps the rest, and records who and when`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', { description: 'old', version: 'v1', labels: { keep: 'me' } }),
      input: (prepared) => ({
        [r.idField]: prepared[r.idField],
        displayName: 'Renamed',
        endpointUrl: 'https://moved.example.test',
        apiPath: '/v2/moved',
        modelIdentifier: `moved-${unique()}`,
        version: 'v2',
        supportedModalities: ['TEXT', 'AUDIO'],
      }),
      verify: (result, prepared, fixture) => {
        expect(result.body).toMatchObject({
          displayName: 'Renamed',
          endpointUrl: 'https://moved.example.test',
          apiPath: '/v2/moved',
          version: 'v2',
          supportedModalities: ['TEXT', 'AUDIO'],
          description: 'old',
          labels: { keep: 'me' },
          providerType: prepared.providerType,
          ownerId: fixture.alice.userId,
          createdAt: prepared.createdAt,
          createdById: fixture.alice.userId,
          updatedById: fixture.alice.userId,
        })
        expect(result.body.updatedAt).toBeGreaterThanOrEqual(prepared.updatedAt)
      },
    },
    {
      name: `${n}: update with the unchanged providerType is accepted`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) => register(fixture, r, 'alice', { providerType: 'LLAMA_CPP' }),
      input: (prepared) => ({
        [r.idField]: prepared[r.idField],
        providerType: 'LLAMA_CPP',
        displayName: 'same provider',
      }),
      verify: (result) =>
        expect(result.body).toMatchObject({ providerType: 'LLAMA_CPP', displayName: 'same provider' }),
    },
    {
      name: `${n}: replaceLabels replaces the set; mergeLabels merges into it`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) => register(fixture, r, 'alice', { labels: { a: '1', b: '2' } }),
      input: (prepared) => ({ [r.idField]: prepared[r.idField], replaceLabels: { c: '3' } }),
      verify: async (result, prepared, fixture, transport) => {
        expect(result.body.labels).toEqual({ c: '3' })
        const merged = await fixture.call(
          transport,
          op.update,
          { [r.idField]: prepared[r.idField], mergeLabels: { d: '4', c: '5' } },
          fixture.alice.apiKey,
        )
        expect(merged.body.labels).toEqual({ c: '5', d: '4' })
      },
    },
    {
      name: `${n}: repeating an identical update changes nothing, updatedAt included`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) => {
        const item = await register(fixture, r, 'alice')
        const first = await fixture.call(
          'rest',
          op.update,
          { [r.idField]: item[r.idField], displayName: 'Once', replaceLabels: { x: 'y' } },
          fixture.alice.apiKey,
        )
        return first.body
      },
      input: (prepared) => ({ [r.idField]: prepared[r.idField], displayName: 'Once', replaceLabels: { x: 'y' } }),
      verify: (result, prepared) => {
        expect(result.body.updatedAt).toBe(prepared.updatedAt)
        expect(result.body.updatedById).toBe(prepared.updatedById)
      },
    },
    {
      name: `${n}: "" clears description, version and monitoringEndpoint`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', { description: 'd', version: 'v', monitoringEndpoint: 'https://m.example.test' }),
      input: (prepared) => ({ [r.idField]: prepared[r.idField], description: '', version: '', monitoringEndpoint: '' }),
      verify: (result) => {
        for (const cleared of ['description', 'version', 'monitoringEndpoint'])
          expect(result.body[cleared]).toBeUndefined()
      },
    },
    {
      name: `${n}: update replaces the credentials with a new secret (new fingerprint)`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', { credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } } }),
      input: (prepared) => ({
        [r.idField]: prepared[r.idField],
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
      }),
      verify: (result, prepared) => {
        expect(result.body.credentials.apiKey.secretFingerprint).not.toBe(prepared.credentials.apiKey.secretFingerprint)
        expectNoSecretFields(result.body)
      },
    },
    {
      name: `${n}: update changes the header of an inline key without resending the secret`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', { credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } } }),
      input: (prepared) => ({
        [r.idField]: prepared[r.idField],
        credentials: { kind: 'API_KEY', apiKey: { headerName: 'x-goog-api-key' } },
      }),
      verify: (result, prepared) =>
        expect(result.body.credentials).toEqual({
          kind: 'API_KEY',
          apiKey: {
            headerName: 'x-goog-api-key',
            prefix: '',
            secretFingerprint: prepared.credentials.apiKey.secretFingerprint,
          },
        }),
    },
    {
      name: `${n}: update switches credentials from an inline key to application default credentials, then to none`,
      operation: op.update,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', { credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } } }),
      input: (prepared) => ({
        [r.idField]: prepared[r.idField],
        credentials: { kind: 'CLOUD_ADC', cloudAdc: { scopes: ['s1'] } },
      }),
      verify: async (result, prepared, fixture, transport) => {
        expect(result.body.credentials).toEqual({ kind: 'CLOUD_ADC', cloudAdc: { scopes: ['s1'] } })
        const none = await fixture.call(
          transport,
          op.update,
          { [r.idField]: prepared[r.idField], credentials: { kind: 'NONE' } },
          fixture.alice.apiKey,
        )
        expect(none.body.credentials).toEqual({ kind: 'NONE' })
      },
    },
    // Probe.
    {
      name: `${n}: probe answers 202 with a job id, and the probe of a local provider records OK`,
      operation: op.probe,
      as: 'alice',
      expect: 'OK',
      httpStatus: 202,
      prepare: async (fixture) => {
        const target = await r.startProbeTarget()
        return { target, item: await register(fixture, r, 'alice', target.overrides) }
      },
      input: (prepared) => ({ [r.idField]: prepared.item[r.idField] }),
      verify: async (result, prepared, fixture, transport) => {
        try {
          expect(result.body.jobId).toMatch(/^[0-9a-f-]{36}$/)
          const sql = fixture.server.server.context.sql
          await waitFor(
            'the probe job',
            async () =>
              (await sql<Array<{ status: string }>>`select status from jobs where id = ${result.body.jobId}`)[0]
                ?.status === 'SUCCEEDED',
            { timeoutMs: PROBE_WAIT_MS },
          )
          const seen = await fixture.call(
            transport,
            op.get,
            { [r.idField]: prepared.item[r.idField] },
            fixture.alice.apiKey,
          )
          expect(seen.body.lastProbe).toMatchObject({ status: 'OK', checkedAt: expect.any(Number) })
        } finally {
          await prepared.target.close()
        }
      },
    },
    // Delete.
    {
      name: `${n}: delete removes it for good: 204, then 404 for get, update and delete, and gone from the list`,
      operation: op.delete,
      as: 'alice',
      expect: 'OK',
      httpStatus: 204,
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [r.idField]: prepared[r.idField] }),
      verify: async (result, prepared, fixture, transport) => {
        if (transport === 'rest') expect(result.body).toBeUndefined()
        const id = { [r.idField]: prepared[r.idField] }
        expect((await fixture.call(transport, op.get, id, fixture.alice.apiKey)).status).toBe('NOT_FOUND')
        expect(
          (await fixture.call(transport, op.update, { ...id, displayName: 'x' }, fixture.alice.apiKey)).status,
        ).toBe('NOT_FOUND')
        expect((await fixture.call(transport, op.delete, id, fixture.alice.apiKey)).status).toBe('NOT_FOUND')
        const listed = await fixture.call(transport, op.list, { maxResults: 1000 }, fixture.alice.apiKey)
        expect(ids(listed, r)).not.toContain(prepared[r.idField])
      },
    },
    {
      name: `${n}: after delete the same registration can be made again`,
      operation: op.create,
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      prepare: async (fixture) => {
        const item = await register(fixture, r, 'alice')
        await fixture.call('rest', op.delete, { [r.idField]: item[r.idField] }, fixture.alice.apiKey)
        return item
      },
      input: (prepared) => ({ ...r.input(), modelIdentifier: prepared.modelIdentifier }),
    },
  ]
}

const EMBEDDER_HAPPY: ApiCase[] = [
  {
    name: 'embedder: every embedder setting is stored and returned',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () =>
      EMBEDDER.input({
        providerType: 'TEI',
        dimensionality: 1024,
        distributionType: 'SPARSE',
        maxSequenceLength: 8192,
        apiPath: '/embed_sparse',
      }),
    verify: (result) =>
      expect(result.body).toMatchObject({
        providerType: 'TEI',
        dimensionality: 1024,
        distributionType: 'SPARSE',
        maxSequenceLength: 8192,
        apiPath: '/embed_sparse',
      }),
  },
  {
    name: 'embedder: distributionType defaults to DENSE and maxSequenceLength is absent',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => EMBEDDER.input(),
    verify: (result) => {
      expect(result.body.distributionType).toBe('DENSE')
      expect(result.body.maxSequenceLength).toBeUndefined()
    },
  },
  {
    name: 'embedder: distributionType DENSE given explicitly',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => EMBEDDER.input({ distributionType: 'DENSE' }),
    verify: (result) => expect(result.body.distributionType).toBe('DENSE'),
  },
  ...[1, 2, INT32_MAX].map(
    (dimensionality): ApiCase => ({
      name: `embedder: dimensionality ${dimensionality} is inside the range`,
      operation: 'createEmbedder',
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => EMBEDDER.input({ dimensionality }),
      verify: (result) => expect(result.body.dimensionality).toBe(dimensionality),
    }),
  ),
  ...[1, INT32_MAX].map(
    (maxSequenceLength): ApiCase => ({
      name: `embedder: maxSequenceLength ${maxSequenceLength} is inside the range`,
      operation: 'createEmbedder',
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => EMBEDDER.input({ maxSequenceLength }),
      verify: (result) => expect(result.body.maxSequenceLength).toBe(maxSequenceLength),
    }),
  ),
  {
    name: 'embedder: the same registration with another dimensionality is not a duplicate',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    prepare: async (fixture) => register(fixture, EMBEDDER, 'alice', { dimensionality: 384 }),
    input: (prepared) => EMBEDDER.input({ modelIdentifier: prepared.modelIdentifier, dimensionality: 385 }),
  },
  {
    name: 'embedder: update changes dimensionality, distributionType and maxSequenceLength',
    operation: 'updateEmbedder',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => register(fixture, EMBEDDER, 'alice'),
    input: (prepared) => ({
      embedderId: prepared.embedderId,
      dimensionality: 1536,
      distributionType: 'SPARSE',
      maxSequenceLength: 512,
    }),
    verify: (result) =>
      expect(result.body).toMatchObject({ dimensionality: 1536, distributionType: 'SPARSE', maxSequenceLength: 512 }),
  },
  {
    // Regression: keeping the stored secret used to copy the whole stored row over the update.
    name: 'embedder: a setting and a new credential header in one update both take effect, keeping the secret',
    operation: 'updateEmbedder',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) =>
      register(fixture, EMBEDDER, 'alice', {
        maxSequenceLength: 100,
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
      }),
    input: (prepared) => ({
      embedderId: prepared.embedderId,
      maxSequenceLength: 30,
      credentials: { kind: 'API_KEY', apiKey: { headerName: 'X-Key' } },
    }),
    verify: (result, prepared) => {
      expect(result.body.maxSequenceLength).toBe(30)
      expect(result.body.credentials.apiKey).toMatchObject({
        headerName: 'X-Key',
        secretFingerprint: prepared.credentials.apiKey.secretFingerprint,
      })
    },
  },
]

const FULL_SAMPLING = {
  maxTokens: 4096,
  temperature: 0.7,
  topP: 0.9,
  topK: 40,
  frequencyPenalty: 0.5,
  presencePenalty: -0.5,
  stopSequences: ['</s>', '\n\nHuman:'],
}
const ALL_CAPABILITIES_FLIPPED = {
  supportsChat: false,
  supportsCompletion: true,
  supportsFunctionCalling: true,
  supportsSamplingParameters: false,
  supportsStreaming: true,
  supportsSystemMessages: false,
}
export const DEFAULT_CAPABILITIES = {
  supportsChat: true,
  supportsCompletion: false,
  supportsFunctionCalling: false,
  supportsSamplingParameters: true,
  supportsStreaming: false,
  supportsSystemMessages: true,
}

/** Inside-the-range edges of every sampling setting (the ranges samplingParamsSchema accepts). */
const SAMPLING_INSIDE: Array<[string, number | string[]]> = [
  ['temperature', 0],
  ['temperature', 2],
  ['temperature', 1.25],
  ['topP', 0],
  ['topP', 1],
  ['topP', 0.5],
  ['frequencyPenalty', -2],
  ['frequencyPenalty', 2],
  ['frequencyPenalty', 0],
  ['presencePenalty', -2],
  ['presencePenalty', 2],
  ['presencePenalty', 0],
  ['maxTokens', 1],
  ['maxTokens', INT32_MAX],
  ['topK', 1],
  ['topK', INT32_MAX],
  ['stopSequences', ['x']],
  ['stopSequences', Array.from({ length: 16 }, (_, i) => `stop-${i}`)],
  ['stopSequences', ['s'.repeat(256)]],
]

const LLM_HAPPY: ApiCase[] = [
  {
    name: 'LLM: capabilities take their defaults and no sampling settings are set',
    operation: 'createLlm',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => LLM.input(),
    verify: (result) => {
      expect(result.body.capabilities).toEqual(DEFAULT_CAPABILITIES)
      expect(result.body.defaultSamplingParams).toBeUndefined()
      expect(result.body.clientConfig).toBeUndefined()
      expect(result.body.maxContextLength).toBeUndefined()
    },
  },
  {
    name: 'LLM: every LLM setting is stored and returned',
    operation: 'createLlm',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () =>
      LLM.input({
        providerType: 'CUSTOM_VENDORA_COMPATIBLE',
        apiPath: '/v1/completions',
        clientConfig: '{"timeoutMs": 30000, "retries": {"max": 3}}',
        maxContextLength: 131072,
        capabilities: ALL_CAPABILITIES_FLIPPED,
        defaultSamplingParams: FULL_SAMPLING,
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
      }),
    verify: (result) => {
      expect(result.body).toMatchObject({
        providerType: 'CUSTOM_VENDORA_COMPATIBLE',
        apiPath: '/v1/completions',
        clientConfig: '{"timeoutMs": 30000, "retries": {"max": 3}}',
        maxContextLength: 131072,
        capabilities: ALL_CAPABILITIES_FLIPPED,
        defaultSamplingParams: FULL_SAMPLING,
      })
      expectNoSecretFields(result.body)
    },
  },
  ...Object.keys(DEFAULT_CAPABILITIES).flatMap((flag) =>
    [true, false].map(
      (value): ApiCase => ({
        name: `LLM: capability ${flag}=${value} alone; the other flags keep their defaults`,
        operation: 'createLlm',
        as: 'alice',
        expect: 'OK',
        httpStatus: 201,
        input: () => LLM.input({ capabilities: { [flag]: value } }),
        verify: (result) => expect(result.body.capabilities).toEqual({ ...DEFAULT_CAPABILITIES, [flag]: value }),
      }),
    ),
  ),
  ...SAMPLING_INSIDE.map(
    ([setting, value]): ApiCase => ({
      name: `LLM: sampling ${setting}=${Array.isArray(value) ? `[${value.length} items]` : value} is inside the range`,
      operation: 'createLlm',
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => LLM.input({ defaultSamplingParams: { [setting]: value } }),
      verify: (result) => expect(result.body.defaultSamplingParams[setting]).toEqual(value),
    }),
  ),
  ...[1, INT32_MAX].map(
    (maxContextLength): ApiCase => ({
      name: `LLM: maxContextLength ${maxContextLength} is inside the range`,
      operation: 'createLlm',
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => LLM.input({ maxContextLength }),
      verify: (result) => expect(result.body.maxContextLength).toBe(maxContextLength),
    }),
  ),
  ...['{}', '{"a":[1,2,{"b":null}],"c":"ü"}'].map(
    (clientConfig): ApiCase => ({
      name: `LLM: clientConfig ${clientConfig} is kept as the JSON text given`,
      operation: 'createLlm',
      as: 'alice',
      expect: 'OK',
      httpStatus: 201,
      input: () => LLM.input({ clientConfig }),
      verify: (result) => expect(result.body.clientConfig).toBe(clientConfig),
    }),
  ),
  {
    name: 'LLM: update replaces capabilities and sampling settings as a whole, and "" clears clientConfig',
    operation: 'updateLlm',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) =>
      register(fixture, LLM, 'alice', {
        capabilities: ALL_CAPABILITIES_FLIPPED,
        defaultSamplingParams: FULL_SAMPLING,
        clientConfig: '{"a":1}',
      }),
    input: (prepared) => ({
      llmId: prepared.llmId,
      capabilities: { supportsStreaming: true },
      defaultSamplingParams: { temperature: 0.1 },
      clientConfig: '',
    }),
    verify: (result) => {
      expect(result.body.capabilities).toEqual({ ...DEFAULT_CAPABILITIES, supportsStreaming: true })
      expect(result.body.defaultSamplingParams).toEqual({ temperature: 0.1, stopSequences: [] })
      expect(result.body.clientConfig).toBeUndefined()
    },
  },
  {
    name: 'LLM: update sets clientConfig and maxContextLength and keeps sampling settings not mentioned',
    operation: 'updateLlm',
    as: 'alice',
    expect: 'OK',
    prepare: async (fixture) => register(fixture, LLM, 'alice', { defaultSamplingParams: FULL_SAMPLING }),
    input: (prepared) => ({ llmId: prepared.llmId, clientConfig: '{"region":"eu"}', maxContextLength: 8192 }),
    verify: (result) =>
      expect(result.body).toMatchObject({
        clientConfig: '{"region":"eu"}',
        maxContextLength: 8192,
        defaultSamplingParams: FULL_SAMPLING,
      }),
  },
]

const RERANKER_HAPPY: ApiCase[] = [
  {
    name: 'reranker: create carries only the fields every registration has',
    operation: 'createReranker',
    as: 'alice',
    expect: 'OK',
    httpStatus: 201,
    input: () => RERANKER.input({ providerType: 'TEI' }),
    verify: (result) => {
      for (const absent of [
        'dimensionality',
        'distributionType',
        'maxSequenceLength',
        'capabilities',
        'defaultSamplingParams',
        'clientConfig',
      ])
        expect(result.body[absent]).toBeUndefined()
      expect(result.body.apiPath).toBe('/rerank')
    },
  },
]

export const HAPPY_CASES: ApiCase[] = [
  ...sharedHappyCases(EMBEDDER),
  ...EMBEDDER_HAPPY,
  ...sharedHappyCases(LLM),
  ...LLM_HAPPY,
  ...sharedHappyCases(RERANKER),
  ...RERANKER_HAPPY,
]

const tooManyLabels = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))

/** URLs that must be refused, for endpointUrl and monitoringEndpoint alike. */
const BAD_URLS: Array<[string, string]> = [
  ['not a URL', 'no scheme'],
  ['ftp://files.example.test/models', 'not http(s)'],
  ['http://', 'no host'],
  ['https://user:password@llm.example.test', 'carrying a password'],
  ['http://host .example.test', 'with a space'],
  [`https://example.test/${'p'.repeat(2040)}`, 'over 2048 characters'],
  ['', 'empty'],
]

function sharedErrorCases(r: Resource): ApiCase[] {
  const op = r.ops
  const n = r.noun
  const id = r.idField
  const cred = (credentials: unknown) => () => r.input({ credentials })
  return [
    {
      name: `${n}: create without a key`,
      operation: op.create,
      as: 'none',
      expect: 'UNAUTHENTICATED',
      input: () => r.input(),
    },
    { name: `${n}: list without a key`, operation: op.list, as: 'none', expect: 'UNAUTHENTICATED' },
    {
      name: `${n}: get without a key`,
      operation: op.get,
      as: 'none',
      expect: 'UNAUTHENTICATED',
      input: () => ({ [id]: UNKNOWN_ID }),
    },
    {
      name: `${n}: update without a key`,
      operation: op.update,
      as: 'none',
      expect: 'UNAUTHENTICATED',
      input: () => ({ [id]: UNKNOWN_ID, displayName: 'x' }),
    },
    {
      name: `${n}: delete without a key`,
      operation: op.delete,
      as: 'none',
      expect: 'UNAUTHENTICATED',
      input: () => ({ [id]: UNKNOWN_ID }),
    },
    {
      name: `${n}: probe without a key`,
      operation: op.probe,
      as: 'none',
      expect: 'UNAUTHENTICATED',
      input: () => ({ [id]: UNKNOWN_ID }),
    },
    ...r.required.map(
      (field): ApiCase => ({
        name: `${n}: create without ${field}`,
        operation: op.create,
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field,
        input: () => ({ ...r.input(), [field]: undefined }),
        verify: (result) => expect(result.message).toContain(`${field}: is required`),
      }),
    ),
    {
      name: `${n}: create with an empty displayName`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'displayName',
      input: () => r.input({ displayName: '' }),
    },
    {
      name: `${n}: create with a blank displayName`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'displayName',
      input: () => r.input({ displayName: '   ' }),
    },
    {
      name: `${n}: create with a displayName of 201 characters`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'displayName',
      input: () => r.input({ displayName: 'd'.repeat(201) }),
    },
    {
      name: `${n}: create with an empty modelIdentifier`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'modelIdentifier',
      input: () => r.input({ modelIdentifier: '' }),
    },
    {
      name: `${n}: create with an unknown providerType`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      input: () => r.input({ providerType: 'BOGUS' }),
    },
    {
      name: `${n}: create with a lower-case providerType`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      input: () => r.input({ providerType: 'vllm' }),
      only: 'rest',
    },
    {
      name: `${n}: create with the other resource's provider type ${r.foreignProviderType}`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      input: () => r.input({ providerType: r.foreignProviderType }),
    },
    {
      name: `${n}: create with an unknown modality`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'supportedModalities.1',
      input: () => r.input({ supportedModalities: ['TEXT', 'SMELL'] }),
    },
    {
      name: `${n}: create with an empty modality list`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'supportedModalities',
      input: () => r.input({ supportedModalities: [] }),
      only: 'rest',
    },
    {
      name: `${n}: create with modalities that are not a list`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'supportedModalities',
      input: () => r.input({ supportedModalities: 'TEXT' }),
      only: 'rest',
    },
    ...BAD_URLS.map(
      ([url, why]): ApiCase => ({
        name: `${n}: create with an endpointUrl ${why}`,
        operation: op.create,
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'endpointUrl',
        input: () => r.input({ endpointUrl: url }),
      }),
    ),
    ...BAD_URLS.map(
      ([url, why]): ApiCase => ({
        name: `${n}: create with a monitoringEndpoint ${why}`,
        operation: op.create,
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'monitoringEndpoint',
        input: () => r.input({ monitoringEndpoint: url }),
      }),
    ),
    {
      name: `${n}: create with an apiPath not starting with /`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'apiPath',
      input: () => r.input({ apiPath: 'embeddings' }),
    },
    {
      name: `${n}: create with an apiPath containing a space`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'apiPath',
      input: () => r.input({ apiPath: '/v1/my path' }),
    },
    {
      name: `${n}: create with an empty apiPath`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'apiPath',
      input: () => r.input({ apiPath: '' }),
    },
    {
      name: `${n}: create with an upper-case label key`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'labels.Team',
      input: () => r.input({ labels: { Team: 'x' } }),
    },
    {
      name: `${n}: create with 21 labels`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'labels',
      input: () => r.input({ labels: tooManyLabels }),
    },
    {
      name: `${n}: create with a label value over 255 characters`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'labels.a',
      input: () => r.input({ labels: { a: 'v'.repeat(256) } }),
    },
    {
      name: `${n}: create with a version over 128 characters`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'version',
      input: () => r.input({ version: 'v'.repeat(129) }),
    },
    {
      name: `${n}: create with a description over 2000 characters`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'description',
      input: () => r.input({ description: 'd'.repeat(2001) }),
    },
    {
      name: `${n}: create with an unknown field`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'temperatureKelvin',
      input: () => r.input({ temperatureKelvin: 300 }),
      only: 'rest',
    },
    {
      name: `${n}: create with a number where a string belongs`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'displayName',
      input: () => r.input({ displayName: 7 }),
      only: 'rest',
    },
    {
      name: `${n}: create with an ownerId that is not a UUID`,
      operation: op.create,
      as: 'root',
      expect: 'INVALID_ARGUMENT',
      field: 'ownerId',
      input: () => r.input({ ownerId: 'alice' }),
    },
    {
      name: `${n}: create for a user that does not exist`,
      operation: op.create,
      as: 'root',
      expect: 'NOT_FOUND',
      input: () => r.input({ ownerId: UNKNOWN_ID }),
    },
    {
      name: `${n}: create with a client id that is not a UUID`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: id,
      input: () => r.input({ [id]: 'my-model' }),
    },
    {
      name: `${n}: create reusing an existing id`,
      operation: op.create,
      as: 'alice',
      expect: 'ALREADY_EXISTS',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => r.input({ [id]: prepared[id] }),
    },
    {
      name: `${n}: registering the same owner, provider, URL, path, model and credentials again`,
      operation: op.create,
      as: 'alice',
      expect: 'ALREADY_EXISTS',
      prepare: async (fixture) => {
        const secret = newSecret()
        return {
          secret,
          item: await register(fixture, r, 'alice', {
            credentials: { kind: 'API_KEY', apiKey: { inlineSecret: secret } },
          }),
        }
      },
      // Display name, labels, header name and the like do not make it a new registration.
      input: (prepared) => ({
        ...r.input(),
        modelIdentifier: prepared.item.modelIdentifier,
        displayName: 'Another name',
        labels: { other: 'x' },
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: prepared.secret, headerName: 'x-other' } },
      }),
      verify: (result) => expect(result.message).toMatch(/identical/),
    },
    {
      name: `${n}: registering the same thing again without credentials`,
      operation: op.create,
      as: 'alice',
      expect: 'ALREADY_EXISTS',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ ...r.input(), modelIdentifier: prepared.modelIdentifier }),
    },
    {
      name: `${n}: registering the same cloud credentials again (scopes in another order)`,
      operation: op.create,
      as: 'alice',
      expect: 'ALREADY_EXISTS',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', {
          credentials: { kind: 'CLOUD_ADC', cloudAdc: { scopes: ['a', 'b'], quotaProjectId: 'q' } },
        }),
      input: (prepared) => ({
        ...r.input(),
        modelIdentifier: prepared.modelIdentifier,
        credentials: { kind: 'CLOUD_ADC', cloudAdc: { scopes: ['b', 'a'], quotaProjectId: 'q' } },
      }),
    },
    // Credentials.
    {
      name: `${n}: credentials without a kind`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.kind',
      input: cred({ apiKey: { inlineSecret: 's' } }),
    },
    {
      name: `${n}: credentials with an unknown kind`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.kind',
      input: cred({ kind: 'OAUTH' }),
    },
    {
      name: `${n}: API_KEY credentials without apiKey`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey',
      input: cred({ kind: 'API_KEY' }),
    },
    {
      name: `${n}: API_KEY credentials without the secret`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.inlineSecret',
      input: cred({ kind: 'API_KEY', apiKey: { headerName: 'x' } }),
    },
    {
      name: `${n}: API_KEY credentials with an empty secret`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.inlineSecret',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: '' } }),
    },
    {
      name: `${n}: API_KEY credentials with a line break in the secret`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.inlineSecret',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: 'abc\ndef' } }),
    },
    {
      name: `${n}: API_KEY credentials with a secret over 8192 characters`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.inlineSecret',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: 's'.repeat(8193) } }),
    },
    {
      name: `${n}: API_KEY credentials with a header name that is not a token`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.headerName',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: 's', headerName: 'X Api Key' } }),
    },
    {
      name: `${n}: API_KEY credentials with a prefix holding a line break`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.prefix',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: 's', prefix: 'Bearer\r\n' } }),
    },
    {
      name: `${n}: a secret fingerprint cannot be sent`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.secretFingerprint',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: 's', secretFingerprint: 'deadbeef' } }),
    },
    {
      name: `${n}: apiKey with kind NONE`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey',
      input: cred({ kind: 'NONE', apiKey: { inlineSecret: 's' } }),
    },
    {
      name: `${n}: apiKey with kind CLOUD_ADC`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey',
      input: cred({ kind: 'CLOUD_ADC', apiKey: { inlineSecret: 's' } }),
    },
    {
      name: `${n}: cloudAdc with kind API_KEY`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.cloudAdc',
      input: cred({ kind: 'API_KEY', apiKey: { inlineSecret: 's' }, cloudAdc: { scopes: ['x'] } }),
    },
    {
      name: `${n}: cloudAdc with kind NONE`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.cloudAdc',
      input: cred({ kind: 'NONE', cloudAdc: {} }),
    },
    {
      name: `${n}: a cloud scope with a space`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.cloudAdc.scopes.0',
      input: cred({ kind: 'CLOUD_ADC', cloudAdc: { scopes: ['two words'] } }),
    },
    {
      name: `${n}: an empty cloud scope`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.cloudAdc.scopes.1',
      input: cred({ kind: 'CLOUD_ADC', cloudAdc: { scopes: ['ok', ''] } }),
    },
    {
      name: `${n}: 51 cloud scopes`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.cloudAdc.scopes',
      input: cred({ kind: 'CLOUD_ADC', cloudAdc: { scopes: Array.from({ length: 51 }, (_, i) => `s${i}`) } }),
    },
    {
      name: `${n}: a quota project id with a slash`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.cloudAdc.quotaProjectId',
      input: cred({ kind: 'CLOUD_ADC', cloudAdc: { quotaProjectId: 'projects/x' } }),
    },
    {
      name: `${n}: credentials that are not an object`,
      operation: op.create,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials',
      input: cred('API_KEY'),
      only: 'rest',
    },
    // Get, update and delete by id.
    {
      name: `${n}: get with an id that is not a UUID`,
      operation: op.get,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: id,
      input: () => ({ [id]: 'not-a-uuid' }),
    },
    {
      name: `${n}: get of one that does not exist`,
      operation: op.get,
      as: 'alice',
      expect: 'NOT_FOUND',
      input: () => ({ [id]: UNKNOWN_ID }),
    },
    {
      name: `${n}: update with an id that is not a UUID`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: id,
      input: () => ({ [id]: '42', displayName: 'x' }),
    },
    {
      name: `${n}: update of one that does not exist`,
      operation: op.update,
      as: 'alice',
      expect: 'NOT_FOUND',
      input: () => ({ [id]: UNKNOWN_ID, displayName: 'x' }),
    },
    {
      name: `${n}: delete with an id that is not a UUID`,
      operation: op.delete,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: id,
      input: () => ({ [id]: 'x' }),
    },
    {
      name: `${n}: delete of one that does not exist`,
      operation: op.delete,
      as: 'alice',
      expect: 'NOT_FOUND',
      input: () => ({ [id]: UNKNOWN_ID }),
    },
    {
      name: `${n}: probe with an id that is not a UUID`,
      operation: op.probe,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: id,
      input: () => ({ [id]: 'x' }),
    },
    {
      name: `${n}: probe of one that does not exist`,
      operation: op.probe,
      as: 'alice',
      expect: 'NOT_FOUND',
      input: () => ({ [id]: UNKNOWN_ID }),
    },
    {
      name: `${n}: update trying to change providerType`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      prepare: async (fixture) => register(fixture, r, 'alice', { providerType: 'VLLM' }),
      input: (prepared) => ({ [id]: prepared[id], providerType: 'LLAMA_CPP' }),
      verify: async (result, prepared, fixture, transport) => {
        expect(result.message).toMatch(/providerType: cannot be changed/)
        expect(
          (await fixture.call(transport, op.get, { [id]: prepared[id] }, fixture.alice.apiKey)).body.providerType,
        ).toBe('VLLM')
      },
    },
    {
      name: `${n}: update trying to change providerType along with other fields changes nothing`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      prepare: async (fixture) => register(fixture, r, 'alice', { providerType: 'VLLM' }),
      input: (prepared) => ({ [id]: prepared[id], providerType: 'VENDORA', displayName: 'sneaky' }),
      verify: async (_result, prepared, fixture, transport) =>
        expect(
          (await fixture.call(transport, op.get, { [id]: prepared[id] }, fixture.alice.apiKey)).body,
        ).toMatchObject({ providerType: 'VLLM', displayName: prepared.displayName }),
    },
    {
      name: `${n}: update to an unknown providerType`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], providerType: 'BOGUS' }),
    },
    {
      name: `${n}: update with both replaceLabels and mergeLabels`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'mergeLabels',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], replaceLabels: { a: '1' }, mergeLabels: { b: '2' } }),
    },
    {
      name: `${n}: update merging labels past 20`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'mergeLabels',
      prepare: async (fixture) =>
        register(fixture, r, 'alice', {
          labels: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])),
        }),
      input: (prepared) => ({ [id]: prepared[id], mergeLabels: { extra: 'x' } }),
    },
    {
      name: `${n}: update trying to change the owner`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'ownerId',
      only: 'rest',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared, fixture) => ({ [id]: prepared[id], ownerId: fixture.bob.userId }),
    },
    {
      name: `${n}: update trying to set createdAt`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'createdAt',
      only: 'rest',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], createdAt: 0 }),
    },
    {
      name: `${n}: update with a malformed endpointUrl`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'endpointUrl',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], endpointUrl: 'localhost:8080' }),
    },
    {
      name: `${n}: update with an empty displayName`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'displayName',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], displayName: '' }),
    },
    {
      name: `${n}: update with a malformed monitoringEndpoint (only "" clears it)`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'monitoringEndpoint',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], monitoringEndpoint: 'gopher://old' }),
    },
    {
      name: `${n}: update with an empty modality list`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'supportedModalities',
      prepare: async (fixture) => register(fixture, r, 'alice'),
      input: (prepared) => ({ [id]: prepared[id], supportedModalities: [] }),
    },
    {
      name: `${n}: update to an inline key without a secret when none is stored`,
      operation: op.update,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'credentials.apiKey.inlineSecret',
      prepare: async (fixture) => register(fixture, r, 'alice', { credentials: { kind: 'CLOUD_ADC' } }),
      input: (prepared) => ({ [id]: prepared[id], credentials: { kind: 'API_KEY', apiKey: { headerName: 'x-key' } } }),
    },
    {
      name: `${n}: update that would make it identical to another registration`,
      operation: op.update,
      as: 'alice',
      expect: 'ALREADY_EXISTS',
      prepare: async (fixture) => ({
        first: await register(fixture, r, 'alice'),
        second: await register(fixture, r, 'alice'),
      }),
      input: (prepared) => ({ [id]: prepared.second[id], modelIdentifier: prepared.first.modelIdentifier }),
      verify: async (_result, prepared, fixture, transport) =>
        expect(
          (await fixture.call(transport, op.get, { [id]: prepared.second[id] }, fixture.alice.apiKey)).body
            .modelIdentifier,
        ).toBe(prepared.second.modelIdentifier),
    },
    // List.
    {
      name: `${n}: list with maxResults 0`,
      operation: op.list,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'maxResults',
      input: () => ({ maxResults: 0 }),
      only: 'rest',
    },
    {
      name: `${n}: list with maxResults over 1000`,
      operation: op.list,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'maxResults',
      input: () => ({ maxResults: 1001 }),
    },
    {
      name: `${n}: list with a forged page token`,
      operation: op.list,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'nextToken',
      input: () => ({ nextToken: 'bm90LWEtdG9rZW4' }),
    },
    {
      name: `${n}: list by an unknown providerType`,
      operation: op.list,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'providerType',
      input: () => ({ providerType: 'BOGUS' }),
    },
    {
      name: `${n}: list by an invalid label key`,
      operation: op.list,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'labelFilter.BAD',
      input: () => ({ labelFilter: { BAD: 'x' } }),
    },
    {
      name: `${n}: list with an unknown query parameter`,
      operation: op.list,
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'sort',
      input: () => ({ sort: 'name' }),
      only: 'rest',
    },
    {
      name: `${n}: list with an ownerId that is not a UUID`,
      operation: op.list,
      as: 'admin',
      expect: 'INVALID_ARGUMENT',
      field: 'ownerId',
      input: () => ({ ownerId: 'bob' }),
    },
  ]
}

const EMBEDDER_ERRORS: ApiCase[] = [
  ...[0, -1, -768].map(
    (dimensionality): ApiCase => ({
      name: `embedder: dimensionality ${dimensionality} is outside the range`,
      operation: 'createEmbedder',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'dimensionality',
      input: () => EMBEDDER.input({ dimensionality }),
    }),
  ),
  {
    name: 'embedder: dimensionality 2147483648 is outside int32',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'dimensionality',
    input: () => EMBEDDER.input({ dimensionality: INT32_MAX + 1 }),
    only: 'rest',
  },
  {
    name: 'embedder: a fractional dimensionality',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'dimensionality',
    input: () => EMBEDDER.input({ dimensionality: 768.5 }),
    only: 'rest',
  },
  {
    name: 'embedder: dimensionality as a string',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'dimensionality',
    input: () => EMBEDDER.input({ dimensionality: '768' }),
    only: 'rest',
  },
  ...[0, -1].map(
    (maxSequenceLength): ApiCase => ({
      name: `embedder: maxSequenceLength ${maxSequenceLength} is outside the range`,
      operation: 'createEmbedder',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'maxSequenceLength',
      input: () => EMBEDDER.input({ maxSequenceLength }),
    }),
  ),
  {
    name: 'embedder: maxSequenceLength 2147483648 is outside int32',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'maxSequenceLength',
    input: () => EMBEDDER.input({ maxSequenceLength: INT32_MAX + 1 }),
    only: 'rest',
  },
  {
    name: 'embedder: an unknown distributionType',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'distributionType',
    input: () => EMBEDDER.input({ distributionType: 'MIXED' }),
  },
  {
    name: 'embedder: update to dimensionality 0',
    operation: 'updateEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'dimensionality',
    prepare: async (fixture) => register(fixture, EMBEDDER, 'alice'),
    input: (prepared) => ({ embedderId: prepared.embedderId, dimensionality: 0 }),
  },
  {
    name: 'embedder: sampling settings are not embedder settings',
    operation: 'createEmbedder',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'defaultSamplingParams',
    only: 'rest',
    input: () => EMBEDDER.input({ defaultSamplingParams: { temperature: 1 } }),
  },
]

/** Just outside every sampling range, and the other ways a setting can be malformed. */
const SAMPLING_OUTSIDE: Array<[string, unknown, string, boolean?]> = [
  ['temperature', -0.01, 'defaultSamplingParams.temperature'],
  ['temperature', 2.01, 'defaultSamplingParams.temperature'],
  ['temperature', -1, 'defaultSamplingParams.temperature'],
  ['topP', -0.01, 'defaultSamplingParams.topP'],
  ['topP', 1.01, 'defaultSamplingParams.topP'],
  ['frequencyPenalty', -2.01, 'defaultSamplingParams.frequencyPenalty'],
  ['frequencyPenalty', 2.01, 'defaultSamplingParams.frequencyPenalty'],
  ['presencePenalty', -2.01, 'defaultSamplingParams.presencePenalty'],
  ['presencePenalty', 2.01, 'defaultSamplingParams.presencePenalty'],
  ['maxTokens', 0, 'defaultSamplingParams.maxTokens'],
  ['maxTokens', -1, 'defaultSamplingParams.maxTokens'],
  ['topK', 0, 'defaultSamplingParams.topK'],
  ['topK', -5, 'defaultSamplingParams.topK'],
  ['stopSequences', Array.from({ length: 17 }, (_, i) => `s${i}`), 'defaultSamplingParams.stopSequences'],
  ['stopSequences', ['ok', ''], 'defaultSamplingParams.stopSequences.1'],
  ['stopSequences', ['s'.repeat(257)], 'defaultSamplingParams.stopSequences.0'],
  // Only JSON can carry these.
  ['maxTokens', INT32_MAX + 1, 'defaultSamplingParams.maxTokens', true],
  ['maxTokens', 10.5, 'defaultSamplingParams.maxTokens', true],
  ['topK', 2.5, 'defaultSamplingParams.topK', true],
  ['temperature', '0.5', 'defaultSamplingParams.temperature', true],
  ['stopSequences', 'STOP', 'defaultSamplingParams.stopSequences', true],
  ['seed', 42, 'defaultSamplingParams.seed', true],
]

const LLM_ERRORS: ApiCase[] = [
  ...SAMPLING_OUTSIDE.map(
    ([setting, value, field, restOnly]): ApiCase => ({
      name: `LLM: sampling ${setting}=${JSON.stringify(value)?.slice(0, 40)} is refused`,
      operation: 'createLlm',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field,
      only: restOnly ? 'rest' : undefined,
      input: () => LLM.input({ defaultSamplingParams: { [setting]: value } }),
    }),
  ),
  ...[0, -1].map(
    (maxContextLength): ApiCase => ({
      name: `LLM: maxContextLength ${maxContextLength} is outside the range`,
      operation: 'createLlm',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'maxContextLength',
      input: () => LLM.input({ maxContextLength }),
    }),
  ),
  {
    name: 'LLM: maxContextLength 2147483648 is outside int32',
    operation: 'createLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'maxContextLength',
    input: () => LLM.input({ maxContextLength: INT32_MAX + 1 }),
    only: 'rest',
  },
  ...['{not json', '', '[1,2]', '"text"', '42', 'null', '{"a":1} trailing'].map(
    (clientConfig): ApiCase => ({
      name: `LLM: clientConfig ${JSON.stringify(clientConfig)} is not JSON text of an object`,
      operation: 'createLlm',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'clientConfig',
      input: () => LLM.input({ clientConfig }),
    }),
  ),
  {
    name: 'LLM: clientConfig as a JSON object rather than text',
    operation: 'createLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'clientConfig',
    input: () => LLM.input({ clientConfig: { a: 1 } }),
    only: 'rest',
  },
  {
    name: 'LLM: clientConfig over 64 KiB',
    operation: 'createLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'clientConfig',
    input: () => LLM.input({ clientConfig: `{"a":"${'x'.repeat(65_536)}"}` }),
  },
  {
    name: 'LLM: a capability that is not a boolean',
    operation: 'createLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'capabilities.supportsChat',
    input: () => LLM.input({ capabilities: { supportsChat: 'yes' } }),
    only: 'rest',
  },
  {
    name: 'LLM: an unknown capability',
    operation: 'createLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'capabilities.supportsTelepathy',
    input: () => LLM.input({ capabilities: { supportsTelepathy: true } }),
    only: 'rest',
  },
  {
    name: 'LLM: dimensionality is not an LLM setting',
    operation: 'createLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'dimensionality',
    input: () => LLM.input({ dimensionality: 768 }),
    only: 'rest',
  },
  {
    name: 'LLM: update with temperature outside the range changes nothing',
    operation: 'updateLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'defaultSamplingParams.temperature',
    prepare: async (fixture) => register(fixture, LLM, 'alice', { defaultSamplingParams: { temperature: 1 } }),
    input: (prepared) => ({ llmId: prepared.llmId, defaultSamplingParams: { temperature: 3 } }),
    verify: async (_result, prepared, fixture, transport) =>
      expect(
        (await fixture.call(transport, 'getLlm', { llmId: prepared.llmId }, fixture.alice.apiKey)).body
          .defaultSamplingParams.temperature,
      ).toBe(1),
  },
  {
    name: 'LLM: update with invalid clientConfig',
    operation: 'updateLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'clientConfig',
    prepare: async (fixture) => register(fixture, LLM, 'alice'),
    input: (prepared) => ({ llmId: prepared.llmId, clientConfig: '{' }),
  },
  {
    name: 'LLM: update with maxContextLength 0',
    operation: 'updateLlm',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'maxContextLength',
    prepare: async (fixture) => register(fixture, LLM, 'alice'),
    input: (prepared) => ({ llmId: prepared.llmId, maxContextLength: 0 }),
  },
]

const RERANKER_ERRORS: ApiCase[] = [
  {
    name: 'reranker: dimensionality is not a reranker setting',
    operation: 'createReranker',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'dimensionality',
    input: () => RERANKER.input({ dimensionality: 768 }),
    only: 'rest',
  },
  {
    name: 'reranker: capabilities are not a reranker setting',
    operation: 'createReranker',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'capabilities',
    input: () => RERANKER.input({ capabilities: { supportsChat: true } }),
    only: 'rest',
  },
  {
    name: 'reranker: update with an unknown field changes nothing',
    operation: 'updateReranker',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'maxSequenceLength',
    only: 'rest',
    prepare: async (fixture) => register(fixture, RERANKER, 'alice'),
    input: (prepared) => ({ rerankerId: prepared.rerankerId, displayName: 'changed', maxSequenceLength: 512 }),
    verify: async (_result, prepared, fixture) =>
      expect(
        (await fixture.call('rest', 'getReranker', { rerankerId: prepared.rerankerId }, fixture.alice.apiKey)).body
          .displayName,
      ).toBe(prepared.displayName),
  },
]

export const ERROR_CASES: ApiCase[] = [
  ...sharedErrorCases(EMBEDDER),
  ...EMBEDDER_ERRORS,
  ...sharedErrorCases(LLM),
  ...LLM_ERRORS,
  ...sharedErrorCases(RERANKER),
  ...RERANKER_ERRORS,
]

function sharedSecurityCases(r: Resource): ApiCase[] {
  const op = r.ops
  const n = r.noun
  const id = r.idField
  const bobs = async (fixture: IdentityFixture) => register(fixture, r, 'bob', { labels: { owner: 'bob' } })
  const stillThere = async (prepared: any, fixture: IdentityFixture, transport: Transport) => {
    const seen = await fixture.call(transport, op.get, { [id]: prepared[id] }, fixture.bob.apiKey)
    expect(seen.status).toBe('OK')
    expect(seen.body).toMatchObject({
      displayName: prepared.displayName,
      labels: prepared.labels,
      updatedAt: prepared.updatedAt,
    })
  }
  return [
    {
      name: `${n}: a user cannot see another user's registration: get is NOT_FOUND, exactly as for one that does not exist`,
      operation: op.get,
      as: 'alice',
      expect: 'NOT_FOUND',
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id] }),
      verify: async (result, prepared, fixture, transport) => {
        const missing = await fixture.call(transport, op.get, { [id]: UNKNOWN_ID }, fixture.alice.apiKey)
        expect(result.message.replace(prepared[id], 'ID')).toBe(missing.message.replace(UNKNOWN_ID, 'ID'))
      },
    },
    {
      name: `${n}: a user cannot update another user's registration (NOT_FOUND; unchanged)`,
      operation: op.update,
      as: 'alice',
      expect: 'NOT_FOUND',
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id], displayName: 'mine now', replaceLabels: { owner: 'alice' } }),
      verify: (_r, prepared, fixture, transport) => stillThere(prepared, fixture, transport),
    },
    {
      name: `${n}: a user cannot change another user's credentials (NOT_FOUND; unchanged)`,
      operation: op.update,
      as: 'alice',
      expect: 'NOT_FOUND',
      prepare: bobs,
      input: (prepared) => ({
        [id]: prepared[id],
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: newSecret() } },
      }),
      verify: (_r, prepared, fixture, transport) => stillThere(prepared, fixture, transport),
    },
    {
      name: `${n}: a user cannot delete another user's registration (NOT_FOUND; still there)`,
      operation: op.delete,
      as: 'alice',
      expect: 'NOT_FOUND',
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id] }),
      verify: (_r, prepared, fixture, transport) => stillThere(prepared, fixture, transport),
    },
    {
      name: `${n}: a user cannot probe another user's registration (NOT_FOUND)`,
      operation: op.probe,
      as: 'alice',
      expect: 'NOT_FOUND',
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id] }),
    },
    {
      name: `${n}: a user cannot list another user's registrations`,
      operation: op.list,
      as: 'alice',
      expect: 'PERMISSION_DENIED',
      input: (_p, f) => ({ ownerId: f.bob.userId }),
    },
    {
      name: `${n}: a user's list never shows another user's registrations, whatever the filter`,
      operation: op.list,
      as: 'alice',
      expect: 'OK',
      prepare: async (fixture) => register(fixture, r, 'bob', { labels: { shared: 'tag' }, providerType: 'VENDORA' }),
      input: () => ({ labelFilter: { shared: 'tag' }, providerType: 'VENDORA', maxResults: 1000 }),
      verify: (result, prepared) => expect(ids(result, r)).not.toContain(prepared[id]),
    },
    {
      name: `${n}: a user cannot register for another user`,
      operation: op.create,
      as: 'alice',
      expect: 'PERMISSION_DENIED',
      input: (_p, f) => r.input({ ownerId: f.bob.userId }),
    },
    {
      name: `${n}: a user cannot register for a user that does not exist (403 before 404)`,
      operation: op.create,
      as: 'alice',
      expect: 'PERMISSION_DENIED',
      input: () => r.input({ ownerId: UNKNOWN_ID }),
    },
    {
      name: `${n}: a user cannot take another user's client id (409, and nothing of theirs is shown)`,
      operation: op.create,
      as: 'alice',
      expect: 'ALREADY_EXISTS',
      prepare: bobs,
      input: (prepared) => r.input({ [id]: prepared[id] }),
    },
    {
      name: `${n}: an admin reads another user's registration (GET_${n.toUpperCase()}_ANY)`,
      operation: op.get,
      as: 'admin',
      expect: 'OK',
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id] }),
      verify: (result, _p, fixture) => expect(result.body.ownerId).toBe(fixture.bob.userId),
    },
    {
      name: `${n}: an admin updates another user's registration (UPDATE_${n.toUpperCase()}_ANY); the owner stays`,
      operation: op.update,
      as: 'admin',
      expect: 'OK',
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id], mergeLabels: { audited: 'yes' } }),
      verify: (result, _p, fixture) =>
        expect(result.body).toMatchObject({
          ownerId: fixture.bob.userId,
          updatedById: fixture.admin.userId,
          labels: { owner: 'bob', audited: 'yes' },
        }),
    },
    {
      name: `${n}: an admin deletes another user's registration (DELETE_${n.toUpperCase()}_ANY)`,
      operation: op.delete,
      as: 'admin',
      expect: 'OK',
      httpStatus: 204,
      prepare: bobs,
      input: (prepared) => ({ [id]: prepared[id] }),
      verify: async (_r, prepared, fixture, transport) =>
        expect((await fixture.call(transport, op.get, { [id]: prepared[id] }, fixture.bob.apiKey)).status).toBe(
          'NOT_FOUND',
        ),
    },
    {
      name: `${n}: deleting a user deletes their registrations with them`,
      operation: 'deleteUser',
      as: 'root',
      expect: 'OK',
      httpStatus: 204,
      prepare: async (fixture) => {
        const owner = await freshUser(fixture)
        return { owner, item: await register(fixture, r, owner) }
      },
      input: (prepared) => ({ userId: prepared.owner.userId }),
      verify: async (_r, prepared, fixture, transport) =>
        expect((await fixture.call(transport, op.get, { [id]: prepared.item[id] }, fixture.root.apiKey)).status).toBe(
          'NOT_FOUND',
        ),
    },
  ]
}

export const SECURITY_CASES: ApiCase[] = [
  ...sharedSecurityCases(EMBEDDER),
  ...sharedSecurityCases(LLM),
  ...sharedSecurityCases(RERANKER),
]
