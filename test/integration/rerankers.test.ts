import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestProbe } from '../../src/domain/probes.js'
import * as rerankers from '../../src/domain/rerankers.js'
import { ENGINES } from '../support/databases.js'
import { type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { waitFor } from '../support/wait.js'

describe.each(ENGINES)('rerankers (%s)', (engine) => {
  let fixture: IdentityFixture
  let provider: FakeRerankerLlm
  const context = () => fixture.server.server.context
  const as = (actor: typeof fixture.alice) => ({
    requestId: 'reranker-test',
    transport: 'rest' as const,
    authorization: `Bearer ${actor.apiKey}`,
  })

  beforeAll(async () => {
    fixture = await startIdentityFixture(engine)
    provider = await startFakeRerankerLlm()
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
    await provider?.close()
  })

  it.each([
    ['VENDORD', '/v2/rerank'],
    ['TEI', '/rerank'],
    ['VENDORA', '/v1/rerank'],
    ['VLLM', '/v1/rerank'],
  ])('a %s reranker gets the default API path %s', async (providerType, apiPath) => {
    const created = await rerankers.createReranker(context(), as(fixture.alice), {
      displayName: `r ${providerType}`,
      providerType,
      endpointUrl: provider.url,
      modelIdentifier: 'm',
    })
    expect(created).toMatchObject({
      providerType,
      apiPath,
      ownerId: fixture.alice.userId,
      credentials: { kind: 'NONE' },
    })
  })

  it('creates, gets, lists, updates and deletes; the secret is sealed and never returned; the probe calls the rerank API', async () => {
    const secret = 'rr-secret-0123456789'
    const created = await rerankers.createReranker(context(), as(fixture.alice), {
      displayName: 'cohere style',
      providerType: 'VENDORA',
      endpointUrl: provider.url,
      modelIdentifier: 'rerank-v1',
      labels: { team: 'search' },
      credentials: { kind: 'API_KEY', apiKey: { inlineSecret: secret } },
    })
    expect(JSON.stringify(created)).not.toContain(secret)
    expect(created.credentials).toMatchObject({ kind: 'API_KEY' })
    const [stored] = await context().sql<
      Array<{ credential_secret: Buffer }>
    >`select credential_secret from rerankers where id = ${created.rerankerId}`
    expect(stored!.credential_secret.toString('latin1')).not.toContain(secret)
    // The probe queued by create may already have recorded lastProbe, so that field is left out of the comparison.
    const { lastProbe: _probeAtCreate, ...createdFields } = created
    expect(await rerankers.getReranker(context(), as(fixture.alice), created.rerankerId)).toMatchObject(createdFields)
    const listed = await rerankers.listRerankers(context(), as(fixture.alice), { labelFilter: { team: 'search' } })
    expect(listed.rerankers.map((item) => item.rerankerId)).toEqual([created.rerankerId])
    const probed = await waitFor('the probe after create', async () => {
      const current = await rerankers.getReranker(context(), as(fixture.alice), created.rerankerId)
      return current.lastProbe ? current : undefined
    })
    expect(probed.lastProbe).toMatchObject({ status: 'OK' })
    expect(
      provider.requests.find((request) => request.path === '/v1/rerank' && request.body.model === 'rerank-v1'),
    ).toMatchObject({ authorization: `Bearer ${secret}` })
    const updated = await rerankers.updateReranker(context(), as(fixture.alice), created.rerankerId, {
      displayName: 'renamed',
      mergeLabels: { tier: 'a' },
    })
    expect(updated).toMatchObject({ displayName: 'renamed', labels: { team: 'search', tier: 'a' } })
    await expect(
      rerankers.updateReranker(context(), as(fixture.alice), created.rerankerId, { providerType: 'TEI' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    const { jobId } = await requestProbe(context(), as(fixture.alice), 'RERANKER', created.rerankerId)
    expect(jobId).toEqual(expect.any(String))
    await rerankers.deleteReranker(context(), as(fixture.alice), created.rerankerId)
    await expect(rerankers.getReranker(context(), as(fixture.alice), created.rerankerId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
  })

  it("another user's reranker is NOT_FOUND; a duplicate registration is ALREADY_EXISTS; bad input names the field", async () => {
    const input = { displayName: 'mine', providerType: 'TEI', endpointUrl: provider.url, modelIdentifier: 'dup' }
    const created = await rerankers.createReranker(context(), as(fixture.alice), input)
    await expect(rerankers.getReranker(context(), as(fixture.bob), created.rerankerId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
    await expect(rerankers.deleteReranker(context(), as(fixture.bob), created.rerankerId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
    await expect(requestProbe(context(), as(fixture.bob), 'RERANKER', created.rerankerId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
    await expect(rerankers.createReranker(context(), as(fixture.alice), input)).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    })
    await expect(
      rerankers.createReranker(context(), as(fixture.alice), { ...input, providerType: 'OPENAI' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: [expect.objectContaining({ field: 'providerType' })] })
    await expect(
      rerankers.createReranker(context(), as(fixture.alice), { ...input, endpointUrl: 'ftp://x' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: [expect.objectContaining({ field: 'endpointUrl' })] })
  })
})
