import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import { HEARTBEAT_MS } from '../../src/transport/rest/rest-stream.js'
import { ENGINES } from '../support/databases.js'
import { expectedAnswer } from '../support/fake-reranker-llm.js'
import { QUESTIONS } from '../support/retrieval-corpus.js'
import { type RetrievalFixture, startRetrievalFixture } from '../support/retrieval-fixture.js'
import { openStream, readUntil, STREAM_KINDS, StreamRefused } from '../support/stream-readers.js'
import { waitFor } from '../support/wait.js'

/**
 * The retrieval stream read incrementally, over REST NDJSON, REST SSE and gRPC: items go out
 * before the LLM answer exists (the local chat server holds it until the test releases it),
 * a client that leaves mid-stream cancels the LLM call, and a drain lets a running stream
 * finish while refusing new ones. No timing is asserted: the order is forced by holding the answer.
 */

const isItem = (event: Record<string, any>) => 'retrievedItem' in event
const isEnd = (event: Record<string, any>) => event.resultSetBoundary?.kind === 'END'

describe.each(ENGINES)('retrieval streams (%s)', (engine) => {
  let fixture: RetrievalFixture
  beforeAll(async () => {
    fixture = await startRetrievalFixture(engine)
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
  })
  const question = QUESTIONS[1]!
  const withLlm = () => ({
    message: question.message,
    spaceKeys: [{ spaceId: fixture.alices.spaceId }],
    requestedSize: 3,
    postProcessor: { llmId: fixture.aliceLlm },
  })

  describe.each(STREAM_KINDS)('over %s', (kind) => {
    it('the first item and END arrive while the LLM still holds its answer; the answer follows once released', async () => {
      const release = fixture.chat.hold()
      const chatCallsBefore = fixture.chat.requests.length
      try {
        const reader = await openStream(kind, fixture.client, fixture.alice.apiKey, withLlm())
        if (kind === 'rest-ndjson') expect(reader.contentType).toBe('application/x-ndjson; charset=utf-8')
        if (kind === 'rest-sse') expect(reader.contentType).toBe('text/event-stream; charset=utf-8')
        const upToFirstItem = await readUntil(reader, isItem)
        expect(upToFirstItem[0]).toMatchObject({ resultSetBoundary: { kind: 'BEGIN' } })
        expect(fixture.alices.keyOf.get(upToFirstItem.at(-1)!.retrievedItem.chunk.memoryId)).toBe(question.answer)
        const restOfItems = await readUntil(reader, isEnd)
        // The model was asked while the items went out, and has not answered: it is held.
        await waitFor('the LLM to be asked', () => fixture.chat.requests.length > chatCallsBefore)
        expect([...upToFirstItem, ...restOfItems].some((event) => 'abstractReply' in event)).toBe(false)
        release()
        const answer = await reader.next()
        const firstChunk = upToFirstItem.at(-1)!.retrievedItem.chunk.chunkText
        expect(answer).toEqual({ abstractReply: { text: expectedAnswer(`[1] ${firstChunk}`) } })
        expect(await reader.next()).toBeUndefined()
      } finally {
        release()
      }
    })

    it('a client that leaves mid-stream cancels the LLM call, and the call stops being work', async () => {
      const release = fixture.chat.hold()
      const abandonedBefore = fixture.chat.abandoned
      try {
        const reader = await openStream(kind, fixture.client, fixture.alice.apiKey, withLlm())
        await readUntil(reader, isEnd)
        await waitFor(
          'the LLM to be asked',
          () =>
            fixture.server.server.lifecycle.inFlight > 0 &&
            fixture.chat.requests.at(-1)?.path.endsWith('/chat/completions'),
        )
        reader.cancel()
        await waitFor('the LLM call to be cancelled', () => fixture.chat.abandoned > abandonedBefore)
        await waitFor('no call in flight', () => fixture.server.server.lifecycle.inFlight === 0)
      } finally {
        release()
      }
    })

    it('an error before the first event is an ordinary error, not a stream', async () => {
      const refused = await openStream(kind, fixture.client, fixture.alice.apiKey, {
        message: '',
        spaceKeys: [{ spaceId: fixture.alices.spaceId }],
      }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(refused).toBeInstanceOf(StreamRefused)
      expect(refused).toMatchObject({ status: 'INVALID_ARGUMENT' })
    })
  })

  it('the GET form takes the request as query parameters and streams the same items', async () => {
    const query = new URLSearchParams({
      message: question.message,
      spaceIds: fixture.alices.spaceId,
      requestedSize: '3',
      mode: 'HYBRID',
      fetchMemory: 'false',
    })
    const response = await fetch(`${fixture.server.restUrl}/v1/memories:retrieve?${query}`, {
      headers: { authorization: `Bearer ${fixture.alice.apiKey}` },
    })
    expect(response.status).toBe(200)
    const events = (await response.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    const posted = await fixture.call(
      'rest',
      'retrieveMemories',
      {
        message: question.message,
        spaceKeys: [{ spaceId: fixture.alices.spaceId }],
        requestedSize: 3,
        fetchMemory: false,
      },
      fixture.alice.apiKey,
    )
    const items = (list: any[]) => list.filter(isItem).map((event) => event.retrievedItem.chunk.chunkId)
    expect(items(events)).toEqual(items(posted.body.events))
    expect(events.some((event) => 'memoryDefinition' in event)).toBe(false)
    const filtered = new URLSearchParams({
      message: 'tower wall',
      spaceIds: `${fixture.alices.spaceId},${fixture.alicesSecond.spaceId}`,
      filter: "val('$.topic') = 'travel'",
    })
    const filteredEvents = (
      await (
        await fetch(`${fixture.server.restUrl}/v1/memories:retrieve?${filtered}`, {
          headers: { authorization: `Bearer ${fixture.alice.apiKey}` },
        })
      ).text()
    )
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    const memoryIds = filteredEvents.filter(isItem).map((event) => event.retrievedItem.chunk.memoryId)
    expect(memoryIds.length).toBeGreaterThan(0)
    for (const id of memoryIds)
      expect(['eiffel', 'wall']).toContain(fixture.alices.keyOf.get(id) ?? fixture.alicesSecond.keyOf.get(id))
    const bad = await fetch(
      `${fixture.server.restUrl}/v1/memories:retrieve?message=x&spaceIds=${fixture.alices.spaceId}&requestedSize=lots&colour=red`,
      { headers: { authorization: `Bearer ${fixture.alice.apiKey}` } },
    )
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as any).error.details[0].field).toBe('colour')
  })
})

describe('retrieval streams over a slow LLM and a slow reader (first engine only: this is the wire, not the database)', () => {
  let fixture: RetrievalFixture
  beforeAll(async () => {
    fixture = await startRetrievalFixture(ENGINES[0]!)
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
  })

  // uWS closes an HTTP connection that stays idle for 10 s in some states; proxies and clients have idle timeouts too.
  const UWS_IDLE_TIMEOUT_MS = 10_000
  it.each(['rest-ndjson', 'rest-sse'] as const)(
    'over %s, an answer held past the 10 s idle timeout still arrives; heartbeats kept the connection busy',
    async (kind) => {
      const release = fixture.chat.hold()
      try {
        const reader = await openStream(kind, fixture.client, fixture.alice.apiKey, {
          message: QUESTIONS[1]!.message,
          spaceKeys: [{ spaceId: fixture.alices.spaceId }],
          postProcessor: { llmId: fixture.aliceLlm },
        })
        await readUntil(reader, isEnd)
        await new Promise((resolve) => setTimeout(resolve, UWS_IDLE_TIMEOUT_MS + HEARTBEAT_MS / 2))
        release()
        expect(await reader.next()).toMatchObject({
          abstractReply: { text: expect.stringMatching(/^According to the context: /) },
        })
        expect(await reader.next()).toBeUndefined()
        expect(reader.heartbeats).toBeGreaterThan(0)
      } finally {
        release()
      }
    },
    30_000,
  )

  it('a reader that stops reading while megabytes are streamed gets every byte, in order, once it reads again (backpressure)', async () => {
    const context = fixture.server.server.context
    const call = fixture.as(fixture.alice)
    const space = await spaces.createSpace(context, call, {
      name: `large-${crypto.randomUUID().slice(0, 8)}`,
      spaceEmbedders: [{ embedderId: fixture.aliceEmbedder }],
    })
    // Few distinct words, so the full-text index stays small; no chunking, so each item carries the whole text as well.
    const WORDS_PER_MEMORY = 4_000
    const MEMORY_COUNT = 100
    const ids: string[] = []
    for (let index = 0; index < MEMORY_COUNT; index++) {
      const text = Array.from(
        { length: WORDS_PER_MEMORY },
        (_, word) => ['alpha', 'beta', 'gamma', 'delta'][(word + index) % 4],
      ).join(' ')
      const { memory } = await memories.createMemory(context, call, {
        spaceId: space.spaceId,
        originalContent: text,
        chunkingConfig: { none: {} },
      })
      ids.push(memory.memoryId)
    }
    for (const id of ids) expect((await fixture.settled(id)).processingStatus).toBe('COMPLETED')
    const body = JSON.stringify({
      message: 'alpha beta',
      spaceKeys: [{ spaceId: space.spaceId }],
      requestedSize: MEMORY_COUNT,
      mode: 'VECTOR',
      fetchMemoryContent: true,
    })
    const { response, text } = await new Promise<{ response: http.IncomingMessage; text: Promise<string> }>(
      (resolve, reject) => {
        const request = http.request(
          `${fixture.server.restUrl}/v1/memories:retrieve`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${fixture.alice.apiKey}` },
          },
          (incoming) => {
            // Not reading: the server's writes back up into uWS's buffer until the reader resumes.
            incoming.pause()
            const chunks: Buffer[] = []
            const text = new Promise<string>((done, fail) => {
              incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
              incoming.on('end', () => done(Buffer.concat(chunks).toString('utf8')))
              incoming.on('error', fail)
            })
            resolve({ response: incoming, text })
          },
        )
        request.on('error', reject)
        request.end(body)
      },
    )
    // A pause long enough for the server to fill the socket and hit backpressure; the outcome does not depend on its length.
    await new Promise((resolve) => setTimeout(resolve, 500))
    response.resume()
    const events = (await text)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line))
    expect(events.map((event) => Object.keys(event)[0])).toEqual([
      'resultSetBoundary',
      ...ids.flatMap(() => ['memoryDefinition', 'retrievedItem']),
      'resultSetBoundary',
    ])
    expect(
      new Set(events.flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk.memoryId] : []))),
    ).toEqual(new Set(ids))
    const total = events.reduce((sum, event) => sum + JSON.stringify(event).length, 0)
    // Far more than a loopback socket and uWS's first write take at once.
    expect(total).toBeGreaterThan(4_000_000)
    for (const event of events.filter((entry) => entry.memoryDefinition))
      expect(event.memoryDefinition.memory.originalContent.split(' ')).toHaveLength(WORDS_PER_MEMORY)
    for (const event of events.filter((entry) => entry.retrievedItem))
      expect(event.retrievedItem.chunk.chunkText.split(' ')).toHaveLength(WORDS_PER_MEMORY)
  }, 120_000)
})

describe.each(ENGINES)('retrieval streams through a drain (%s)', (engine) => {
  let fixture: RetrievalFixture
  beforeAll(async () => {
    fixture = await startRetrievalFixture(engine)
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
  })

  it('streams already running on every transport finish with their answer; new ones are refused; then the server quiesces', async () => {
    const request = {
      message: QUESTIONS[0]!.message,
      spaceKeys: [{ spaceId: fixture.alices.spaceId }],
      postProcessor: { llmId: fixture.aliceLlm },
    }
    const release = fixture.chat.hold()
    try {
      const readers = await Promise.all(
        STREAM_KINDS.map((kind) => openStream(kind, fixture.client, fixture.alice.apiKey, request)),
      )
      for (const reader of readers) await readUntil(reader, isEnd)
      expect(fixture.server.server.lifecycle.inFlight).toBe(STREAM_KINDS.length)
      const drain = await fixture.call('rest', 'drain', { reason: 'stream test' }, fixture.root.apiKey)
      expect(drain.body).toMatchObject({ state: 'DRAINING', quiesced: false })
      for (const kind of STREAM_KINDS) {
        const refused = await openStream(kind, fixture.client, fixture.alice.apiKey, request).then(
          () => undefined,
          (error: unknown) => error,
        )
        expect(refused, kind).toMatchObject({ status: 'UNAVAILABLE' })
      }
      release()
      for (const reader of readers) {
        expect(await reader.next()).toMatchObject({
          abstractReply: { text: expect.stringMatching(/^According to the context: /) },
        })
        expect(await reader.next()).toBeUndefined()
      }
      await waitFor('the drain to quiesce', () => fixture.server.server.lifecycle.state === 'QUIESCED')
    } finally {
      release()
    }
  })
})
