// `memsvc space …` and `memsvc memory …` end to end, with the built executable against an
// embedded server and a local embedding server: an embedder pointing at it, a space, a
// directory of files stored as a batch and waited for until every memory is COMPLETED.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CliUser,
  cleanUp,
  createFakeEmbedderWithCli,
  EXIT,
  expectError,
  type RunningServer,
  startServer,
} from '../support/cli.js'
import { createSandbox, type Sandbox } from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'

const TEST_TIMEOUT_MS = 90_000
const FILES: Record<string, string> = {
  'paris.md': '# Paris\n\nParis is the capital of France. It lies on the Seine.',
  'tokyo.txt': 'Tokyo is the capital of Japan and its largest city.',
  'nested/facts.json': '{"city": "Nairobi", "country": "Kenya"}',
}

let sandbox: Sandbox
let server: RunningServer
let embedder: FakeEmbedder
let user: CliUser

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  embedder = await startFakeEmbedder()
  server = await startServer(sandbox, { tls: false, dataDir: sandbox.makeDir('data') })
  await user.ok(['init', '--server', server.address])
}, 150_000)

afterAll(async () => {
  await embedder?.close()
  await cleanUp([server], sandbox)
}, 30_000)

/** What a person would see: each command line, then its stdout and stderr. */
const transcript: string[] = []
async function shown(args: string[]) {
  const result = await user.ok(args)
  transcript.push(
    `$ memsvc ${args.join(' ')}`,
    result.stdout.trimEnd(),
    ...(result.stderr.trim() ? [result.stderr.trimEnd()] : []),
  )
  return result
}

describe('memsvc space and memory', { timeout: TEST_TIMEOUT_MS }, () => {
  let embedderId: string
  let spaceId: string

  it('an embedder pointing at the local embedding server, and a space using it', async () => {
    embedderId = await createFakeEmbedderWithCli(shown, embedder)
    const space = (
      await shown([
        'space',
        'create',
        '--name',
        'docs',
        '--embedder',
        embedderId,
        '--chunk-size',
        '40',
        '--label',
        'team=cli',
        '-o',
        'json',
      ])
    ).json<any>()
    spaceId = space.spaceId
    expect(space).toMatchObject({
      name: 'docs',
      labels: { team: 'cli' },
      spaceEmbedders: [{ embedderId, indexState: 'READY' }],
    })
    expect(space.defaultChunkingConfig).toEqual({
      recursive: expect.objectContaining({ chunkSize: 40, chunkOverlap: 5, keepStrategy: 'KEEP_END' }),
    })
    const listed = await shown(['space', 'list'])
    expect(listed.stdout).toMatch(new RegExp(`${spaceId}\\s+docs\\s+1\\s+no`))
  })

  it('create-batch of a directory with --recursive --wait shows progress and ends with every memory COMPLETED', async () => {
    const dir = sandbox.makeDir('notes')
    for (const [name, text] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
      fs.writeFileSync(path.join(dir, name), text)
    }
    const batch = await shown(['memory', 'create-batch', '--space', spaceId, 'notes', '--recursive', '--wait'])
    // Not a terminal: a line per stage of each file, ending with "done (N chunks)".
    expect(batch.stderr).toMatch(/^notes\/paris\.md: uploading /m)
    expect(batch.stderr.match(/^notes\/\S+: done \(\d+ chunks?\)$/gm)).toHaveLength(3)
    expect(batch.stdout.match(/COMPLETED/g)).toHaveLength(3)
    const listed = (await user.ok(['memory', 'list', '--space', spaceId, '-o', 'json'])).json<{ memories: any[] }>()
    expect(listed.memories).toHaveLength(3)
    for (const memory of listed.memories)
      expect(memory).toMatchObject({ processingStatus: 'COMPLETED', chunkCount: expect.any(Number) })
    expect(listed.memories.map((memory) => memory.metadata.file).sort()).toEqual([
      'notes/nested/facts.json',
      'notes/paris.md',
      'notes/tokyo.txt',
    ])
    expect(listed.memories.find((memory) => memory.metadata.file === 'notes/paris.md').contentType).toBe(
      'text/markdown',
    )
    await shown(['memory', 'list', '--space', spaceId])
  })

  it('create from an argument and from a file, get with --content, delete', async () => {
    const memory = (
      await shown([
        'memory',
        'create',
        '--space',
        spaceId,
        'Lima is the capital of Peru.',
        '--metadata',
        '{"source":"cli"}',
        '--wait',
        '-o',
        'json',
      ])
    ).json<any>()
    expect(memory).toMatchObject({ processingStatus: 'COMPLETED', metadata: { source: 'cli' } })
    const fromFile = (
      await user.ok(['memory', 'create', '--space', spaceId, '--file', 'notes/paris.md', '--dedupe', '-o', 'json'])
    ).json<any>()
    // The same content is already stored (by the batch): dedupe answers with that memory.
    expect(fromFile.metadata).toEqual({ file: 'notes/paris.md' })
    const piped = await user.run(
      ['memory', 'create', '--space', spaceId, '--wait', '-o', 'json'],
      {},
      undefined,
      'Quito is the capital of Ecuador.\n',
    )
    expect(piped.code, piped.stderr).toBe(EXIT.OK)
    const fromStdin = piped.json<any>()
    expect(fromStdin.processingStatus).toBe('COMPLETED')
    expect((await user.ok(['memory', 'get', fromStdin.memoryId, '--content'])).stdout).toBe(
      'Quito is the capital of Ecuador.\n',
    )
    const content = await shown(['memory', 'get', memory.memoryId, '--content'])
    expect(content.stdout).toBe('Lima is the capital of Peru.')
    await shown(['memory', 'delete', memory.memoryId])
    expectError(await user.run(['memory', 'get', memory.memoryId]), EXIT.FAILED, /not found/i)
  })

  it('bad input is refused before or by the server, naming the flag or field', async () => {
    expectError(
      await user.run(['memory', 'create', '--space', spaceId, 'text', '--metadata', '[1]']),
      EXIT.BAD_INPUT,
      /--metadata/,
    )
    expectError(
      await user.run(['memory', 'create', '--space', spaceId, '   ']),
      EXIT.FAILED,
      /INVALID_ARGUMENT: originalContent: must not be empty/,
    )
    expectError(
      await user.run(['space', 'create', '--name', 'klingon', '--language', 'klingon']),
      EXIT.FAILED,
      /INVALID_ARGUMENT: textSearchLanguage: this database has no text search configuration "klingon"/,
    )
  })

  it('a space created with no flags is keyword-only: its memories are found by keywords, HYBRID says so, VECTOR is refused', async () => {
    const space = (await shown(['space', 'create', '--name', 'notes', '-o', 'json'])).json<any>()
    expect(space).toMatchObject({ spaceEmbedders: [], textSearchLanguage: 'english' })
    expect((await shown(['space', 'get', space.spaceId])).stdout).toMatch(/keyword language\s+english/)
    const memory = (
      await shown([
        'memory',
        'create',
        '--space',
        space.spaceId,
        'The boiler is serviced every October.',
        '--wait',
        '-o',
        'json',
      ])
    ).json<any>()
    expect(memory).toMatchObject({ processingStatus: 'COMPLETED', chunkCount: 1 })
    const found = await shown(['memory', 'retrieve', 'when is the boiler serviced?', '--space', space.spaceId])
    expect(found.stdout).toContain(memory.memoryId)
    expect(found.stderr).toContain(`note: no vector search ran for space ${space.spaceId}: it has no embedders`)
    expectError(
      await user.run(['memory', 'retrieve', 'boiler', '--space', space.spaceId, '--mode', 'VECTOR']),
      EXIT.FAILED,
      /INVALID_ARGUMENT: spaceKeys\.0\.spaceId: .*has no embedders/,
    )
    await shown(['space', 'delete', space.spaceId])
  })

  it('space update and delete', async () => {
    const updated = (
      await shown(['space', 'update', spaceId, '--public-read', '--merge-label', 'tier=gold', '-o', 'json'])
    ).json<any>()
    expect(updated).toMatchObject({ publicRead: true, labels: { team: 'cli', tier: 'gold' } })
    await shown(['space', 'delete', spaceId])
    expectError(await user.run(['space', 'get', spaceId]), EXIT.FAILED, /not found/i)
    // The transcript for the report: MEMSVC_TRANSCRIPT=path writes it.
    if (process.env.MEMSVC_TRANSCRIPT) fs.writeFileSync(process.env.MEMSVC_TRANSCRIPT, `${transcript.join('\n')}\n`)
  })
})
