// Retrieval plans from the space rows the server keeps (src/domain/space-rows-cache.ts).
// These tests change a space, its embedders or an embedder between two retrievals and
// expect the second to answer from them as they are now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as embedders from '../../src/domain/embedders.js'
import * as memories from '../../src/domain/memories.js'
import { retrieveMemories } from '../../src/domain/retrieval.js'
import { SPACE_ROWS_TTL_MS } from '../../src/domain/space-rows-cache.js'
import * as spaces from '../../src/domain/spaces.js'
import { ENGINES } from '../support/databases.js'
import type { Actor } from '../support/identity-fixture.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { collect, itemsOf } from '../support/retrieval-corpus.js'
import { waitFor } from '../support/wait.js'

const MESSAGE = 'the lighthouse keeper counts the ships'

describe.each(ENGINES)('retrieval after a space changed (%s)', (engine) => {
  let fixture: MemoryFixture
  let aliceEmbedder: string
  const context = () => fixture.server.server.context
  const retrieve = (spaceId: string, actor: Actor) =>
    retrieveMemories(context(), fixture.as(actor), { message: MESSAGE, mode: 'VECTOR', spaceKeys: [{ spaceId }] })
  const retrievedMemories = async (spaceId: string, actor: Actor) =>
    itemsOf(await collect(await retrieve(spaceId, actor))).map((item) => item.memoryId)

  /** A space of `owner` holding one memory, ingested; returns both ids. */
  async function spaceWithMemory(
    owner: Actor,
    embedderId: string,
    options: { spaceId?: string; publicRead?: boolean } = {},
  ): Promise<{ spaceId: string; memoryId: string }> {
    const space = await spaces.createSpace(context(), fixture.as(owner), {
      ...(options.spaceId ? { spaceId: options.spaceId } : {}),
      name: `changing-${crypto.randomUUID()}`,
      publicRead: options.publicRead ?? false,
      spaceEmbedders: [{ embedderId }],
    })
    const { memory } = await memories.createMemory(context(), fixture.as(owner), {
      spaceId: space.spaceId,
      originalContent: `${MESSAGE}, and writes them down (${crypto.randomUUID()})`,
    })
    expect((await fixture.settled(memory.memoryId)).processingStatus).toBe('COMPLETED')
    return { spaceId: space.spaceId, memoryId: memory.memoryId }
  }

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 32 })
    aliceEmbedder = await fixture.registerEmbedder(fixture.alice)
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
  })

  it('a publicRead space made private answers NOT_FOUND to the reader who retrieved from it before', async () => {
    const shared = await spaceWithMemory(fixture.alice, aliceEmbedder, { publicRead: true })
    expect(await retrievedMemories(shared.spaceId, fixture.bob)).toEqual([shared.memoryId])
    await spaces.updateSpace(context(), fixture.as(fixture.alice), shared.spaceId, { publicRead: false })
    await expect(retrieve(shared.spaceId, fixture.bob)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: `space ${shared.spaceId} not found`,
    })
    expect(await retrievedMemories(shared.spaceId, fixture.alice)).toEqual([shared.memoryId])
  })

  it('a deleted space answers NOT_FOUND to its owner, who retrieved from it before', async () => {
    const gone = await spaceWithMemory(fixture.alice, aliceEmbedder)
    expect(await retrievedMemories(gone.spaceId, fixture.alice)).toEqual([gone.memoryId])
    await spaces.deleteSpace(context(), fixture.as(fixture.alice), gone.spaceId)
    await expect(retrieve(gone.spaceId, fixture.alice)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('a space id created again with another embedder is searched through the new embedder', async () => {
    const first = await spaceWithMemory(fixture.alice, aliceEmbedder)
    expect(await retrievedMemories(first.spaceId, fixture.alice)).toEqual([first.memoryId])
    await spaces.deleteSpace(context(), fixture.as(fixture.alice), first.spaceId)
    const otherEmbedder = await fixture.registerEmbedder(fixture.alice)
    const again = await spaceWithMemory(fixture.alice, otherEmbedder, { spaceId: first.spaceId })
    // Searched with the remembered plan (the first embedder), the new space would hold nothing.
    expect(await retrievedMemories(first.spaceId, fixture.alice)).toEqual([again.memoryId])
    expect(await retrievedMemories(first.spaceId, fixture.alice)).toEqual([again.memoryId])
  })

  it("another user's space created under a remembered id answers NOT_FOUND to the earlier owner", async () => {
    const first = await spaceWithMemory(fixture.alice, aliceEmbedder)
    expect(await retrievedMemories(first.spaceId, fixture.alice)).toEqual([first.memoryId])
    await spaces.deleteSpace(context(), fixture.as(fixture.alice), first.spaceId)
    const bobEmbedder = await fixture.registerEmbedder(fixture.bob)
    const bobs = await spaceWithMemory(fixture.bob, bobEmbedder, { spaceId: first.spaceId })
    await expect(retrieve(first.spaceId, fixture.alice)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect(await retrievedMemories(first.spaceId, fixture.bob)).toEqual([bobs.memoryId])
  })

  it('an embedder added to a space is searched as soon as its back-fill is READY', async () => {
    const space = await spaceWithMemory(fixture.alice, aliceEmbedder)
    const added = await fixture.registerEmbedder(fixture.alice)
    // Only the added embedder's list: empty until it is READY.
    const onlyAdded = () =>
      retrieveMemories(context(), fixture.as(fixture.alice), {
        message: MESSAGE,
        mode: 'VECTOR',
        spaceKeys: [
          {
            spaceId: space.spaceId,
            embedderWeights: [
              { embedderId: aliceEmbedder, weight: 0 },
              { embedderId: added, weight: 1 },
            ],
          },
        ],
      })
    expect(await retrievedMemories(space.spaceId, fixture.alice)).toEqual([space.memoryId])
    await spaces.addSpaceEmbedder(context(), fixture.as(fixture.alice), space.spaceId, { embedderId: added })
    await waitFor('the added embedder to be READY', async () => {
      const current = await spaces.getSpace(context(), fixture.as(fixture.alice), space.spaceId)
      return current.spaceEmbedders.find((member) => member.embedderId === added)?.indexState === 'READY'
    })
    expect(itemsOf(await collect(await onlyAdded())).map((item) => item.memoryId)).toEqual([space.memoryId])
  })

  it("an embedder's changed registration is used by the next retrieval", async () => {
    const changing = await fixture.registerEmbedder(fixture.alice)
    const space = await spaceWithMemory(fixture.alice, changing)
    expect(await retrievedMemories(space.spaceId, fixture.alice)).toEqual([space.memoryId])
    // Nothing listens on the discard port: the next message cannot be embedded.
    await embedders.updateEmbedder(context(), fixture.as(fixture.alice), changing, {
      endpointUrl: 'http://127.0.0.1:9',
    })
    await expect(
      retrieveMemories(context(), fixture.as(fixture.alice), {
        message: `${MESSAGE} again`,
        mode: 'VECTOR',
        spaceKeys: [{ spaceId: space.spaceId }],
      }),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('cannot embed the message') })
  })

  it.runIf(engine === 'postgresql')(
    'a space made private by another process answers NOT_FOUND once its notification has arrived',
    async () => {
      const shared = await spaceWithMemory(fixture.alice, aliceEmbedder, { publicRead: true })
      expect(await retrievedMemories(shared.spaceId, fixture.bob)).toEqual([shared.memoryId])
      expect(context().spaceRows.lookup([shared.spaceId])).toBeDefined()
      // As another server or psql would: straight to the table, nothing in this process told.
      await context().database.background`update spaces set public_read = false where id = ${shared.spaceId}`
      // Well before the kept rows' own bound, so the eviction is the notification's.
      await waitFor(
        'the notification to evict the space',
        () => context().spaceRows.lookup([shared.spaceId]) === undefined,
        {
          timeoutMs: SPACE_ROWS_TTL_MS / 2,
        },
      )
      await expect(retrieve(shared.spaceId, fixture.bob)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    },
  )
})
