import net from 'node:net'
import { createReranker } from '../../src/domain/rerankers.js'
import type { Engine } from './databases.js'
import { type FakeRerankerLlm, startFakeRerankerLlm } from './fake-reranker-llm.js'
import type { Actor } from './identity-fixture.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from './memory-fixture.js'
import { type LoadedCorpus, loadCorpus } from './retrieval-corpus.js'

/**
 * A running server with the retrieval corpus loaded three times (alice's private space, a
 * second space of alice's with two embedders, bob's private space and bob's publicRead
 * space), and a local rerank and chat server with a reranker and an LLM registered for alice
 * and for bob. Rerankers are registered through the domain (their REST and gRPC routes are
 * not part of this round). `deadLlm` points at a loopback port nothing listens on, so it always fails.
 */
export interface RetrievalFixture extends MemoryFixture {
  chat: FakeRerankerLlm
  alices: LoadedCorpus
  alicesSecond: LoadedCorpus
  bobs: LoadedCorpus
  bobsPublic: LoadedCorpus
  aliceEmbedder: string
  aliceLlm: string
  aliceReranker: string
  bobLlm: string
  bobReranker: string
  deadLlm: string
}

/** A loopback port that was free a moment ago: nothing listens there, so a call fails at once with ECONNREFUSED. */
export async function unreachableUrl(): Promise<string> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

export async function startRetrievalFixture(engine: Engine): Promise<RetrievalFixture> {
  const fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 32 })
  const chat = await startFakeRerankerLlm()
  const context = fixture.server.server.context
  const registerLlm = async (owner: Actor, endpointUrl = chat.url) => {
    const created = await fixture.call(
      'rest',
      'createLlm',
      { displayName: 'chat', providerType: 'VLLM', endpointUrl, modelIdentifier: 'fake-chat' },
      owner.apiKey,
    )
    if (created.status !== 'OK') throw new Error(`LLM registration failed: ${created.message}`)
    return created.body.llmId as string
  }
  const registerReranker = async (owner: Actor) =>
    (
      await createReranker(context, fixture.as(owner), {
        displayName: 'rerank',
        providerType: 'TEI',
        endpointUrl: chat.url,
        modelIdentifier: 'fake-rerank',
      })
    ).rerankerId
  const aliceEmbedder = await fixture.registerEmbedder(fixture.alice)
  const secondEmbedder = await fixture.registerEmbedder(fixture.alice, { modelIdentifier: 'second-model' })
  const bobEmbedder = await fixture.registerEmbedder(fixture.bob)
  const tag = `${engine}-${crypto.randomUUID().slice(0, 8)}`
  const result: RetrievalFixture = {
    ...fixture,
    chat,
    aliceEmbedder,
    alices: await loadCorpus(fixture, fixture.alice, [aliceEmbedder], { name: `alice-${tag}` }),
    alicesSecond: await loadCorpus(fixture, fixture.alice, [aliceEmbedder, secondEmbedder], {
      name: `alice-second-${tag}`,
    }),
    bobs: await loadCorpus(fixture, fixture.bob, [bobEmbedder], { name: `bob-${tag}` }),
    bobsPublic: await loadCorpus(fixture, fixture.bob, [bobEmbedder], { name: `bob-public-${tag}`, publicRead: true }),
    aliceLlm: await registerLlm(fixture.alice),
    aliceReranker: await registerReranker(fixture.alice),
    bobLlm: await registerLlm(fixture.bob),
    bobReranker: await registerReranker(fixture.bob),
    deadLlm: await registerLlm(fixture.alice, await unreachableUrl()),
    async stop() {
      await fixture.stop()
      await chat.close()
    },
  }
  return result
}
