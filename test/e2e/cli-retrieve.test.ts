// `memsvc memory retrieve` end to end: the built executable serving a PostgreSQL database,
// a local embedding server and a local rerank and chat server. Two spaces, a filter, a
// reranker and an LLM answer; an LLM that fails after the items went out; bad input.
// The reranker is registered through the domain by an in-process server on the same
// database (the reranker routes are not part of this round), sharing its encryption key.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReranker } from '../../src/domain/rerankers.js'
import { ndjsonEvents } from '../support/api-client.js'
import {
  CliUser,
  cleanUp,
  createFakeEmbedderWithCli,
  EXIT,
  expectError,
  type RunningServer,
  startServer,
} from '../support/cli.js'
import { createTestDatabase, type TestDatabase } from '../support/databases.js'
import { createSandbox, type Sandbox } from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { expectedAnswer, type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { CORPUS } from '../support/retrieval-corpus.js'
import { unreachableUrl } from '../support/retrieval-fixture.js'
import { startTestServer, TEST_ENCRYPTION_KEY_FILE, type TestServer } from '../support/test-server.js'

const TEST_TIMEOUT_MS = 90_000

let sandbox: Sandbox
let database: TestDatabase
let server: RunningServer
let registrar: TestServer
let embedder: FakeEmbedder
let chat: FakeRerankerLlm
let user: CliUser

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  embedder = await startFakeEmbedder({ dimensions: 32 })
  chat = await startFakeRerankerLlm()
  database = await createTestDatabase()
  // Migrates the database and writes the shared encryption key file.
  registrar = await startTestServer({ engine: 'postgresql', database })
  server = await startServer(sandbox, {
    tls: false,
    dataDir: sandbox.makeDir('data'),
    env: { DB_URL: database.jdbcUrl, SERVICE_ENCRYPTION_KEY_FILE: TEST_ENCRYPTION_KEY_FILE },
  })
  await user.ok(['init', '--server', server.address])
}, 150_000)

afterAll(async () => {
  await embedder?.close()
  await chat?.close()
  await cleanUp([server], sandbox)
  await registrar?.stop()
  await database?.drop()
}, 30_000)

/** What a person would see: each command line, then its stdout, its stderr and a non-zero exit code. */
const transcript: string[] = []
async function shown(args: string[], expectedCode: number = EXIT.OK) {
  const result = await user.run(args)
  expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: expectedCode })
  // Shell quoting for reading: double quotes around text holding single quotes (no $ expansion happens before a dot).
  const quoted = args.map((arg) =>
    /['"]/.test(arg) || /\s/.test(arg) ? (arg.includes("'") ? `"${arg}"` : `'${arg}'`) : arg,
  )
  transcript.push(
    `$ memsvc ${quoted.join(' ')}`,
    ...[result.stdout.trimEnd(), result.stderr.trimEnd()].filter(Boolean),
    ...(result.code ? [`(exit ${result.code})`] : []),
  )
  return result
}

async function loadSpace(
  name: string,
  embedderId: string,
  entries: ReadonlyArray<{ key: string; text: string; metadata: object }>,
): Promise<{ spaceId: string; ids: Map<string, string> }> {
  const spaceId = (await user.ok(['space', 'create', '--name', name, '--embedder', embedderId, '-o', 'json'])).json<{
    spaceId: string
  }>().spaceId
  const ids = new Map<string, string>()
  for (const entry of entries) {
    const memory = (
      await user.ok([
        'memory',
        'create',
        '--space',
        spaceId,
        entry.text,
        '--metadata',
        JSON.stringify(entry.metadata),
        '--wait',
        '-o',
        'json',
      ])
    ).json<{ memoryId: string }>()
    ids.set(memory.memoryId, entry.key)
  }
  return { spaceId, ids }
}

describe('memsvc memory retrieve', { timeout: TEST_TIMEOUT_MS }, () => {
  let travel: { spaceId: string; ids: Map<string, string> }
  let science: { spaceId: string; ids: Map<string, string> }
  let rerankerId: string
  let llmId: string
  let deadLlmId: string
  let embedderId: string

  it('set-up: an embedder, two spaces of the corpus, an LLM (CLI) and a reranker (domain)', async () => {
    embedderId = await createFakeEmbedderWithCli((args) => user.ok(args), embedder)
    travel = await loadSpace(
      'travel',
      embedderId,
      CORPUS.filter((entry) => ['eiffel', 'wall', 'rust'].includes(entry.key)),
    )
    science = await loadSpace(
      'science',
      embedderId,
      CORPUS.filter((entry) => ['photosynthesis', 'mitochondria', 'postgres'].includes(entry.key)),
    )
    const llm = [
      'llm',
      'create',
      '--display-name',
      'local chat',
      '--provider-type',
      'VLLM',
      '--model-identifier',
      'fake-chat',
      '--no-credentials',
      '-o',
      'json',
    ]
    llmId = (await user.ok([...llm, '--endpoint-url', chat.url])).json<{ llmId: string }>().llmId
    deadLlmId = (await user.ok([...llm, '--endpoint-url', await unreachableUrl()])).json<{ llmId: string }>().llmId
    const rootKey = user.readConfig().apiKey!
    const reranker = await createReranker(
      registrar.server.context,
      { requestId: 'cli-retrieve-test', transport: 'rest', authorization: `Bearer ${rootKey}` },
      { displayName: 'local rerank', providerType: 'TEI', endpointUrl: chat.url, modelIdentifier: 'fake-rerank' },
    )
    rerankerId = reranker.rerankerId
  })

  it('two spaces, a filter, a reranker and an LLM answer: rows as they arrive, then the answer', async () => {
    const result = await shown([
      'memory',
      'retrieve',
      'Which tower stands in Paris?',
      '--space',
      travel.spaceId,
      '--space',
      science.spaceId,
      '--filter',
      "val('$.topic') IN ('travel', 'biology')",
      '--reranker',
      rerankerId,
      '--llm',
      llmId,
      '--size',
      '3',
    ])
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^RANK\s+SCORE\s+MEMORY\s+CHUNK$/)
    const rows = lines.slice(1, lines.indexOf(''))
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.length).toBeLessThanOrEqual(3)
    const [first] = rows
    const [, , memoryId] = first!.split(/\s+/)
    expect(travel.ids.get(memoryId!)).toBe('eiffel')
    const eiffel = CORPUS.find((entry) => entry.key === 'eiffel')!.text
    expect(lines.slice(-2)).toEqual(['answer:', expectedAnswer(`[1] ${eiffel}`)])
    for (const row of rows) {
      const id = row.split(/\s+/)[2]!
      const key = travel.ids.get(id) ?? science.ids.get(id)
      expect(['eiffel', 'wall', 'photosynthesis', 'mitochondria']).toContain(key)
    }
  })

  it('-o json prints the events as NDJSON, in stream order', async () => {
    const result = await shown([
      'memory',
      'retrieve',
      'memory safety without a garbage collector',
      '--space',
      travel.spaceId,
      '--mode',
      'keyword',
      '--size',
      '1',
      '-o',
      'json',
    ])
    const events = ndjsonEvents(result.stdout) as any[]
    expect(events.map((event) => Object.keys(event)[0])).toEqual([
      'resultSetBoundary',
      'memoryDefinition',
      'retrievedItem',
      'resultSetBoundary',
    ])
    expect(events[2].retrievedItem.chunk).toMatchObject({
      memoryIndex: 0,
      chunkText: CORPUS.find((entry) => entry.key === 'rust')!.text,
    })
    expect(events[1].memoryDefinition.memory).toMatchObject({
      spaceId: travel.spaceId,
      processingStatus: 'COMPLETED',
      chunkingConfig: { recursive: expect.any(Object) },
    })
  })

  it('--space before the message: one space per --space, and the message still reaches the server', async () => {
    const result = await shown([
      'memory',
      'retrieve',
      '--space',
      travel.spaceId,
      '--space',
      science.spaceId,
      'How do plant leaves turn sunlight into glucose?',
      '--mode',
      'keyword',
      '--size',
      '1',
      '-o',
      'json',
    ])
    const events = ndjsonEvents(result.stdout) as any[]
    const item = events.find((event) => event.retrievedItem)?.retrievedItem
    expect(science.ids.get(item?.chunk.memoryId)).toBe('photosynthesis')
  })

  it('an LLM that fails after the items went out: the rows, then one error line and exit 1', async () => {
    const result = await shown(
      [
        'memory',
        'retrieve',
        'Which tower stands in Paris?',
        '--space',
        travel.spaceId,
        '--llm',
        deadLlmId,
        '--size',
        '2',
      ],
      EXIT.FAILED,
    )
    expect(result.stdout).toMatch(/^RANK\s+SCORE\s+MEMORY\s+CHUNK\n1 /)
    expect(result.stderr).toMatch(
      /^error: the answer is incomplete: UNAVAILABLE: the LLM did not answer: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/,
    )
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('--recency-half-life puts the newer of two equal memories first, --score-parts shows why; --include-expired', async () => {
    const twin = { key: 'twin', text: 'Orchard diary: the apple harvest started on the south slope.', metadata: {} }
    const orchard = await loadSpace('orchard', embedderId, [twin, twin])
    const retrieve = ['memory', 'retrieve', 'apple harvest', '--space', orchard.spaceId, '--mode', 'vector']
    const plain = ndjsonEvents((await user.ok([...retrieve, '-o', 'json'])).stdout) as any[]
    // The tie goes to the lower chunk id: that memory is made 30 days older, so recency must turn the order round.
    const older = plain.find((event) => event.retrievedItem).retrievedItem.chunk.memoryId as string
    const newer = [...orchard.ids.keys()].find((id) => id !== older)!
    await registrar.server.context.sql`
      update memories set updated_at = now() - interval '30 days' where id = ${older}`
    const recent = await shown([...retrieve, '--recency-half-life', '7d', '--recency-weight', '0.5', '--score-parts'])
    const lines = recent.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^RANK\s+SCORE\s+RELEVANCE\s+RECENCY\s+AGE\s+MEMORY\s+CHUNK$/)
    const rows = lines.slice(1).map((line) => line.split(/\s+/))
    expect(rows.map((row) => row[5])).toEqual([newer, older])
    expect(rows[1]![4]).toBe('30d')
    expect(Number(rows[1]![3])).toBeCloseTo(0.5 ** (30 / 7), 2)
    // SCORE = 0.5 × RELEVANCE + 0.5 × RECENCY, each printed to three places.
    expect(Number(rows[1]![1])).toBeCloseTo(0.5 * Number(rows[1]![2]) + 0.5 * Number(rows[1]![3]), 2)
    await registrar.server.context.sql`update memories set valid_until = now() - interval '1 day' where id = ${newer}`
    const current = ndjsonEvents((await user.ok([...retrieve, '-o', 'json'])).stdout) as any[]
    expect(current.flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk.memoryId] : []))).toEqual([
      older,
    ])
    const all = ndjsonEvents((await user.ok([...retrieve, '--include-expired', '-o', 'json'])).stdout) as any[]
    expect(all.filter((event) => event.retrievedItem)).toHaveLength(2)
    expectError(
      await user.run([...retrieve, '--recency-half-life', 'soon']),
      EXIT.BAD_INPUT,
      /--recency-half-life "soon"/,
    )
    expectError(
      await user.run([...retrieve, '--recency-half-life', '0']),
      EXIT.FAILED,
      /INVALID_ARGUMENT: .*\(field recency\.halfLifeSeconds\)/,
    )
    expectError(
      await user.run([...retrieve, '--recency-half-life', '1h', '--recency-weight', '2']),
      EXIT.FAILED,
      /INVALID_ARGUMENT: .*\(field recency\.weight\)/,
    )
  })

  it('bad input is refused before the stream, naming the flag or field', async () => {
    expectError(await user.run(['memory', 'retrieve', 'x']), EXIT.BAD_INPUT, /--space is required/)
    expectError(
      await user.run(['memory', 'retrieve', 'x', '--space', travel.spaceId, '--size', '0']),
      EXIT.BAD_INPUT,
      /--size/,
    )
    expectError(
      await user.run(['memory', 'retrieve', 'x', '--space', travel.spaceId, '--mode', 'fuzzy']),
      EXIT.BAD_INPUT,
      /--mode/,
    )
    const badFilter = await shown(
      ['memory', 'retrieve', 'x', '--space', travel.spaceId, '--filter', "val('$.a') = 'x' AND"],
      EXIT.FAILED,
    )
    expectError(badFilter, EXIT.FAILED, /INVALID_ARGUMENT: .*position 21.*\(field spaceKeys\.0\.filter\)/)
    expectError(
      await user.run(['memory', 'retrieve', 'x', '--space', '00000000-0000-4000-8000-000000000000']),
      EXIT.FAILED,
      /NOT_FOUND: space 00000000-0000-4000-8000-000000000000 not found/,
    )
    // The transcript for the report: MEMSVC_TRANSCRIPT=path writes it.
    if (process.env.MEMSVC_TRANSCRIPT) fs.writeFileSync(process.env.MEMSVC_TRANSCRIPT, `${transcript.join('\n')}\n`)
  })
})
