import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_EMBEDDER_LABEL, defaultSpaceEmbedders } from '../../src/domain/local-embedders.js'
import { retrieveMemories } from '../../src/domain/retrieval.js'
import { createSpace } from '../../src/domain/spaces.js'
import { LOCAL_API_PATH, LOCAL_ENDPOINT_URL } from '../../src/validation/registry-values.js'
import type { Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { BAD_MODELS, TEST_MODEL_FLAGS, type TestModels, writeTestModels } from '../support/local-models.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { collect, itemsOf } from '../support/retrieval-corpus.js'
import { waitFor } from '../support/wait.js'

/**
 * LOCAL embedders: a model run inside the server (src/providers/local), on the small model
 * the tests write (test/support/tiny-embedding-model.ts). Semantic quality is not measured:
 * the tiny model is a hashed bag of words, so "close" here means "shares words".
 */

const NOTES = {
  paris: 'The Eiffel tower is an iron tower in Paris, the city on the river Seine.',
  roses: 'Prune the roses in spring, and water the garden in the morning.',
  cat: 'The cat sleeps on the sofa.',
}

describe.each(ENGINES)('LOCAL embedders (%s)', (engine) => {
  let models: TestModels
  let fixture: MemoryFixture
  let embedderId: string
  const context = () => fixture.server.server.context
  const sql = () => fixture.server.server.context.sql

  const createLocal = (transport: Transport, input: Record<string, unknown>, actor = fixture.alice) =>
    fixture.call(
      transport,
      'createEmbedder',
      { displayName: `local ${crypto.randomUUID()}`, providerType: 'LOCAL', ...input },
      actor.apiKey,
    )

  beforeAll(async () => {
    models = writeTestModels()
    fixture = await startMemoryFixture(
      engine,
      FAST_MEMORY_JOBS,
      {},
      { ...TEST_MODEL_FLAGS, 'data-dir': models.dataDir },
    )
    const created = await createLocal('rest', { modelIdentifier: 'tiny' })
    expect(created.status, JSON.stringify(created.body)).toBe('OK')
    embedderId = created.body.embedderId
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
    models?.remove()
  })

  it.each(['rest', 'grpc'] as const)(
    'registers over %s with only a name and a model: dimensionality and token limit come from the model',
    async (transport) => {
      // One registration per owner and model (a second is a 409): each transport registers for another user.
      const owner = transport === 'rest' ? fixture.bob : fixture.admin
      const created = await createLocal(transport, { modelIdentifier: 'tiny' }, owner)
      expect(created.status, JSON.stringify(created.body)).toBe('OK')
      expect(created.body).toMatchObject({
        providerType: 'LOCAL',
        endpointUrl: LOCAL_ENDPOINT_URL,
        apiPath: LOCAL_API_PATH,
        modelIdentifier: 'tiny',
        dimensionality: models.tiny.dimensions,
        maxSequenceLength: models.tiny.maxTokens,
        distributionType: 'DENSE',
        credentials: { kind: 'NONE' },
      })
      // The probe loads the model in an inference thread and embeds a sentence.
      const probed = await waitFor('the probe', async () => {
        const got = await fixture.call(transport, 'getEmbedder', { embedderId: created.body.embedderId }, owner.apiKey)
        return got.body.lastProbe ? got.body.lastProbe : undefined
      })
      expect(probed).toMatchObject({ status: 'OK', observedDimensionality: models.tiny.dimensions })
      // Given explicitly, the fixed endpoint, the path, NONE credentials and the model's own numbers are accepted.
      const explicit = await createLocal(
        transport,
        {
          modelIdentifier: 'tiny-cls',
          endpointUrl: LOCAL_ENDPOINT_URL,
          apiPath: LOCAL_API_PATH,
          dimensionality: models.tinyCls.dimensions,
          maxSequenceLength: 64,
          credentials: { kind: 'NONE' },
        },
        owner,
      )
      expect(explicit.status, JSON.stringify(explicit.body)).toBe('OK')
      expect(explicit.body).toMatchObject({ dimensionality: 48, maxSequenceLength: 64 })
    },
  )

  const refusals: Array<[string, Record<string, unknown>, string, RegExp]> = [
    [
      'a model that is not there',
      { modelIdentifier: 'absent' },
      'modelIdentifier',
      /no local model "absent": looked in/,
    ],
    [
      'a name that is not a directory name',
      { modelIdentifier: '../tiny' },
      'modelIdentifier',
      /not a local model name/,
    ],
    [
      'a corrupt model.onnx',
      { modelIdentifier: BAD_MODELS.corrupt },
      'modelIdentifier',
      /cannot load the model .*model\.onnx/,
    ],
    [
      'a model without its tokenizer',
      { modelIdentifier: BAD_MODELS.untokenized },
      'modelIdentifier',
      /no tokenizer\.json/,
    ],
    [
      'a model whose settings give another dimension',
      { modelIdentifier: BAD_MODELS.mismatched },
      'modelIdentifier',
      /returns 32 dimensions, but its pooling config says word_embedding_dimension 384/,
    ],
    [
      'a model too big for the memory bound',
      { modelIdentifier: BAD_MODELS.oversized },
      'modelIdentifier',
      /too big for the memory bound: .*--local-model-memory-mb/,
    ],
    [
      'the wrong dimensionality',
      { modelIdentifier: 'tiny', dimensionality: 384 },
      'dimensionality',
      /returns 32 dimensions, not 384/,
    ],
    [
      'a longer token limit than the model',
      { modelIdentifier: 'tiny', maxSequenceLength: 4096 },
      'maxSequenceLength',
      /at most 128 tokens/,
    ],
    ['an endpoint', { modelIdentifier: 'tiny', endpointUrl: 'http://127.0.0.1:1' }, 'endpointUrl', /calls no endpoint/],
    ['an API path', { modelIdentifier: 'tiny', apiPath: '/embed' }, 'apiPath', /calls no API path/],
    [
      'credentials',
      { modelIdentifier: 'tiny', credentials: { kind: 'API_KEY', apiKey: { inlineSecret: 'x' } } },
      'credentials',
      /calls no provider/,
    ],
    ['sparse vectors', { modelIdentifier: 'tiny', distributionType: 'SPARSE' }, 'distributionType', /dense vectors/],
  ]

  it.each(refusals)('refuses %s with a 400 naming the field, and keeps serving', async (_, input, field, message) => {
    for (const transport of ['rest', 'grpc'] as const) {
      const refused = await createLocal(transport, input)
      expect(refused.status, JSON.stringify(refused.body)).toBe('INVALID_ARGUMENT')
      expect(refused.fields).toContain(field)
      expect(refused.message).toMatch(message)
    }
    const me = await fixture.call('rest', 'getMe', {}, fixture.alice.apiKey)
    expect(me.status).toBe('OK')
  })

  it('at init registered each model that loads as a default LOCAL embedder of the root admin, and no broken one', async () => {
    const listed = await fixture.call('rest', 'listEmbedders', { providerType: 'LOCAL' }, fixture.root.apiKey)
    const registered = listed.body.embedders.filter(
      (embedder: { labels: Record<string, string> }) => embedder.labels['memsvc.default'],
    )
    expect(registered.map((embedder: { modelIdentifier: string }) => embedder.modelIdentifier).sort()).toEqual([
      'tiny',
      'tiny-cls',
    ])
    for (const embedder of registered)
      expect(embedder).toMatchObject({ labels: DEFAULT_EMBEDDER_LABEL, ownerId: fixture.root.userId })
    const logged = fixture.server.logs.filter((line) => line.includes('local model not registered at init'))
    expect(logged.length).toBe(Object.keys(BAD_MODELS).length)
  })

  it("picks as default the LOCAL embedder a space's owner may use: their own, or (admins) the root's", async () => {
    const [rootDefault] = await defaultSpaceEmbedders(sql(), fixture.root.userId, 'ADMIN')
    expect(rootDefault).toBeDefined()
    // An admin may use any embedder: the root's default serves the other admin too; a user has none of their own.
    expect(await defaultSpaceEmbedders(sql(), fixture.admin.userId, 'ADMIN')).toEqual([rootDefault])
    expect(await defaultSpaceEmbedders(sql(), fixture.bob.userId, 'USER')).toEqual([])
  })

  // Needs spaces with no embedders in the request to pass validation (keyword-only spaces, issue 33 part 1).
  it('gives a space created without embedders that default LOCAL embedder', async () => {
    const [rootDefault] = await defaultSpaceEmbedders(sql(), fixture.root.userId, 'ADMIN')
    const space = await createSpace(context(), fixture.as(fixture.root), {
      name: `default-${engine}`,
      spaceEmbedders: [],
    })
    expect(space.spaceEmbedders.map((entry) => entry.embedderId)).toEqual([rootDefault!.embedderId])
  })

  it('still needs an endpoint and dimensionality of an HTTP embedder, and takes no local endpoint there', async () => {
    const base = { displayName: 'tei', providerType: 'TEI', modelIdentifier: 'm' }
    const noEndpoint = await fixture.call(
      'rest',
      'createEmbedder',
      { ...base, dimensionality: 8 },
      fixture.alice.apiKey,
    )
    expect(noEndpoint.message).toBe('endpointUrl: is required')
    const noDimensions = await fixture.call(
      'rest',
      'createEmbedder',
      { ...base, endpointUrl: 'http://127.0.0.1:1' },
      fixture.alice.apiKey,
    )
    expect(noDimensions.message).toBe('dimensionality: is required')
    const localUrl = await fixture.call(
      'rest',
      'createEmbedder',
      { ...base, endpointUrl: LOCAL_ENDPOINT_URL, dimensionality: 8 },
      fixture.alice.apiKey,
    )
    expect(localUrl.message).toBe('endpointUrl: must be an http or https URL')
  })

  it('refuses updates that give a LOCAL embedder an endpoint or another dimensionality', async () => {
    const endpoint = await fixture.call(
      'rest',
      'updateEmbedder',
      { embedderId, endpointUrl: 'http://127.0.0.1:1' },
      fixture.alice.apiKey,
    )
    expect(endpoint).toMatchObject({ status: 'INVALID_ARGUMENT', fields: ['endpointUrl'] })
    const dimensions = await fixture.call(
      'rest',
      'updateEmbedder',
      { embedderId, dimensionality: 64 },
      fixture.alice.apiKey,
    )
    expect(dimensions).toMatchObject({ status: 'INVALID_ARGUMENT', fields: ['dimensionality'] })
    const renamed = await fixture.call(
      'rest',
      'updateEmbedder',
      { embedderId, displayName: 'tiny, renamed' },
      fixture.alice.apiKey,
    )
    expect(renamed.status).toBe('OK')
  })

  it('ingests memories with the LOCAL embedder and finds them by VECTOR search', async () => {
    const alice = fixture.as(fixture.alice)
    const space = await fixture.call(
      'rest',
      'createSpace',
      { name: `local-${engine}`, spaceEmbedders: [{ embedderId }] },
      fixture.alice.apiKey,
    )
    expect(space.status, JSON.stringify(space.body)).toBe('OK')
    const ids: Record<string, string> = {}
    for (const [name, text] of Object.entries(NOTES)) {
      const created = await fixture.call(
        'rest',
        'createMemory',
        { spaceId: space.body.spaceId, originalContent: text },
        fixture.alice.apiKey,
      )
      ids[name] = created.body.memoryId
    }
    for (const id of Object.values(ids)) expect((await fixture.settled(id)).processingStatus).toBe('COMPLETED')
    const ask = async (message: string) =>
      itemsOf(
        await collect(
          await retrieveMemories(context(), alice, {
            message,
            mode: 'VECTOR',
            spaceKeys: [{ spaceId: space.body.spaceId }],
          }),
        ),
      )
    const tower = await ask('which tower is in paris')
    expect(tower[0]!.memoryId).toBe(ids.paris)
    const garden = await ask('pruning roses in the garden')
    expect(garden[0]!.memoryId).toBe(ids.roses)
    // A text and itself: the same vector, so the best possible score.
    const same = await ask(NOTES.cat)
    expect(same[0]).toMatchObject({ memoryId: ids.cat })
    expect(same[0]!.relevanceScore).toBeGreaterThan(tower[0]!.relevanceScore - 1e-9)
  })

  it('embeds a text over the token limit from its start and records the truncation on the chunk', async () => {
    const space = await fixture.call(
      'rest',
      'createSpace',
      {
        name: `long-${engine}`,
        spaceEmbedders: [{ embedderId }],
        defaultChunkingConfig: { none: {} },
      },
      fixture.alice.apiKey,
    )
    expect(space.status, JSON.stringify(space.body)).toBe('OK')
    const words = Array.from({ length: 300 }, (_, index) => ['coffee', 'tea', 'bread', 'music'][index % 4]).join(' ')
    const created = await fixture.call(
      'rest',
      'createMemory',
      { spaceId: space.body.spaceId, originalContent: words },
      fixture.alice.apiKey,
    )
    const short = await fixture.call(
      'rest',
      'createMemory',
      { spaceId: space.body.spaceId, originalContent: 'coffee and bread' },
      fixture.alice.apiKey,
    )
    for (const id of [created.body.memoryId, short.body.memoryId])
      expect((await fixture.settled(id)).processingStatus).toBe('COMPLETED')
    const rows = await sql()<Array<{ memory_id: string; embedding_truncation: unknown }>>`
      select memory_id, embedding_truncation from chunks where memory_id in ${sql()([created.body.memoryId, short.body.memoryId])}`
    const byMemory = new Map(rows.map((row) => [row.memory_id, row.embedding_truncation]))
    // 300 words, [CLS] and [SEP]: 302 tokens; the model takes 128.
    expect(byMemory.get(created.body.memoryId)).toEqual({
      [embedderId]: { tokens: 302, keptTokens: models.tiny.maxTokens },
    })
    expect(byMemory.get(short.body.memoryId)).toBeNull()
  })
})
