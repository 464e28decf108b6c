import { describe, expect, it } from 'vitest'
import { REGEX_CHUNKING_BUDGET_MS } from '../../src/chunking/chunk-text.js'
import { MAX_SEPARATOR_PROGRAM_SIZE } from '../../src/chunking/separator-regex.js'
import { MAX_BATCH_REGEX_SEPARATORS } from '../../src/validation/memory.js'
import { TRANSPORTS, type Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { waitFor } from '../support/wait.js'
import { itEachCase, useFixture } from './case-table.js'
import type { ApiCase } from './identity-cases.js'
import { newSpace } from './memory-cases.js'

/**
 * Issue 30, defect 3: a memory split on `(a+)+$` over 31 `a` held the event loop, and so
 * every REST and gRPC call, for 21.8 s. Separators now run on RE2, and patterns RE2 cannot
 * run (lookaround, backreferences) are refused when the settings are sent.
 */

const CATASTROPHIC = '(a+)+$'
/** The 31 `a`, and a `b` so that `(a+)+$` fails at every start, the slowest case. */
const CATASTROPHIC_CONTENT = `${'a'.repeat(31)}b`
const CHUNK_SIZE = 8
/** Generous: on a free event loop this call takes milliseconds; the defect held it for 21.8 s, the budget for 3. */
const PROMPT_ANSWER_MS = 5_000

const regexChunking = (separators: string[]) => ({
  recursive: { chunkSize: CHUNK_SIZE, chunkOverlap: 0, separators, separatorIsRegex: true },
})
const settledStatus = (status: unknown) => status === 'COMPLETED' || status === 'FAILED'

const refusedSeparator = (
  name: string,
  operation: 'createMemory' | 'createSpace',
  separators: string[],
  field: string,
  reason: RegExp,
): ApiCase => ({
  name,
  operation,
  as: 'alice',
  expect: 'INVALID_ARGUMENT',
  field,
  prepare: async (fixture) =>
    operation === 'createMemory'
      ? newSpace(fixture)
      : { embedderId: await (fixture as MemoryFixture).registerEmbedder(fixture.alice) },
  input: (prepared) =>
    operation === 'createMemory'
      ? { spaceId: prepared.spaceId, originalContent: 'intro\n## part', chunkingConfig: regexChunking(separators) }
      : {
          name: 'regex separators',
          spaceEmbedders: [{ embedderId: prepared.embedderId }],
          defaultChunkingConfig: regexChunking(separators),
        },
  verify: (result) => expect(result.message).toMatch(reason),
})

const REFUSED: ApiCase[] = [
  refusedSeparator(
    'memory: a lookahead separator is 400 naming its index and saying lookahead is not supported',
    'createMemory',
    ['\\n\\n', '\\n(?=## )'],
    'chunkingConfig.recursive.separators.1',
    /lookahead/,
  ),
  refusedSeparator(
    'memory: a backreference separator is 400 naming it and saying backreferences are not supported',
    'createMemory',
    ['(\\w+) \\1'],
    'chunkingConfig.recursive.separators.0',
    /backreferences/,
  ),
  refusedSeparator(
    `memory: a separator compiling to more than ${MAX_SEPARATOR_PROGRAM_SIZE} instructions is 400 naming it`,
    'createMemory',
    ['.{1000}'],
    'chunkingConfig.recursive.separators.0',
    /too complex/,
  ),
  refusedSeparator(
    "space: a lookbehind separator in the space's default is 400 naming it",
    'createSpace',
    ['(?<=\\.) '],
    'defaultChunkingConfig.recursive.separators.0',
    /lookbehind/,
  ),
  {
    name: `memory batch: more than ${MAX_BATCH_REGEX_SEPARATORS} different regex separators between the requests is 400 naming requests`,
    operation: 'batchCreateMemories',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'requests',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      requests: Array.from({ length: MAX_BATCH_REGEX_SEPARATORS + 1 }, (_, index) =>
        batchItem(prepared.spaceId, index, [`\\n${index}`]),
      ),
    }),
    verify: (result) => expect(result.message).toMatch(/different regex separators/),
  },
]

const batchItem = (spaceId: string, index: number, separators: string[]) => ({
  spaceId,
  originalContent: `memory ${index}`,
  chunkingConfig: regexChunking(separators),
})

const ACCEPTED: ApiCase[] = [
  {
    name: 'memory batch: many requests sharing the same regex separators are all created',
    operation: 'batchCreateMemories',
    as: 'alice',
    expect: 'OK',
    prepare: (fixture) => newSpace(fixture),
    input: (prepared) => ({
      requests: Array.from({ length: 3 * MAX_BATCH_REGEX_SEPARATORS }, (_, index) =>
        batchItem(prepared.spaceId, index, ['\\n#{1,6} ', '[.!?]\\s+']),
      ),
    }),
    verify: (result) => {
      expect(result.body.results).toHaveLength(3 * MAX_BATCH_REGEX_SEPARATORS)
      for (const item of result.body.results) expect(item.memory?.memoryId).toEqual(expect.any(String))
    },
  },
]

describe.each(ENGINES)('regex separators (%s)', (engine) => {
  const fixture = useFixture(() => startMemoryFixture(engine))

  itEachCase(fixture, [...REFUSED, ...ACCEPTED])

  /**
   * Creates alice's memory, then asks for one of bob's spaces back to back until the memory
   * is ingested: an ingest that held the event loop would hold one of those answers as long.
   */
  async function ingestWhileOthersAsk(transport: Transport, originalContent: string, separators: string[]) {
    const { alice, bob } = fixture()
    const [aliceSpace, bobSpace] = [await newSpace(fixture(), 'alice'), await newSpace(fixture(), 'bob')]
    const created = await fixture().call(
      transport,
      'createMemory',
      { spaceId: aliceSpace.spaceId, originalContent, chunkingConfig: regexChunking(separators) },
      alice.apiKey,
    )
    expect(created.status, created.message).toBe('OK')
    const memoryId: string = (created.body.memory ?? created.body).memoryId
    const otherAnswers: Array<{ status: string; ms: number }> = []
    const memory = await waitFor(
      `memory ${memoryId} to finish ingest`,
      async () => {
        const asked = performance.now()
        const other = await fixture().call(transport, 'getSpace', { spaceId: bobSpace.spaceId }, bob.apiKey)
        otherAnswers.push({ status: other.status, ms: performance.now() - asked })
        const current = await fixture().call(transport, 'getMemory', { memoryId }, alice.apiKey)
        return settledStatus(current.body?.processingStatus) ? current.body : undefined
      },
      { intervalMs: 0 },
    )
    return { memory, otherAnswers }
  }

  function expectAnsweredPromptly(otherAnswers: Array<{ status: string; ms: number }>) {
    expect(otherAnswers.length).toBeGreaterThan(0)
    for (const answer of otherAnswers) {
      expect(answer.status).toBe('OK')
      expect(answer.ms).toBeLessThan(PROMPT_ANSWER_MS)
    }
  }

  describe.each(TRANSPORTS)('over %s', (transport) => {
    it(`a memory split on ${CATASTROPHIC} ingests while another user's GetSpace keeps answering promptly`, async () => {
      const { memory, otherAnswers } = await ingestWhileOthersAsk(transport, CATASTROPHIC_CONTENT, [CATASTROPHIC])
      expect(memory).toMatchObject({ processingStatus: 'COMPLETED', chunkCount: 4 })
      expectAnsweredPromptly(otherAnswers)
    })

    it(`separators that would hold the event loop past ${REGEX_CHUNKING_BUDGET_MS} ms fail the memory, saying why, and others keep answering`, async () => {
      // x.*y|x reads to the end of the text at every x: RE2 finds each match in linear time, all of them in quadratic.
      const { memory, otherAnswers } = await ingestWhileOthersAsk(transport, 'x'.repeat(200_000), ['x.*y|x'])
      expect(memory.processingStatus).toBe('FAILED')
      expect(memory.processingError).toMatch(/regex separators took longer than/)
      expectAnsweredPromptly(otherAnswers)
    })
  })
})
