import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { VectorSupport } from '../../src/db/vector-storage.js'
import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import { AppError } from '../../src/errors/app-error.js'
import { MAX_CONTENT_BYTES } from '../../src/validation/memory.js'
import { ENGINES } from '../support/databases.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

/** The AppError a call rejects with, as code + the fields it names. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; fields: string[]; message: string }> {
  try {
    await promise
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    return { code: error.code, fields: error.details.map((detail) => detail.field), message: error.message }
  }
  throw new Error('expected the call to fail')
}

describe.each(ENGINES)('spaces and memories: bad input (%s)', (engine) => {
  let fixture: MemoryFixture
  let embedderId: string
  let spaceId: string
  const context = () => fixture.server.server.context
  const alice = () => fixture.as(fixture.alice)

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    embedderId = await fixture.registerEmbedder(fixture.alice)
    spaceId = (await spaces.createSpace(context(), alice(), { name: 'errors', spaceEmbedders: [{ embedderId }] }))
      .spaceId
  }, 240_000)
  afterAll(() => fixture?.stop())

  const createMemory = (input: Record<string, unknown>) =>
    failure(memories.createMemory(context(), alice(), { spaceId, ...input }))
  const createSpace = (input: Record<string, unknown>) =>
    failure(
      spaces.createSpace(context(), alice(), {
        name: `s-${crypto.randomUUID()}`,
        spaceEmbedders: [{ embedderId }],
        ...input,
      }),
    )

  it.each([
    ['empty content', { originalContent: '' }, 'INVALID_ARGUMENT', 'originalContent'],
    ['blank content', { originalContent: ' \n\t' }, 'INVALID_ARGUMENT', 'originalContent'],
    [
      'both content fields',
      { originalContent: 'a', originalContentB64: 'YQ==' },
      'INVALID_ARGUMENT',
      'originalContent',
    ],
    ['no content field', {}, 'INVALID_ARGUMENT', 'originalContent'],
    ['an unknown contentType', { originalContent: 'a', contentType: 'image/png' }, 'INVALID_ARGUMENT', 'contentType'],
    [
      'JSON content that is not JSON',
      { originalContent: '{nope', contentType: 'application/json' },
      'INVALID_ARGUMENT',
      'originalContent',
    ],
    [
      'base64 that is not UTF-8',
      { originalContentB64: Buffer.from([0xff, 0xfe, 0xfd]).toString('base64') },
      'INVALID_ARGUMENT',
      'originalContentB64',
    ],
    ['content with NUL', { originalContent: 'a\u0000b' }, 'INVALID_ARGUMENT', 'originalContent'],
    ['metadata that is not an object', { originalContent: 'a', metadata: ['x'] }, 'INVALID_ARGUMENT', 'metadata'],
    [
      'metadata with 51 properties',
      { originalContent: 'a', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
      'INVALID_ARGUMENT',
      'metadata',
    ],
    [
      'chunk overlap equal to the size',
      { originalContent: 'a', chunkingConfig: { recursive: { chunkSize: 100, chunkOverlap: 100 } } },
      'INVALID_ARGUMENT',
      'chunkingConfig.recursive.chunkOverlap',
    ],
    [
      'two chunking strategies',
      { originalContent: 'a', chunkingConfig: { none: {}, sentence: {} } },
      'INVALID_ARGUMENT',
      'chunkingConfig',
    ],
    [
      'a separator regex that does not compile',
      { originalContent: 'a', chunkingConfig: { recursive: { separators: ['('], separatorIsRegex: true } } },
      'INVALID_ARGUMENT',
      'chunkingConfig.recursive.separators.0',
    ],
    ['an unknown field', { originalContent: 'a', colour: 'red' }, 'INVALID_ARGUMENT', 'colour'],
  ])('memory with %s: 400 naming the field', async (_name, input, code, field) => {
    const result = await createMemory(input)
    expect(result.code).toBe(code)
    expect(result.fields).toContain(field)
  })

  it('content over the size limit is 413 naming the field, as text or base64', async () => {
    const big = 'x'.repeat(MAX_CONTENT_BYTES + 1)
    expect(await createMemory({ originalContent: big })).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      fields: ['originalContent'],
    })
    expect(await createMemory({ originalContentB64: Buffer.from(big).toString('base64') })).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      fields: ['originalContentB64'],
    })
  })

  it('a memoryId used before is 409; an unknown space is 404', async () => {
    const memoryId = crypto.randomUUID()
    await memories.createMemory(context(), alice(), { spaceId, memoryId, originalContent: 'once' })
    expect((await createMemory({ memoryId, originalContent: 'twice' })).code).toBe('ALREADY_EXISTS')
    expect(
      (await failure(memories.createMemory(context(), alice(), { spaceId: crypto.randomUUID(), originalContent: 'a' })))
        .code,
    ).toBe('NOT_FOUND')
  })

  it.each([
    [
      'a language the database lacks',
      { spaceEmbedders: [], textSearchLanguage: 'klingon' },
      'INVALID_ARGUMENT',
      'textSearchLanguage',
    ],
    [
      'the same embedder twice',
      { spaceEmbedders: [{ embedderId: 'EMBEDDER' }, { embedderId: 'EMBEDDER' }] },
      'INVALID_ARGUMENT',
      'spaceEmbedders',
    ],
    [
      'an unknown embedder',
      { spaceEmbedders: [{ embedderId: '00000000-0000-4000-8000-000000000000' }] },
      'NOT_FOUND',
      'spaceEmbedders.0.embedderId',
    ],
    [
      'a negative weight',
      { spaceEmbedders: [{ embedderId: 'EMBEDDER', defaultRetrievalWeight: -1 }] },
      'INVALID_ARGUMENT',
      'spaceEmbedders.0.defaultRetrievalWeight',
    ],
    ['an empty name', { name: '  ' }, 'INVALID_ARGUMENT', 'name'],
    [
      'sentence min ≥ max',
      { defaultChunkingConfig: { sentence: { maxChunkSize: 10, minChunkSize: 10 } } },
      'INVALID_ARGUMENT',
      'defaultChunkingConfig.sentence.minChunkSize',
    ],
  ])('space with %s: an error naming the field', async (_name, input, code, field) => {
    const withEmbedder = JSON.parse(JSON.stringify(input).replaceAll('EMBEDDER', embedderId))
    const result = await createSpace(withEmbedder)
    expect(result.code).toBe(code)
    expect(result.fields).toContain(field)
  })

  it('a duplicate space name for one owner is 409; another owner may use it', async () => {
    await spaces.createSpace(context(), alice(), { name: 'taken', spaceEmbedders: [{ embedderId }] })
    expect((await createSpace({ name: 'taken' })).code).toBe('ALREADY_EXISTS')
    const bobEmbedder = await fixture.registerEmbedder(fixture.bob)
    await spaces.createSpace(context(), fixture.as(fixture.bob), {
      name: 'taken',
      spaceEmbedders: [{ embedderId: bobEmbedder }],
    })
  })

  it('adding an embedder already in the space is 409; removing one it does not have is 404', async () => {
    expect((await failure(spaces.addSpaceEmbedder(context(), alice(), spaceId, { embedderId }))).code).toBe(
      'ALREADY_EXISTS',
    )
    const other = await fixture.registerEmbedder(fixture.alice, { modelIdentifier: 'not-in-the-space' })
    expect((await failure(spaces.removeSpaceEmbedder(context(), alice(), spaceId, { embedderId: other }))).code).toBe(
      'NOT_FOUND',
    )
  })

  it('without pgvector, memory calls answer FAILED_PRECONDITION naming the extension and how to install it', async () => {
    // The context is built once with what the server found; this test stands in a database without pgvector.
    const writable = context() as { vectorSupport: VectorSupport }
    const saved = writable.vectorSupport
    writable.vectorSupport = {
      available: false,
      reason: 'the extension "vector" is not installed on this PostgreSQL server; install pgvector 0.8 or newer',
    }
    try {
      const result = await failure(memories.createMemory(context(), alice(), { spaceId, originalContent: 'a' }))
      expect(result.code).toBe('FAILED_PRECONDITION')
      expect(result.message).toContain('"vector"')
      expect(result.message).toContain('pgvector')
      expect((await failure(memories.listMemories(context(), alice(), { spaceId }))).code).toBe('FAILED_PRECONDITION')
      expect((await createSpace({})).code).toBe('FAILED_PRECONDITION')
    } finally {
      writable.vectorSupport = saved
    }
  })
})
