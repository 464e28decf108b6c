// Space export and import over both transports and engines: a round trip keeps every memory
// with its chunks and vectors, dedupes, resumes a cut stream, and embeds again where the
// target space's embedders have another fingerprint.
import { describe, expect, it } from 'vitest'
import { TRANSPORTS, type Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { makeTextPdf } from '../support/document-fixtures.js'
import { settledDocument, uploadDocument } from '../support/document-uploads.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { exportSpaceText, getImport, importSpaceStream, linesOf, textOf } from '../support/space-transfer.js'
import { waitFor } from '../support/wait.js'
import { useFixture } from './case-table.js'

const SMALL_CHUNKS = { recursive: { chunkSize: 40, chunkOverlap: 0 } }
const TEXTS = [
  'The lighthouse keeper logs the weather every evening before the lamp is lit.',
  'Europa hides an ocean under its ice shell, and plumes may reach its surface.',
  '# Recipe\n\nKnead the dough for ten minutes, then let it rise for an hour.',
  '{"kind":"note","text":"JSON content keeps its type"}',
  'Tide tables are printed a year ahead; the harbour master keeps the old ones.',
]

describe.each(ENGINES)('space export and import, happy cases (%s)', (engine) => {
  const fixture = useFixture(() => startMemoryFixture(engine))

  /** A space of alice's with one fake embedder and the memories of TEXTS, all COMPLETED. */
  async function filledSpace(embedderOverrides: Record<string, unknown> = {}) {
    const embedderId = await fixture().registerEmbedder(fixture().alice, embedderOverrides)
    const space = await fixture().call(
      'rest',
      'createSpace',
      {
        name: `source-${crypto.randomUUID()}`,
        labels: { team: 'ops' },
        spaceEmbedders: [{ embedderId, defaultRetrievalWeight: 0.5 }],
        defaultChunkingConfig: SMALL_CHUNKS,
        textSearchLanguage: 'simple',
      },
      fixture().alice.apiKey,
    )
    expect(space.status, space.message).toBe('OK')
    const spaceId = space.body.spaceId as string
    const memoryIds: string[] = []
    for (const [index, text] of TEXTS.entries()) {
      const created = await fixture().call(
        'rest',
        'createMemory',
        {
          spaceId,
          originalContent: text,
          contentType: text.startsWith('#')
            ? 'text/markdown'
            : text.startsWith('{')
              ? 'application/json'
              : 'text/plain',
          metadata: { index, tags: ['a', 'b'] },
          ...(index === 0 ? { validUntil: 4102444800000 } : {}),
        },
        fixture().alice.apiKey,
      )
      expect(created.status, created.message).toBe('OK')
      memoryIds.push(created.body.memoryId)
    }
    for (const id of memoryIds) expect((await fixture().settled(id)).processingStatus).toBe('COMPLETED')
    return { spaceId, embedderId, memoryIds }
  }

  async function memoriesOf(spaceId: string) {
    const page = await fixture().call('rest', 'listMemories', { spaceId, maxResults: 500 }, fixture().alice.apiKey)
    expect(page.status, page.message).toBe('OK')
    return page.body.memories as Array<Record<string, any>>
  }

  async function allSettled(spaceId: string) {
    return waitFor(`the memories of ${spaceId} to finish`, async () => {
      const memories = await memoriesOf(spaceId)
      return memories.every((memory) => memory.processingStatus === 'COMPLETED' || memory.processingStatus === 'FAILED')
        ? memories
        : undefined
    })
  }

  async function topChunks(spaceId: string, message: string, mode: 'VECTOR' | 'KEYWORD') {
    const answer = await fixture().call(
      'rest',
      'retrieveMemories',
      { message, spaceKeys: [{ spaceId }], mode, requestedSize: 3 },
      fixture().alice.apiKey,
    )
    expect(answer.status, answer.message).toBe('OK')
    return (answer.body.events as Array<Record<string, any>>)
      .filter((event) => event.retrievedItem)
      .map((event) => event.retrievedItem.chunk.chunkText as string)
  }

  const comparable = (memory: Record<string, any>) => ({
    contentType: memory.contentType,
    metadata: memory.metadata,
    originalContentSha256: memory.originalContentSha256,
    chunkCount: memory.chunkCount,
    createdAt: memory.createdAt,
    version: memory.version,
    validUntil: memory.validUntil,
    chunkingConfig: memory.chunkingConfig,
  })

  it('exports a document as its extracted text with its chunk sources; the import keeps it as a text memory', async () => {
    const { spaceId } = await filledSpace()
    const pdf = makeTextPdf([['The harbour log of the first page.'], ['The second page lists the tides.']])
    const uploaded = await uploadDocument(
      fixture(),
      fixture().alice,
      'rest-raw',
      { spaceId, contentType: 'application/pdf', fileName: 'harbour.pdf' },
      pdf,
    )
    expect(uploaded.status, uploaded.message).toBe('OK')
    expect((await settledDocument(fixture(), uploaded.body.memoryId)).processingStatus).toBe('COMPLETED')
    const exported = await exportSpaceText(fixture(), fixture().alice, 'rest', spaceId)
    const documentLine = exported.lines.find((line) => line.memory?.memoryId === uploaded.body.memoryId)!
    expect(documentLine.memory).toMatchObject({ contentType: 'application/pdf', fileName: 'harbour.pdf' })
    expect(documentLine.memory.originalContent).toContain('second page lists the tides')
    expect(documentLine.chunks.map((chunk: any) => chunk.source?.page)).toContain(2)
    const imported = await importSpaceStream(
      fixture(),
      fixture().alice,
      'grpc',
      { newSpaceName: `documents-${crypto.randomUUID()}` },
      exported.text,
    )
    expect(imported.status, imported.message).toBe('OK')
    expect(imported.body).toMatchObject({ memoriesImported: TEXTS.length + 1, memoriesReembedding: 0 })
    const copy = (await memoriesOf(imported.body.spaceId)).find((memory) => memory.fileName === 'harbour.pdf')!
    expect(copy).toMatchObject({ contentType: 'text/plain', processingStatus: 'COMPLETED' })
    expect(copy.chunkCount).toBe(documentLine.chunks.length)
    const content = await fixture().call(
      'rest',
      'getMemoryContent',
      { memoryId: copy.memoryId },
      fixture().alice.apiKey,
    )
    expect(content.body.originalContent).toBe(documentLine.memory.originalContent)
  })

  describe.each(TRANSPORTS)('over %s', (transport: Transport) => {
    it('exports a space as a header, one line per memory with its chunks and vectors, and an end line', async () => {
      const { spaceId, embedderId, memoryIds } = await filledSpace()
      const exported = await exportSpaceText(fixture(), fixture().alice, transport, spaceId)
      expect(exported.status, exported.message).toBe('OK')
      const [header, ...rest] = exported.lines
      const end = rest.pop()!
      expect(header).toMatchObject({
        kind: 'header',
        format: 'memsvc-space-export',
        formatVersion: 1,
        space: { spaceId, labels: { team: 'ops' }, textSearchLanguage: 'simple', defaultChunkingConfig: SMALL_CHUNKS },
        embedders: [
          {
            ref: 0,
            embedderId,
            providerType: 'TEI',
            dimensionality: fixture().embedder.dimensions,
            defaultRetrievalWeight: 0.5,
          },
        ],
        memoryCount: TEXTS.length,
      })
      expect(JSON.stringify(header)).not.toContain(fixture().embedder.url)
      expect(rest.map((line) => line.memory.memoryId)).toEqual(memoryIds)
      const chunkCount = rest.reduce((total, line) => total + line.chunks.length, 0)
      expect(end).toEqual({ kind: 'end', memoryCount: TEXTS.length, chunkCount })
      for (const line of rest) {
        expect(line.kind).toBe('memory')
        expect(line.chunks.length).toBeGreaterThan(0)
        for (const [index, chunk] of line.chunks.entries()) {
          expect(chunk.chunkIndex).toBe(index)
          expect(line.memory.originalContent.slice(chunk.startOffset, chunk.endOffset)).toContain(chunk.text.trim())
          expect(chunk.vectors['0']).toHaveLength(fixture().embedder.dimensions)
        }
      }
      expect(rest[0]!.memory).toMatchObject({ validUntil: 4102444800000, metadata: { index: 0, tags: ['a', 'b'] } })
      // omitVectors: the same lines without vectors.
      const bare = await exportSpaceText(fixture(), fixture().alice, transport, spaceId, { omitVectors: true })
      expect(bare.status, bare.message).toBe('OK')
      expect(bare.lines.slice(1, -1).every((line) => line.chunks.every((chunk: any) => !('vectors' in chunk)))).toBe(
        true,
      )
    })

    it('gives the same bytes over REST and gRPC (but for exportedAt)', async () => {
      const { spaceId } = await filledSpace()
      const rest = await exportSpaceText(fixture(), fixture().alice, 'rest', spaceId)
      const grpc = await exportSpaceText(fixture(), fixture().alice, 'grpc', spaceId)
      const withoutTime = (text: string) => text.replace(/"exportedAt":\d+/, '')
      expect(withoutTime(grpc.text)).toBe(withoutTime(rest.text))
    })

    it('imports into a new space with the same embedder: memories, chunks and vectors kept, no embedding', async () => {
      const { spaceId, embedderId } = await filledSpace()
      const exported = await exportSpaceText(fixture(), fixture().alice, transport, spaceId)
      const requestsBefore = fixture().embedder.requests.length
      const name = `moved-${crypto.randomUUID()}`
      const imported = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { newSpaceName: name },
        exported.text,
      )
      expect(imported.status, imported.message).toBe('OK')
      const chunkCount = exported.lines.at(-1)!.chunkCount
      expect(imported.body).toMatchObject({
        state: 'COMPLETED',
        linesApplied: TEXTS.length + 2,
        memoriesExpected: TEXTS.length,
        memoriesImported: TEXTS.length,
        memoriesSkipped: 0,
        memoriesReembedding: 0,
        chunksImported: chunkCount,
        vectorsImported: chunkCount,
        createdById: fixture().alice.userId,
      })
      expect(fixture().embedder.requests.length).toBe(requestsBefore)
      const target = await fixture().call(
        'rest',
        'getSpace',
        { spaceId: imported.body.spaceId },
        fixture().alice.apiKey,
      )
      expect(target.body).toMatchObject({
        name,
        ownerId: fixture().alice.userId,
        labels: { team: 'ops' },
        textSearchLanguage: 'simple',
        defaultChunkingConfig: SMALL_CHUNKS,
        spaceEmbedders: [{ embedderId, defaultRetrievalWeight: 0.5, indexState: 'READY' }],
      })
      const source = await memoriesOf(spaceId)
      const copied = await memoriesOf(imported.body.spaceId)
      expect(copied.map(comparable)).toEqual(source.map(comparable))
      expect(copied.every((memory) => memory.processingStatus === 'COMPLETED')).toBe(true)
      // The exported ids are taken in this database: the copies have new ones.
      expect(copied.map((memory) => memory.memoryId)).not.toContain(source[0]!.memoryId)
      for (const mode of ['VECTOR', 'KEYWORD'] as const)
        expect(await topChunks(imported.body.spaceId, 'ocean under the ice', mode)).toEqual(
          await topChunks(spaceId, 'ocean under the ice', mode),
        )
      const progress = await getImport(fixture(), fixture().alice, transport, imported.body.importId)
      expect(progress.status, progress.message).toBe('OK')
      expect(progress.body).toMatchObject({ importId: imported.body.importId, state: 'COMPLETED' })
      if (transport === 'rest') expect(imported.headers?.get('location')).toBe(`/v1/imports/${imported.body.importId}`)
    })

    it('skips memories whose content the space already holds', async () => {
      const { spaceId } = await filledSpace()
      const exported = await exportSpaceText(fixture(), fixture().alice, transport, spaceId)
      const again = await importSpaceStream(fixture(), fixture().alice, transport, { spaceId }, exported.text)
      expect(again.status, again.message).toBe('OK')
      expect(again.body).toMatchObject({ state: 'COMPLETED', memoriesImported: 0, memoriesSkipped: TEXTS.length })
      expect(await memoriesOf(spaceId)).toHaveLength(TEXTS.length)
    })

    it('embeds again what the target space cannot keep: another fingerprint, or no vectors', async () => {
      const { spaceId } = await filledSpace()
      const exported = await exportSpaceText(fixture(), fixture().alice, transport, spaceId)
      const other = await fixture().registerEmbedder(fixture().alice, {
        modelIdentifier: `other-${crypto.randomUUID()}`,
      })
      const imported = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { newSpaceName: `reembedded-${crypto.randomUUID()}`, embedderIds: [other] },
        exported.text,
      )
      expect(imported.status, imported.message).toBe('OK')
      expect(imported.body).toMatchObject({
        state: 'COMPLETED',
        memoriesImported: TEXTS.length,
        memoriesReembedding: TEXTS.length,
        chunksImported: 0,
        vectorsImported: 0,
      })
      const settled = await allSettled(imported.body.spaceId)
      expect(settled.map((memory) => memory.processingStatus)).toEqual(TEXTS.map(() => 'COMPLETED'))
      expect(settled.map((memory) => memory.chunkCount)).toEqual((await memoriesOf(spaceId)).map((m) => m.chunkCount))

      const bare = await exportSpaceText(fixture(), fixture().alice, transport, spaceId, { omitVectors: true })
      const fromBare = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { newSpaceName: `bare-${crypto.randomUUID()}` },
        bare.text,
      )
      expect(fromBare.status, fromBare.message).toBe('OK')
      expect(fromBare.body).toMatchObject({ memoriesReembedding: TEXTS.length, vectorsImported: 0 })
      expect((await allSettled(fromBare.body.spaceId)).every((memory) => memory.processingStatus === 'COMPLETED')).toBe(
        true,
      )
    })

    it('resumes a cut stream after its last applied line, without duplicates', async () => {
      const { spaceId } = await filledSpace()
      const exported = await exportSpaceText(fixture(), fixture().alice, transport, spaceId)
      const text = exported.text
      // Cut inside the fourth memory line.
      const lines = text.split('\n')
      const cut = `${lines.slice(0, 4).join('\n')}\n${lines[4]!.slice(0, 40)}`
      const target = await fixture().call(
        'rest',
        'createSpace',
        {
          name: `resumed-${crypto.randomUUID()}`,
          spaceEmbedders: [{ embedderId: exported.lines[0]!.embedders[0].embedderId }],
        },
        fixture().alice.apiKey,
      )
      const first = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { spaceId: target.body.spaceId },
        cut,
      )
      expect(first.status).toBe('INVALID_ARGUMENT')
      const importId = /import ([0-9a-f-]{36})/.exec(first.message)?.[1]
      expect(importId, first.message).toBeDefined()
      expect(first.message).toContain(`importId=${importId}`)
      const stopped = await getImport(fixture(), fixture().alice, transport, importId!)
      expect(stopped.body).toMatchObject({ state: 'RECEIVING', linesApplied: 4, memoriesImported: 3 })
      expect(stopped.body.error).toContain('without its end line')
      expect(await memoriesOf(target.body.spaceId)).toHaveLength(3)

      const resumed = await importSpaceStream(fixture(), fixture().alice, transport, { importId }, text)
      expect(resumed.status, resumed.message).toBe('OK')
      expect(resumed.body).toMatchObject({
        importId,
        state: 'COMPLETED',
        linesApplied: TEXTS.length + 2,
        memoriesImported: TEXTS.length,
        memoriesSkipped: 0,
        chunksImported: exported.lines.at(-1)!.chunkCount,
      })
      expect(resumed.body.error).toBeUndefined()
      const copied = await memoriesOf(target.body.spaceId)
      expect(copied.map((memory) => memory.originalContentSha256).sort()).toEqual(
        (await memoriesOf(spaceId)).map((memory) => memory.originalContentSha256).sort(),
      )
      // A completed import resumed again applies nothing.
      const done = await importSpaceStream(fixture(), fixture().alice, transport, { importId }, text)
      expect(done.body).toMatchObject({ importId, state: 'COMPLETED', memoriesImported: TEXTS.length })
    })

    it('keeps the exported ids where they are free, and reads blank lines and a last line without a line break', async () => {
      const { spaceId } = await filledSpace()
      const exported = await exportSpaceText(fixture(), fixture().alice, transport, spaceId)
      const [header, ...rest] = exported.lines
      const fresh = rest.slice(0, -1).map((line) => ({
        ...line,
        memory: { ...line.memory, memoryId: crypto.randomUUID() },
      }))
      const body = `${textOf([header!])}\n\r\n${textOf(fresh)}  \n${JSON.stringify(rest.at(-1))}`
      const imported = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { newSpaceName: `ids-${crypto.randomUUID()}` },
        body,
      )
      expect(imported.status, imported.message).toBe('OK')
      const copied = await memoriesOf(imported.body.spaceId)
      expect(copied.map((memory) => memory.memoryId)).toEqual(fresh.map((line) => line.memory.memoryId))
      expect(linesOf(body)).toHaveLength(TEXTS.length + 2)
    })
  })
})
