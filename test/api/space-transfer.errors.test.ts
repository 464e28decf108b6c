// Bad input to a space import, over both transports and engines: each refused with a 4xx that
// names the line and the field, and nothing of the refused line's batch applied. And the
// requests of an export and an import that are refused before any line is read.
import * as grpc from '@grpc/grpc-js'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SpaceServiceClient } from '../../src/generated/memsvc/v1/spaces.js'
import { TRANSPORTS, type Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { exportSpaceText, getImport, importSpaceStream, textOf } from '../support/space-transfer.js'
import { useFixture } from './case-table.js'

type Line = Record<string, any>

const TEXTS = [
  'Barnacles cling to the pier and feed when the tide comes in.',
  'The orchard was planted in rows of pears, apples and quinces.',
  'A sextant measures the angle between the horizon and a star.',
  'Sourdough keeps its starter alive with flour and water each day.',
]
/** Header, four memory lines, end: the end line is line 6. */
const END_LINE = TEXTS.length + 2

interface CorruptionCase {
  name: string
  corrupt(lines: Line[]): string | Buffer
  status: string
  /** The line the error names, in its message and its first field. */
  line: number
  field: string
  message: string
  /** The import's state afterwards, when the header was read. */
  state?: 'FAILED' | 'RECEIVING'
  /** Memories applied before the stream was refused (all lines fit one batch). */
  applied?: number
}

const clone = (lines: Line[]): Line[] => JSON.parse(JSON.stringify(lines))
const edited = (edit: (lines: Line[]) => void) => (lines: Line[]) => {
  const copy = clone(lines)
  edit(copy)
  return textOf(copy)
}
const replacingLine = (index: number, text: string) => (lines: Line[]) => {
  const texts = textOf(lines).split('\n')
  texts[index] = text
  return texts.join('\n')
}

const CORRUPTIONS: CorruptionCase[] = [
  {
    name: 'a line that is not JSON',
    corrupt: replacingLine(2, '{"kind":"memory","memory":{'),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'line',
    message: 'is not JSON',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'an unknown kind',
    corrupt: edited((lines) => {
      lines[2]!.kind = 'note'
    }),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'kind',
    message: 'must be "memory" or "end"',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'a missing field',
    corrupt: edited((lines) => {
      delete lines[3]!.memory.originalContent
    }),
    status: 'INVALID_ARGUMENT',
    line: 4,
    field: 'memory.originalContent',
    message: 'is required',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'an ill-typed field',
    corrupt: edited((lines) => {
      lines[2]!.memory.metadata = 'not an object'
    }),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'memory.metadata',
    message: 'must be a JSON object',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'another format',
    corrupt: edited((lines) => {
      lines[0]!.format = 'someone-elses-export'
    }),
    status: 'INVALID_ARGUMENT',
    line: 1,
    field: 'format',
    message: 'must be "memsvc-space-export"',
  },
  {
    name: 'another format version',
    corrupt: edited((lines) => {
      lines[0]!.formatVersion = 2
    }),
    status: 'INVALID_ARGUMENT',
    line: 1,
    field: 'formatVersion',
    message: 'must be 1',
  },
  {
    name: 'a vector of the wrong dimension',
    corrupt: edited((lines) => {
      lines[3]!.chunks[0].vectors['0'] = [0.1, 0.2, 0.3]
    }),
    status: 'INVALID_ARGUMENT',
    line: 4,
    field: 'chunks.0.vectors.0',
    message: 'has 3 values',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'a vector value that is not a number',
    corrupt: edited((lines) => {
      lines[2]!.chunks[0].vectors['0'][5] = 'x'
    }),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'chunks.0.vectors.0.5',
    message: 'must be a number',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'vectors of an embedder the header does not name',
    corrupt: edited((lines) => {
      lines[2]!.chunks[0].vectors['7'] = lines[2]!.chunks[0].vectors['0']
    }),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'chunks.0.vectors.7',
    message: 'names no embedder of the header',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'chunks out of order',
    corrupt: edited((lines) => {
      lines[2]!.chunks[0].chunkIndex = 5
    }),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'chunks.0.chunkIndex',
    message: 'must be 0',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'a content changed after its hash',
    corrupt: edited((lines) => {
      lines[4]!.memory.originalContent += ' (edited)'
    }),
    status: 'INVALID_ARGUMENT',
    line: 5,
    field: 'memory.originalContentSha256',
    message: 'is not the SHA-256 of originalContent',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'a memory before the header',
    corrupt: (lines) => textOf(lines.slice(1)),
    status: 'INVALID_ARGUMENT',
    line: 1,
    field: 'kind',
    message: 'must be "header"',
  },
  {
    name: 'a second header',
    corrupt: (lines) => textOf([lines[0]!, lines[1]!, lines[0]!, ...lines.slice(2)]),
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'kind',
    message: 'a second header',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'end-line counts that do not match (memories)',
    corrupt: edited((lines) => {
      lines.at(-1)!.memoryCount = TEXTS.length + 1
    }),
    status: 'INVALID_ARGUMENT',
    line: END_LINE,
    field: 'memoryCount',
    message: `but the stream holds ${TEXTS.length} memory lines`,
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'end-line counts that do not match (chunks)',
    corrupt: edited((lines) => {
      lines.at(-1)!.chunkCount += 1
    }),
    status: 'INVALID_ARGUMENT',
    line: END_LINE,
    field: 'chunkCount',
    message: 'chunks',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'a line after the end line',
    corrupt: (lines) => textOf([...lines, lines[1]!]),
    status: 'INVALID_ARGUMENT',
    line: END_LINE + 1,
    field: 'line',
    message: 'nothing may follow the end line',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: "an export's error line",
    corrupt: (lines) =>
      textOf([...lines.slice(0, 3), { kind: 'error', error: { code: 'INTERNAL', message: 'internal error' } }]),
    status: 'INVALID_ARGUMENT',
    line: 4,
    field: 'kind',
    message: 'the export failed here',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'bytes that are not UTF-8',
    corrupt: (lines) => {
      const texts = textOf(lines).split('\n')
      const [before, after] = [texts.slice(0, 2).join('\n'), texts.slice(3).join('\n')]
      return Buffer.concat([
        Buffer.from(`${before}\n{"kind":"memory","x":"`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`"}\n${after}`),
      ])
    },
    status: 'INVALID_ARGUMENT',
    line: 3,
    field: 'line',
    message: 'is not UTF-8',
    state: 'FAILED',
    applied: 0,
  },
  {
    name: 'a stream cut before its end line (complete lines applied)',
    corrupt: (lines) => textOf(lines.slice(0, -1)),
    status: 'INVALID_ARGUMENT',
    line: END_LINE,
    field: 'line',
    message: 'without its end line',
    state: 'RECEIVING',
    applied: TEXTS.length,
  },
  {
    name: 'an empty stream',
    corrupt: () => '',
    status: 'INVALID_ARGUMENT',
    line: 1,
    field: 'line',
    message: 'the stream is empty',
  },
]

describe.each(ENGINES)('space export and import, bad input (%s)', (engine) => {
  const fixture = useFixture(() => startMemoryFixture(engine))
  let spaceId: string
  let embedderId: string
  let lines: Line[]
  let text: string

  beforeAll(async () => {
    embedderId = await fixture().registerEmbedder(fixture().alice)
    const space = await fixture().call(
      'rest',
      'createSpace',
      { name: `source-${crypto.randomUUID()}`, spaceEmbedders: [{ embedderId }] },
      fixture().alice.apiKey,
    )
    spaceId = space.body.spaceId
    for (const content of TEXTS) {
      const created = await fixture().call(
        'rest',
        'createMemory',
        { spaceId, originalContent: content },
        fixture().alice.apiKey,
      )
      await fixture().settled(created.body.memoryId)
    }
    const exported = await exportSpaceText(fixture(), fixture().alice, 'rest', spaceId)
    expect(exported.status, exported.message).toBe('OK')
    lines = exported.lines
    text = exported.text
  }, 120_000)

  async function emptyTarget(): Promise<string> {
    const created = await fixture().call(
      'rest',
      'createSpace',
      { name: `target-${crypto.randomUUID()}`, spaceEmbedders: [{ embedderId }] },
      fixture().alice.apiKey,
    )
    expect(created.status, created.message).toBe('OK')
    return created.body.spaceId
  }

  async function memoryCount(target: string): Promise<number> {
    const page = await fixture().call(
      'rest',
      'listMemories',
      { spaceId: target, maxResults: 500 },
      fixture().alice.apiKey,
    )
    return page.body.memories.length
  }

  describe.each(TRANSPORTS)('over %s', (transport: Transport) => {
    it.each(CORRUPTIONS)('refuses $name, naming the line and the field', async (testCase) => {
      const target = await emptyTarget()
      const answer = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { spaceId: target },
        testCase.corrupt(lines),
      )
      expect(answer.status, answer.message).toBe(testCase.status)
      expect(answer.message).toContain(`line ${testCase.line}: `)
      expect(answer.message).toContain(testCase.message)
      expect(answer.fields[0]).toBe(`line ${testCase.line}: ${testCase.field}`)
      expect(await memoryCount(target)).toBe(testCase.applied ?? 0)
      const importId = /import ([0-9a-f-]{36})/.exec(answer.message)?.[1]
      if (!testCase.state) {
        expect(importId).toBeUndefined()
        return
      }
      expect(importId, answer.message).toBeDefined()
      const stopped = await getImport(fixture(), fixture().alice, transport, importId!)
      expect(stopped.body.state).toBe(testCase.state)
      expect(stopped.body.error).toContain(testCase.message)
    })

    it('refuses a line longer than an import holds', async () => {
      // Not sent: refused from its first bytes past the limit. A 96 MiB line stands in as its start.
      const target = await emptyTarget()
      const long = `${textOf([lines[0]!])}{"kind":"memory","memory":{"originalContent":"${'x'.repeat(97 * 1024 * 1024)}`
      const answer = await importSpaceStream(fixture(), fixture().alice, transport, { spaceId: target }, long)
      expect(answer.status, answer.message).toBe('PAYLOAD_TOO_LARGE')
      expect(answer.message).toContain('line 2: ')
    }, 60_000)

    it('refuses requests that name no target, or two', async () => {
      const cases: Array<{ parameters: Record<string, unknown>; field: string }> = [
        { parameters: {}, field: 'spaceId' },
        { parameters: { spaceId, newSpaceName: 'both' }, field: 'spaceId' },
        { parameters: { importId: crypto.randomUUID(), spaceId }, field: 'importId' },
        { parameters: { spaceId, embedderIds: [embedderId] }, field: 'embedderIds' },
        { parameters: { spaceId: 'not-a-uuid' }, field: 'spaceId' },
        { parameters: { newSpaceName: ' ' }, field: 'newSpaceName' },
      ]
      for (const { parameters, field } of cases) {
        const answer = await importSpaceStream(fixture(), fixture().alice, transport, parameters, text)
        expect(answer.status, JSON.stringify(parameters)).toBe('INVALID_ARGUMENT')
        expect(answer.fields, answer.message).toContain(field)
      }
    })

    it("refuses a new space whose embedders are unknown, or unmatched by the export's fingerprints", async () => {
      const unknown = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { newSpaceName: `x-${crypto.randomUUID()}`, embedderIds: [crypto.randomUUID()] },
        text,
      )
      expect(unknown.status).toBe('NOT_FOUND')
      expect(unknown.fields).toContain('embedderIds.0')
      const strange = clone(lines)
      strange[0]!.embedders[0].modelIdentifier = 'no-such-model'
      const unmatched = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { newSpaceName: `y-${crypto.randomUUID()}` },
        textOf(strange),
      )
      expect(unmatched.status).toBe('INVALID_ARGUMENT')
      expect(unmatched.fields).toEqual(['line 1: embedders.0'])
      expect(unmatched.message).toContain('TEI "no-such-model" with 16 dimensions')
      expect(unmatched.message).toContain('embedderIds')
    })

    it('refuses a new space under a name the caller already uses (409)', async () => {
      const name = `taken-${crypto.randomUUID()}`
      await fixture().call('rest', 'createSpace', { name }, fixture().alice.apiKey)
      const answer = await importSpaceStream(fixture(), fixture().alice, transport, { newSpaceName: name }, text)
      expect(answer.status).toBe('ALREADY_EXISTS')
    })

    it('refuses to resume an unknown import, or one with another stream', async () => {
      const unknown = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { importId: crypto.randomUUID() },
        text,
      )
      expect(unknown.status).toBe('NOT_FOUND')
      const target = await emptyTarget()
      const cut = await importSpaceStream(
        fixture(),
        fixture().alice,
        transport,
        { spaceId: target },
        textOf(lines.slice(0, 2)),
      )
      const importId = /import ([0-9a-f-]{36})/.exec(cut.message)![1]
      const other = clone(lines)
      other[0]!.exportedAt += 1
      const resumed = await importSpaceStream(fixture(), fixture().alice, transport, { importId }, textOf(other))
      expect(resumed.status).toBe('FAILED_PRECONDITION')
      expect(resumed.message).toContain('line 1: ')
      expect(resumed.message).toContain('same export')
      expect((await getImport(fixture(), fixture().alice, transport, importId!)).body.linesApplied).toBe(2)
    })

    it('refuses an export or an import progress of no such resource, or of a malformed id', async () => {
      const missing = await exportSpaceText(fixture(), fixture().alice, transport, crypto.randomUUID())
      expect(missing.status).toBe('NOT_FOUND')
      const malformed = await exportSpaceText(fixture(), fixture().alice, transport, 'nope')
      expect(malformed.status).toBe('INVALID_ARGUMENT')
      expect((await getImport(fixture(), fixture().alice, transport, crypto.randomUUID())).status).toBe('NOT_FOUND')
      expect((await getImport(fixture(), fixture().alice, transport, 'nope')).status).toBe('INVALID_ARGUMENT')
    })
  })

  it('REST: refuses a body of another media type (415) and an unknown export parameter', async () => {
    const answer = await importSpaceStream(fixture(), fixture().alice, 'rest', { spaceId }, text, {
      contentType: 'multipart/form-data; boundary=x',
    })
    expect(answer.status).toBe('UNSUPPORTED_MEDIA_TYPE')
    const response = await fetch(`${fixture().server.restUrl}/v1/spaces/${spaceId}:export?omitVectors=maybe`, {
      headers: { authorization: `Bearer ${fixture().alice.apiKey}` },
    })
    expect(response.status).toBe(400)
    expect((await response.json()).error.details[0].field).toBe('omitVectors')
  })

  it('gRPC: refuses an import whose first message is not its header', async () => {
    const client = fixture().client.client('spaces') as unknown as SpaceServiceClient
    const metadata = new grpc.Metadata()
    metadata.set('authorization', `Bearer ${fixture().alice.apiKey}`)
    const error = await new Promise<grpc.ServiceError | null>((resolve) => {
      const call = client.importSpace(metadata, (failure) => resolve(failure))
      call.write({ part: { $case: 'data', value: Buffer.from(text) } })
      call.end()
    })
    expect(error?.details).toContain('the first message of an import is its header')
  })
})
