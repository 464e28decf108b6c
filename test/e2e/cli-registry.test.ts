// `memsvc embedder …`, `memsvc llm …` and `memsvc reranker …` end to end: every setting of
// a registration as an option, each credential form, capability flags in both forms,
// sampling settings, updates that change only what was given, and a probe of a local
// rerank server. Plaintext server; one user.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser, cleanUp, EXIT, expectError, type RunningServer, startServer } from '../support/cli.js'
import { createSandbox, type Sandbox } from '../support/executable.js'
import { type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { waitFor } from '../support/wait.js'

const TEST_TIMEOUT_MS = 60_000
const PROVIDER_SECRET = 'provider-secret-do-not-print-3f9a'

let sandbox: Sandbox
let server: RunningServer
let user: CliUser
let secretFile: string

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  server = await startServer(sandbox, { tls: false, dataDir: sandbox.makeDir('data') })
  await user.ok(['init', '--server', server.address])
  secretFile = path.join(sandbox.dir, 'provider-key.txt')
  fs.writeFileSync(secretFile, `${PROVIDER_SECRET}\n`, { mode: 0o600 })
}, 90_000)

afterAll(() => cleanUp([server], sandbox), 30_000)

interface Credentials {
  kind: string
  apiKey?: { headerName?: string; prefix?: string; secretFingerprint?: string; inlineSecret?: string }
  cloudAdc?: { scopes: string[]; quotaProjectId?: string }
}

describe('memsvc embedder', { timeout: TEST_TIMEOUT_MS }, () => {
  let embedderId: string

  it('create takes every setting as an option', async () => {
    const created = (
      await user.ok([
        'embedder',
        'create',
        '--display-name',
        'Hosted embeddings',
        '--description',
        'for search',
        '--provider-type',
        'vendora',
        '--endpoint-url',
        'https://api.vendora.example',
        '--api-path',
        '/v1/embeddings',
        '--model-identifier',
        'text-embed-3',
        '--dimensionality',
        '1536',
        '--distribution-type',
        'sparse',
        '--max-sequence-length',
        '8192',
        '--modality',
        'TEXT',
        '--modality',
        'image',
        '--label',
        'env=prod',
        '--label',
        'team=search',
        '--model-version',
        '2024-01',
        '--monitoring-endpoint',
        'https://monitoring.example/embeddings',
        '--api-key-secret-file',
        secretFile,
        '--credential-header',
        'X-Api-Key',
        '--credential-prefix',
        'Token',
        '-o',
        'json',
      ])
    ).json<Record<string, unknown> & { embedderId: string; credentials: Credentials }>()
    embedderId = created.embedderId
    expect(created).toMatchObject({
      displayName: 'Hosted embeddings',
      description: 'for search',
      providerType: 'VENDORA',
      endpointUrl: 'https://api.vendora.example',
      apiPath: '/v1/embeddings',
      modelIdentifier: 'text-embed-3',
      dimensionality: 1536,
      distributionType: 'SPARSE',
      maxSequenceLength: 8192,
      supportedModalities: ['TEXT', 'IMAGE'],
      labels: { env: 'prod', team: 'search' },
      version: '2024-01',
      monitoringEndpoint: 'https://monitoring.example/embeddings',
      credentials: {
        kind: 'API_KEY',
        apiKey: { headerName: 'X-Api-Key', prefix: 'Token', secretFingerprint: expect.stringMatching(/^[0-9a-f]{8}$/) },
      },
    })
    expect(created.credentials.apiKey!.inlineSecret).toBeUndefined()
  })

  it('defaults: api path by provider, DENSE, TEXT, no credentials', async () => {
    const local = (
      await user.ok([
        'embedder',
        'create',
        '--display-name',
        'TEI local',
        '--provider-type',
        'TEI',
        '--endpoint-url',
        'http://tei:8080',
        '--model-identifier',
        'bge-small',
        '--dimensionality',
        '384',
        '--no-credentials',
        '-o',
        'json',
      ])
    ).json()
    expect(local).toMatchObject({
      apiPath: '/embed',
      distributionType: 'DENSE',
      supportedModalities: ['TEXT'],
      credentials: { kind: 'NONE' },
    })
    const table = await user.ok(['embedder', 'get', (local as { embedderId: string }).embedderId])
    expect(table.stdout).toMatch(/credentials\s+none/)
    expect(table.stdout).toMatch(/api path\s+\/embed\n/)
  })

  it('list with filters, table and JSON', async () => {
    const all = (await user.ok(['embedder', 'list', '-o', 'json'])).json<{
      embedders: Array<{ displayName: string }>
    }>()
    expect(all.embedders.map((embedder) => embedder.displayName)).toEqual(['Hosted embeddings', 'TEI local'])
    const tei = (await user.ok(['embedder', 'list', '--provider-type', 'TEI', '-o', 'json'])).json<{
      embedders: unknown[]
    }>()
    expect(tei.embedders).toHaveLength(1)
    const prod = (await user.ok(['embedder', 'list', '--label', 'env=prod', '--all', '-o', 'json'])).json<{
      embedders: Array<{ embedderId: string }>
    }>()
    expect(prod.embedders.map((embedder) => embedder.embedderId)).toEqual([embedderId])
    const table = await user.ok(['embedder', 'list'])
    expect(table.stdout).toMatch(/^ID\s+NAME\s+PROVIDER\s+MODEL\s+DIM/)
    expect(table.stdout).toContain(embedderId)
  })

  it('update changes only what is given; the stored secret is kept when only the header changes', async () => {
    const before = (await user.ok(['embedder', 'get', embedderId, '-o', 'json'])).json<{
      credentials: Credentials
      updatedAt: number
    }>()
    const updated = (
      await user.ok([
        'embedder',
        'update',
        embedderId,
        '--max-sequence-length',
        '1024',
        '--merge-label',
        'tier=gold',
        '--description',
        '',
        '-o',
        'json',
      ])
    ).json<Record<string, unknown> & { credentials: Credentials }>()
    expect(updated).toMatchObject({
      maxSequenceLength: 1024,
      labels: { env: 'prod', team: 'search', tier: 'gold' },
      dimensionality: 1536,
      distributionType: 'SPARSE',
    })
    expect(updated.description).toBeUndefined()
    expect(updated.credentials).toEqual(before.credentials)
    // Only the header: the stored secret (same fingerprint) and prefix are kept.
    const header = (
      await user.ok(['embedder', 'update', embedderId, '--credential-header', 'X-Key', '-o', 'json'])
    ).json<{ credentials: Credentials }>()
    expect(header.credentials.apiKey).toEqual({ ...before.credentials.apiKey, headerName: 'X-Key' })
    const modalities = (await user.ok(['embedder', 'update', embedderId, '--modality', 'audio', '-o', 'json'])).json()
    expect(modalities).toMatchObject({ supportedModalities: ['AUDIO'] })
    const adc = (
      await user.ok([
        'embedder',
        'update',
        embedderId,
        '--adc-scope',
        'scope-a',
        '--adc-scope',
        'scope-b',
        '--adc-quota-project',
        'proj-1',
        '-o',
        'json',
      ])
    ).json()
    expect(adc).toMatchObject({
      credentials: { kind: 'CLOUD_ADC', cloudAdc: { scopes: ['scope-a', 'scope-b'], quotaProjectId: 'proj-1' } },
    })
    expectError(await user.run(['embedder', 'update', embedderId]), EXIT.BAD_INPUT, /nothing to update/)
  })

  it('errors: server validation is one line naming the field; CLI mistakes exit 2', async () => {
    expectError(
      await user.run([
        'embedder',
        'create',
        '--display-name',
        'x',
        '--provider-type',
        'TEI',
        '--endpoint-url',
        'not a url',
        '--model-identifier',
        'm',
        '--dimensionality',
        '3',
      ]),
      EXIT.FAILED,
      /^error: INVALID_ARGUMENT: endpointUrl: must be an http or https URL \(field endpointUrl\)$/,
    )
    expectError(
      await user.run([
        'embedder',
        'create',
        '--display-name',
        'x',
        '--endpoint-url',
        'http://x',
        '--model-identifier',
        'm',
        '--dimensionality',
        '3',
      ]),
      EXIT.BAD_INPUT,
      /--provider-type is required/,
    )
    expectError(
      await user.run(['embedder', 'create', '--provider-type', 'OLLAMA']),
      EXIT.BAD_INPUT,
      /--provider-type "OLLAMA": must be one of VENDORA, VLLM, TEI/,
    )
    expectError(
      await user.run(['embedder', 'create', '--provider-type', 'TEI', '--dimensionality', 'big']),
      EXIT.BAD_INPUT,
      /--dimensionality "big": must be a whole number/,
    )
    expectError(
      await user.run(['embedder', 'create', '--provider-type', 'TEI', '--modality', 'smell']),
      EXIT.BAD_INPUT,
      /--modality "smell": must be one of TEXT, IMAGE, AUDIO, VIDEO/,
    )
    expectError(
      await user.run(['embedder', 'create', '--provider-type', 'TEI', '--api-key-secret', 'k', '--adc-scope', 's']),
      EXIT.BAD_INPUT,
      /choose one credential form, not an API key and cloud ADC/,
    )
  })

  it('delete, then get is NOT_FOUND (exit 1)', async () => {
    expect((await user.ok(['embedder', 'delete', embedderId, '-o', 'json'])).json()).toEqual({
      embedderId,
      deleted: true,
    })
    expectError(await user.run(['embedder', 'get', embedderId]), EXIT.FAILED, /^error: NOT_FOUND: /)
  })
})

describe('memsvc llm', { timeout: TEST_TIMEOUT_MS }, () => {
  let llmId: string

  it('create takes every setting: capabilities (both forms), sampling, stop sequences, cloud ADC', async () => {
    const clientConfigFile = path.join(sandbox.dir, 'client.json')
    fs.writeFileSync(clientConfigFile, '{"timeoutMs": 30000}')
    const created = (
      await user.ok([
        'llm',
        'create',
        '--display-name',
        'Llama',
        '--description',
        'local model',
        '--provider-type',
        'ollama',
        '--endpoint-url',
        'http://ollama:11434',
        '--api-path',
        '/api/chat',
        '--model-identifier',
        'llama3.1',
        '--modality',
        'text,image',
        '--label',
        'env=dev',
        '--model-version',
        '3.1',
        '--monitoring-endpoint',
        'http://ollama:11434/metrics',
        '--client-config',
        `@${clientConfigFile}`,
        '--max-context-length',
        '131072',
        '--no-chat',
        '--completion',
        '--function-calling',
        '--no-sampling-parameters',
        '--streaming',
        '--no-system-messages',
        '--max-tokens',
        '512',
        '--temperature',
        '0.2',
        '--top-p',
        '0.9',
        '--top-k',
        '40',
        '--frequency-penalty',
        '0.5',
        '--presence-penalty',
        '-0.5',
        '--stop-sequence',
        '###',
        '--stop-sequence',
        'END',
        '--adc-scope',
        'https://example.com/auth/cloud',
        '--adc-quota-project',
        'my-project',
        '-o',
        'json',
      ])
    ).json<Record<string, unknown> & { llmId: string }>()
    llmId = created.llmId
    expect(created).toMatchObject({
      displayName: 'Llama',
      description: 'local model',
      providerType: 'OLLAMA',
      endpointUrl: 'http://ollama:11434',
      apiPath: '/api/chat',
      modelIdentifier: 'llama3.1',
      supportedModalities: ['TEXT', 'IMAGE'],
      labels: { env: 'dev' },
      version: '3.1',
      monitoringEndpoint: 'http://ollama:11434/metrics',
      clientConfig: '{"timeoutMs": 30000}',
      maxContextLength: 131072,
      capabilities: {
        supportsChat: false,
        supportsCompletion: true,
        supportsFunctionCalling: true,
        supportsSamplingParameters: false,
        supportsStreaming: true,
        supportsSystemMessages: false,
      },
      defaultSamplingParams: {
        maxTokens: 512,
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        frequencyPenalty: 0.5,
        presencePenalty: -0.5,
        stopSequences: ['###', 'END'],
      },
      credentials: {
        kind: 'CLOUD_ADC',
        cloudAdc: { scopes: ['https://example.com/auth/cloud'], quotaProjectId: 'my-project' },
      },
    })
  })

  it('defaults and the inline-key form with --api-key-secret', async () => {
    const hosted = (
      await user.ok([
        'llm',
        'create',
        '--display-name',
        'Hosted',
        '--provider-type',
        'VENDORA',
        '--endpoint-url',
        'https://api.vendora.example',
        '--model-identifier',
        'big-1',
        '--api-key-secret',
        PROVIDER_SECRET,
        '-o',
        'json',
      ])
    ).json()
    expect(hosted).toMatchObject({
      apiPath: '/v1/chat/completions',
      supportedModalities: ['TEXT'],
      capabilities: {
        supportsChat: true,
        supportsCompletion: false,
        supportsSamplingParameters: true,
        supportsSystemMessages: true,
      },
      credentials: { kind: 'API_KEY', apiKey: { secretFingerprint: expect.stringMatching(/^[0-9a-f]{8}$/) } },
    })
    const table = await user.ok(['llm', 'get', (hosted as { llmId: string }).llmId])
    expect(table.stdout).toMatch(
      /credentials\s+API key \(fingerprint [0-9a-f]{8}\), sent as Authorization: Bearer <secret>/,
    )
    expect(table.stdout).toMatch(/capabilities\s+chat yes, completion no/)
  })

  it('update lays capability and sampling flags over the stored values', async () => {
    const updated = (
      await user.ok([
        'llm',
        'update',
        llmId,
        '--no-streaming',
        '--temperature',
        '0.7',
        '--replace-label',
        'env=staging',
        '-o',
        'json',
      ])
    ).json()
    expect(updated).toMatchObject({
      capabilities: {
        supportsChat: false,
        supportsCompletion: true,
        supportsFunctionCalling: true,
        supportsSamplingParameters: false,
        supportsStreaming: false,
        supportsSystemMessages: false,
      },
      defaultSamplingParams: { maxTokens: 512, temperature: 0.7, topP: 0.9, topK: 40, stopSequences: ['###', 'END'] },
      labels: { env: 'staging' },
      credentials: { kind: 'CLOUD_ADC', cloudAdc: { quotaProjectId: 'my-project' } },
    })
    const cleared = (
      await user.ok([
        'llm',
        'update',
        llmId,
        '--clear-sampling',
        '--max-tokens',
        '64',
        '--client-config',
        '',
        '--no-credentials',
        '-o',
        'json',
      ])
    ).json<Record<string, unknown>>()
    expect(cleared.defaultSamplingParams).toEqual({ maxTokens: 64, stopSequences: [] })
    expect(cleared.clientConfig).toBeUndefined()
    expect(cleared.credentials).toEqual({ kind: 'NONE' })
  })

  it('sampling values out of range are refused by the server with the field named', async () => {
    expectError(
      await user.run(['llm', 'update', llmId, '--temperature', '5']),
      EXIT.FAILED,
      /^error: INVALID_ARGUMENT: defaultSamplingParams\.temperature: must be from 0 to 2 \(field defaultSamplingParams\.temperature\)$/,
    )
    expectError(
      await user.run(['llm', 'update', llmId, '--top-p', 'high']),
      EXIT.BAD_INPUT,
      /--top-p "high": must be a number/,
    )
  })

  it('list, then delete', async () => {
    const list = (await user.ok(['llm', 'list', '--provider-type', 'OLLAMA', '-o', 'json'])).json<{
      llms: Array<{ llmId: string }>
    }>()
    expect(list.llms.map((llm) => llm.llmId)).toEqual([llmId])
    expect((await user.ok(['llm', 'list'])).stdout).toMatch(/^ID\s+NAME\s+PROVIDER\s+MODEL/)
    expect((await user.ok(['llm', 'delete', llmId])).stdout).toBe(`deleted llm ${llmId}\n`)
    expectError(await user.run(['llm', 'get', llmId]), EXIT.FAILED, /^error: NOT_FOUND: /)
  })

  it('never prints a provider secret', () => {
    for (const run of user.runs)
      expect(`${run.stdout}${run.stderr}`, `memsvc ${run.args.join(' ')}`).not.toContain(PROVIDER_SECRET)
  })
})

describe('memsvc reranker', { timeout: TEST_TIMEOUT_MS }, () => {
  let provider: FakeRerankerLlm
  let rerankerId: string

  beforeAll(async () => {
    provider = await startFakeRerankerLlm()
  })
  afterAll(() => provider?.close())

  it('create takes every setting as an option; the API path defaults by provider', async () => {
    const created = (
      await user.ok([
        'reranker',
        'create',
        '--display-name',
        'Local rerank',
        '--description',
        'cross-encoder',
        '--provider-type',
        'vllm',
        '--endpoint-url',
        provider.url,
        '--model-identifier',
        'bge-reranker-base',
        '--modality',
        'TEXT',
        '--label',
        'env=dev',
        '--model-version',
        '1.5',
        '--monitoring-endpoint',
        'http://rerank.example/metrics',
        '--api-key-secret-file',
        secretFile,
        '-o',
        'json',
      ])
    ).json<Record<string, unknown> & { rerankerId: string; credentials: Credentials }>()
    rerankerId = created.rerankerId
    expect(created).toMatchObject({
      displayName: 'Local rerank',
      description: 'cross-encoder',
      providerType: 'VLLM',
      endpointUrl: provider.url,
      apiPath: '/v1/rerank',
      modelIdentifier: 'bge-reranker-base',
      supportedModalities: ['TEXT'],
      labels: { env: 'dev' },
      version: '1.5',
      monitoringEndpoint: 'http://rerank.example/metrics',
      credentials: {
        kind: 'API_KEY',
        apiKey: {
          headerName: 'Authorization',
          prefix: 'Bearer',
          secretFingerprint: expect.stringMatching(/^[0-9a-f]{8}$/),
        },
      },
    })
    expect(created.credentials.apiKey!.inlineSecret).toBeUndefined()
    const tei = (
      await user.ok([
        'reranker',
        'create',
        '--display-name',
        'TEI',
        '--provider-type',
        'TEI',
        '--endpoint-url',
        'http://tei:8080',
        '--model-identifier',
        'm',
        '--no-credentials',
        '-o',
        'json',
      ])
    ).json()
    expect(tei).toMatchObject({ apiPath: '/rerank', credentials: { kind: 'NONE' } })
  })

  it('probe queues a job; get then shows the last probe of the local rerank server as OK', async () => {
    const probed = (await user.ok(['reranker', 'probe', rerankerId, '-o', 'json'])).json<{
      rerankerId: string
      jobId: string
    }>()
    expect(probed).toEqual({ rerankerId, jobId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect((await user.ok(['reranker', 'probe', rerankerId])).stdout).toMatch(
      new RegExp(`^probe of reranker ${rerankerId} queued as job [0-9a-f-]{36}`),
    )
    const shown = await waitFor('an OK probe in `reranker get`', async () => {
      const table = await user.ok(['reranker', 'get', rerankerId])
      return /last probe\s+OK/.test(table.stdout) ? table.stdout : undefined
    })
    expect(shown).toMatch(/credentials\s+API key \(fingerprint [0-9a-f]{8}\), sent as Authorization: Bearer <secret>/)
    const call = provider.requests.find((request) => request.path === '/v1/rerank')
    expect(call).toMatchObject({ authorization: `Bearer ${PROVIDER_SECRET}`, body: { model: 'bge-reranker-base' } })
  })

  it('list with filters, update changes only what is given, errors name the field', async () => {
    const dev = (await user.ok(['reranker', 'list', '--label', 'env=dev', '-o', 'json'])).json<{
      rerankers: Array<{ rerankerId: string }>
    }>()
    expect(dev.rerankers.map((reranker) => reranker.rerankerId)).toEqual([rerankerId])
    expect((await user.ok(['reranker', 'list'])).stdout).toMatch(/^ID\s+NAME\s+PROVIDER\s+MODEL\s+PROBE/)
    const updated = (
      await user.ok(['reranker', 'update', rerankerId, '--merge-label', 'tier=gold', '--description', '', '-o', 'json'])
    ).json<Record<string, unknown>>()
    expect(updated).toMatchObject({
      labels: { env: 'dev', tier: 'gold' },
      modelIdentifier: 'bge-reranker-base',
      credentials: { kind: 'API_KEY' },
    })
    expect(updated.description).toBeUndefined()
    expectError(
      await user.run(['reranker', 'update', rerankerId, '--endpoint-url', 'ftp://x']),
      EXIT.FAILED,
      /^error: INVALID_ARGUMENT: endpointUrl: .*\(field endpointUrl\)$/,
    )
    expectError(
      await user.run(['reranker', 'create', '--provider-type', 'OLLAMA']),
      EXIT.BAD_INPUT,
      /--provider-type "OLLAMA": must be one of VENDORA, VLLM, TEI/,
    )
    expectError(await user.run(['reranker', 'update', rerankerId]), EXIT.BAD_INPUT, /nothing to update/)
  })

  it('delete, then get and probe are NOT_FOUND (exit 1); no provider secret was ever printed', async () => {
    expect((await user.ok(['reranker', 'delete', rerankerId])).stdout).toBe(`deleted reranker ${rerankerId}\n`)
    expectError(await user.run(['reranker', 'get', rerankerId]), EXIT.FAILED, /^error: NOT_FOUND: /)
    expectError(await user.run(['reranker', 'probe', rerankerId]), EXIT.FAILED, /^error: NOT_FOUND: /)
    for (const run of user.runs)
      expect(`${run.stdout}${run.stderr}`, `memsvc ${run.args.join(' ')}`).not.toContain(PROVIDER_SECRET)
  })
})
