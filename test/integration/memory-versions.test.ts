import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as memories from '../../src/domain/memories.js'
import { updateMemory } from '../../src/domain/memory-updates.js'
import { retrieveMemories } from '../../src/domain/retrieval.js'
import * as spaces from '../../src/domain/spaces.js'
import { ENGINES } from '../support/databases.js'
import { httpRequest } from '../support/http-client.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { collect, itemsOf } from '../support/retrieval-corpus.js'
import { waitFor } from '../support/wait.js'

const FIRST = 'Europa hides a salty ocean beneath its ice shell.'
const SECOND = 'Titan has lakes of liquid methane and a thick nitrogen atmosphere.'
const THIRD = 'Enceladus sprays water plumes from cracks near its south pole.'

describe.each(ENGINES)('memory versions (%s)', (engine) => {
  let fixture: MemoryFixture
  let spaceId: string
  const context = () => fixture.server.server.context
  const alice = () => fixture.as(fixture.alice)
  // KEYWORD: the embedder is held during the checks, and a vector search would wait for it to embed the message.
  const texts = async (message: string) =>
    itemsOf(
      await collect(await retrieveMemories(context(), alice(), { message, spaceKeys: [{ spaceId }], mode: 'KEYWORD' })),
    ).map((chunk) => chunk.chunkText)

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS)
    const embedderId = await fixture.registerEmbedder(fixture.alice)
    spaceId = (
      await spaces.createSpace(context(), alice(), {
        name: `versions-${engine}`,
        spaceEmbedders: [{ embedderId }],
        defaultChunkingConfig: { none: {} },
      })
    ).spaceId
  }, 240_000)
  afterAll(() => fixture?.stop())

  it('the old chunks answer retrieval until the new version is stored, then only the new ones', async () => {
    const { memory } = await memories.createMemory(context(), alice(), { spaceId, originalContent: FIRST })
    await fixture.settled(memory.memoryId)
    const release = fixture.embedder.hold()
    let updated: memories.Memory
    try {
      updated = await updateMemory(context(), alice(), { memoryId: memory.memoryId, originalContent: SECOND })
      expect(updated).toMatchObject({ version: 2, processingStatus: 'PENDING', contentPending: true })
      await waitFor('the new version to reach the embedder', async () =>
        (await memories.getMemory(context(), alice(), memory.memoryId)).processingStatus === 'PROCESSING'
          ? true
          : undefined,
      )
      // Held at the embedder: the first version still answers, whole, with its own content.
      expect(await texts('salty ocean')).toEqual([FIRST])
      const during = await memories.getMemoryContent(context(), alice(), memory.memoryId)
      expect(during.originalContent).toBe(FIRST)
    } finally {
      release()
    }
    const done = await fixture.settled(memory.memoryId)
    expect(done).toMatchObject({ processingStatus: 'COMPLETED', version: 2, chunkCount: 1 })
    expect(done.contentPending).toBeUndefined()
    expect(await texts('methane lakes')).toEqual([SECOND])
    expect((await memories.getMemoryContent(context(), alice(), memory.memoryId)).originalContent).toBe(SECOND)
  })

  it('two content updates in a row end with the last one, stored once', async () => {
    const { memory } = await memories.createMemory(context(), alice(), { spaceId, originalContent: `${FIRST} (race)` })
    await fixture.settled(memory.memoryId)
    const release = fixture.embedder.hold()
    try {
      await updateMemory(context(), alice(), { memoryId: memory.memoryId, originalContent: `${SECOND} (race)` })
      await waitFor('the second version to reach the embedder', async () =>
        (await memories.getMemory(context(), alice(), memory.memoryId)).processingStatus === 'PROCESSING'
          ? true
          : undefined,
      )
      await updateMemory(context(), alice(), {
        memoryId: memory.memoryId,
        originalContent: `${THIRD} (race)`,
        expectedVersion: 2,
      })
    } finally {
      release()
    }
    const done = await waitFor('the third version to be stored', async () => {
      const current = await memories.getMemory(context(), alice(), memory.memoryId)
      return current.processingStatus === 'COMPLETED' && !current.contentPending ? current : undefined
    })
    expect(done).toMatchObject({ version: 3, chunkCount: 1 })
    expect((await memories.getMemoryContent(context(), alice(), memory.memoryId)).originalContent).toBe(
      `${THIRD} (race)`,
    )
    const chunks = await context().sql<
      Array<{ text: string }>
    >`select text from chunks where memory_id = ${memory.memoryId}`
    expect(chunks.map((chunk) => chunk.text)).toEqual([`${THIRD} (race)`])
  })

  it('REST: GET answers the version as ETag, and PATCH with a stale If-Match is 412 with nothing changed', async () => {
    const { memory } = await memories.createMemory(context(), alice(), { spaceId, originalContent: `${FIRST} (etag)` })
    const url = `${fixture.server.restUrl}/v1/memories/${memory.memoryId}`
    const headers = { authorization: `Bearer ${fixture.alice.apiKey}`, 'content-type': 'application/json' }
    const read = await httpRequest(url, { headers })
    expect(read.headers.etag).toBe('"1"')
    const patch = (ifMatch: string, body: unknown) =>
      httpRequest(url, { method: 'PATCH', headers: { ...headers, 'if-match': ifMatch }, body: JSON.stringify(body) })
    const first = await patch('"1"', { mergeMetadata: { step: 1 } })
    expect(first.status).toBe(200)
    expect(first.headers.etag).toBe('"2"')
    const stale = await patch('"1"', { mergeMetadata: { step: 'lost' } })
    expect(stale.status).toBe(412)
    expect(JSON.parse(stale.body).error).toMatchObject({
      status: 'FAILED_PRECONDITION',
      details: [{ field: 'expectedVersion' }],
    })
    const weak = await patch('W/"2"', { mergeMetadata: { step: 2 } })
    expect(weak.status).toBe(200)
    const bad = await patch('version two', { mergeMetadata: { step: 3 } })
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.body).error.details[0].field).toBe('If-Match')
    expect((await memories.getMemory(context(), alice(), memory.memoryId)).metadata).toEqual({ step: 2 })
  })
})
