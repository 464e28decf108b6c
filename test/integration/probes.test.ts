import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as jobsSql from '../../src/db/sql/jobs.js'
import { ENGINES } from '../support/databases.js'
import { FAKE_DIMENSIONS, FAKE_SECRET, startFakeProvider } from '../support/fake-provider.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { waitFor } from '../support/wait.js'

const PROBE_TIMEOUT_MS = 300
const FAST = { jobs: { pollIntervalMs: 50, retryBaseMs: 20, maxRetryDelayMs: 100 }, probeTimeoutMs: PROBE_TIMEOUT_MS }

describe.each(ENGINES)('connectivity probes (%s)', (engine) => {
  let fixture: IdentityFixture
  let provider: Awaited<ReturnType<typeof startFakeProvider>>

  beforeAll(async () => {
    provider = await startFakeProvider()
    fixture = await startIdentityFixture(engine, {}, FAST)
  })
  afterAll(async () => {
    await fixture?.stop()
    await provider?.close()
  })

  const createEmbedder = async (input: Record<string, unknown>) => {
    const created = await fixture.call(
      'rest',
      'createEmbedder',
      {
        displayName: 'probe test',
        providerType: 'VENDORA',
        modelIdentifier: `model-${crypto.randomUUID()}`,
        dimensionality: FAKE_DIMENSIONS,
        ...input,
      },
      fixture.alice.apiKey,
    )
    expect(created.status, JSON.stringify(created.body)).toBe('OK')
    return created.body.embedderId as string
  }
  const probeOf = async (operation: 'getEmbedder' | 'getLlm', input: Record<string, string>) =>
    (await fixture.call('rest', operation, input, fixture.alice.apiKey)).body.lastProbe
  const settledProbe = (operation: 'getEmbedder' | 'getLlm', input: Record<string, string>, after = 0) =>
    waitFor('a probe result', async () => {
      const probe = await probeOf(operation, input)
      return probe && probe.checkedAt > after ? probe : undefined
    })

  it('an OpenAI-style embedder with an inline key: OK, with latency and the observed dimensionality', async () => {
    const embedderId = await createEmbedder({
      endpointUrl: `${provider.url}/openai/v1`,
      credentials: { kind: 'API_KEY', apiKey: { inlineSecret: FAKE_SECRET } },
    })
    const probe = await settledProbe('getEmbedder', { embedderId })
    expect(probe).toMatchObject({ status: 'OK', observedDimensionality: FAKE_DIMENSIONS })
    expect(probe.latencyMs).toBeGreaterThanOrEqual(0)
    const sent = provider.requests.find(
      (request) =>
        request.path === '/openai/v1/embeddings' && request.headers.authorization === `Bearer ${FAKE_SECRET}`,
    )
    expect(sent?.body).toMatchObject({ input: [expect.any(String)] })
  })

  it('a TEI embedder (nested-array answer): OK', async () => {
    const embedderId = await createEmbedder({ providerType: 'TEI', endpointUrl: `${provider.url}/tei` })
    expect(await settledProbe('getEmbedder', { embedderId })).toMatchObject({
      status: 'OK',
      observedDimensionality: FAKE_DIMENSIONS,
    })
    expect(
      provider.requests.some((request) => request.path === '/tei/embed' && typeof request.body.inputs === 'string'),
    ).toBe(true)
  })

  it('a wrong dimensionality is reported and not retried', async () => {
    const embedderId = await createEmbedder({ endpointUrl: `${provider.url}/short/v1` })
    const probe = await settledProbe('getEmbedder', { embedderId })
    expect(probe).toMatchObject({ status: 'FAILED', observedDimensionality: 4 })
    expect(probe.error).toContain(`registration says ${FAKE_DIMENSIONS}`)
    // The probe's result is written before its job's outcome: wait for the job to settle too.
    const jobs = await waitFor('the probe job to settle', async () => {
      const rows = await fixture.server.server.context.sql<Array<{ status: string; attempts: number }>>`
        select status, attempts from jobs where payload->>'id' = ${embedderId}`
      return rows[0]?.status === 'RUNNING' ? undefined : rows
    })
    expect(jobs).toEqual([{ status: 'FAILED', attempts: 1 }])
  })

  it('a provider that does not answer fails after the probe timeout, and the job is retried', async () => {
    const embedderId = await createEmbedder({ endpointUrl: `${provider.url}/hang/v1` })
    const probe = await settledProbe('getEmbedder', { embedderId })
    expect(probe).toMatchObject({ status: 'FAILED', error: `no answer within ${PROBE_TIMEOUT_MS} ms` })
    await waitFor('the job to run out of attempts', async () => {
      const rows = await fixture.server.server.context.sql<Array<{ status: string; attempts: number }>>`
        select status, attempts from jobs where payload->>'id' = ${embedderId}`
      return rows[0]?.status === 'FAILED' && rows[0].attempts === 3
    })
  })

  it('a wrong key: FAILED with the provider’s 401, and the secret it echoed is redacted', async () => {
    const wrongSecret = 'sk-wrong-secret-that-must-not-leak'
    const embedderId = await createEmbedder({
      endpointUrl: `${provider.url}/openai/v1`,
      credentials: { kind: 'API_KEY', apiKey: { inlineSecret: wrongSecret } },
    })
    const probe = await settledProbe('getEmbedder', { embedderId })
    expect(probe.status).toBe('FAILED')
    expect(probe.error).toContain('HTTP 401')
    expect(probe.error).toContain('[redacted]')
    expect(JSON.stringify(probe)).not.toContain(wrongSecret)
    for (const line of fixture.server.logs) expect(line).not.toContain(wrongSecret)
  })

  // Secrets with characters that JSON escapes, and the forms providers echo them in.
  const AWKWARD_SECRET = 'sk-"quoted"\\back\\slash/é and+space'
  for (const [form, path] of [
    ['JSON-escaped', '/openai/v1'],
    ['URL-encoded', '/echo/url/v1'],
    ['base64', '/echo/base64/v1'],
  ]) {
    it(`a wrong key echoed ${form}: no form of the secret reaches lastProbe.error or the log`, async () => {
      const embedderId = await createEmbedder({
        endpointUrl: `${provider.url}${path}`,
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: AWKWARD_SECRET } },
      })
      const probe = await settledProbe('getEmbedder', { embedderId })
      expect(probe.status).toBe('FAILED')
      expect(probe.error).toContain('HTTP 401')
      expect(probe.error).toContain('[redacted]')
      const forms = [
        AWKWARD_SECRET,
        JSON.stringify(AWKWARD_SECRET).slice(1, -1),
        encodeURIComponent(AWKWARD_SECRET),
        Buffer.from(AWKWARD_SECRET).toString('base64'),
      ]
      for (const secretForm of forms) {
        expect(probe.error).not.toContain(secretForm)
        for (const line of fixture.server.logs) expect(line).not.toContain(secretForm)
      }
    })
  }

  it('an LLM: a one-token chat request, OK', async () => {
    const created = await fixture.call(
      'rest',
      'createLlm',
      {
        displayName: 'chat probe',
        providerType: 'VENDORA',
        modelIdentifier: `chat-${crypto.randomUUID()}`,
        endpointUrl: `${provider.url}/openai`,
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: FAKE_SECRET } },
      },
      fixture.alice.apiKey,
    )
    expect(created.status).toBe('OK')
    expect(await settledProbe('getLlm', { llmId: created.body.llmId })).toMatchObject({ status: 'OK' })
    expect(
      provider.requests.some(
        (request) => request.path === '/openai/v1/chat/completions' && request.body.max_tokens === 1,
      ),
    ).toBe(true)
  })

  it('runs again on demand over REST (202 with the job) and gRPC, and after an endpoint change', async () => {
    const embedderId = await createEmbedder({ providerType: 'TEI', endpointUrl: `${provider.url}/tei` })
    const first = await settledProbe('getEmbedder', { embedderId })
    const rest = await fixture.client.restRaw('POST', `/v1/embedders/${embedderId}:probe`, {
      apiKey: fixture.alice.apiKey,
    })
    expect(rest.rawStatus).toBe(202)
    await waitFor(
      'the on-demand job',
      async () => (await jobsSql.findJob(fixture.server.server.context.sql, rest.body.jobId))?.status === 'SUCCEEDED',
    )
    const second = await settledProbe('getEmbedder', { embedderId }, first.checkedAt)
    const grpc = await fixture.call('grpc', 'probeEmbedder', { embedderId }, fixture.alice.apiKey)
    expect(grpc.status).toBe('OK')
    expect(typeof grpc.body.jobId).toBe('string')
    const third = await settledProbe('getEmbedder', { embedderId }, second.checkedAt)
    await fixture.call(
      'rest',
      'updateEmbedder',
      { embedderId, endpointUrl: `${provider.url}/short/v1`, providerType: 'TEI' },
      fixture.alice.apiKey,
    )
    expect(await settledProbe('getEmbedder', { embedderId }, third.checkedAt)).toMatchObject({ status: 'FAILED' })
  })

  it('on-demand probes keep owner boundaries and reject other verbs', async () => {
    const embedderId = await createEmbedder({ providerType: 'TEI', endpointUrl: `${provider.url}/tei` })
    expect(
      (await fixture.client.restRaw('POST', `/v1/embedders/${embedderId}:probe`, { apiKey: fixture.bob.apiKey }))
        .rawStatus,
    ).toBe(404)
    expect((await fixture.call('grpc', 'probeEmbedder', { embedderId }, fixture.bob.apiKey)).status).toBe('NOT_FOUND')
    expect(
      (await fixture.client.restRaw('POST', `/v1/embedders/${embedderId}:explode`, { apiKey: fixture.alice.apiKey }))
        .rawStatus,
    ).toBe(404)
    expect((await fixture.client.restRaw('POST', `/v1/embedders/${embedderId}:probe`)).rawStatus).toBe(401)
  })
})
