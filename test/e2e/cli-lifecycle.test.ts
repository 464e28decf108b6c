// What happens to memories after they are stored, through the built executable against an
// embedded server and a local embedding server: update with a version conflict, get of several
// ids, history, delete by filter (counted first, then confirmed), and a space exported, imported
// into a new space with the same counts, and an import resumed after its stream was cut twice
// (a file cut short, then a connection reset mid-stream). The tests run in order, like a session.
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
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

const TEST_TIMEOUT_MS = 120_000
/** An import that resumes waits between attempts: more time than one command usually needs. */
const RESUMING_IMPORT_TIMEOUT_MS = 90_000
const MISSING_ID = '7f4f1c2e-3b7a-4d47-9a55-2f1f0f5b9c11'
const BATCH_FILES = 24
/** Text in one memory of the exported space: the proxy resets the import's connection when it passes. */
const CUT_MARKER = 'quokka-cut-marker-5521'
const DRAFTS_FILTER = "val('$.topic') = 'drafts'"

let sandbox: Sandbox
let server: RunningServer
let embedder: FakeEmbedder
let proxy: TcpProxy
let user: CliUser

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  embedder = await startFakeEmbedder()
  server = await startServer(sandbox, { tls: false, dataDir: sandbox.makeDir('data') })
  proxy = await startTcpProxy('127.0.0.1', server.grpcPort)
  await user.ok(['init', '--server', server.address])
}, 150_000)

afterAll(async () => {
  await proxy?.close()
  await embedder?.close()
  await cleanUp([server], sandbox)
}, 30_000)

/** What a person would see: each command line, then its stdout and stderr. */
const transcript: string[] = []
function record(args: string[], result: { stdout: string; stderr: string }) {
  transcript.push(
    `$ memsvc ${args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ')}`,
    ...(result.stdout.trim() ? [result.stdout.trimEnd()] : []),
    ...(result.stderr.trim() ? [result.stderr.trimEnd()] : []),
  )
}
async function shown(args: string[]) {
  const result = await user.ok(args)
  record(args, result)
  return result
}
async function shownFailing(args: string[], timeoutMs?: number, env: NodeJS.ProcessEnv = {}) {
  const result = await user.run(args, env, timeoutMs)
  record(args, result)
  return result
}

const memoriesOf = async (spaceId: string) =>
  (await user.ok(['memory', 'list', '--space', spaceId, '--all', '-o', 'json'])).json<{ memories: any[] }>().memories

describe('memsvc memory update|get|history|delete and space export|import', { timeout: TEST_TIMEOUT_MS }, () => {
  let embedderId: string
  let spaceId: string
  let memoryId: string
  let exportFile: string

  it('a space with an embedder and memories: a batch of files, one memory with metadata, one with the marker', async () => {
    embedderId = await createFakeEmbedderWithCli((args) => user.ok(args), embedder)
    spaceId = (await user.ok(['space', 'create', '--name', 'lifecycle', '--embedder', embedderId, '-o', 'json'])).json<{
      spaceId: string
    }>().spaceId
    const dir = sandbox.makeDir('notes')
    for (let index = 0; index < BATCH_FILES; index++)
      fs.writeFileSync(path.join(dir, `note-${index}.txt`), `Note ${index}: the meeting ${index} is on day ${index}.`)
    fs.writeFileSync(path.join(dir, 'marker.txt'), `The ${CUT_MARKER} is in the middle of the export.`)
    await user.ok(['memory', 'create-batch', '--space', spaceId, 'notes', '--wait'])
    const memory = (
      await shown([
        'memory',
        'create',
        '--space',
        spaceId,
        'The office opens at nine.',
        '--metadata',
        '{"topic":"office","draft":true}',
        '--wait',
        '-o',
        'json',
      ])
    ).json<any>()
    memoryId = memory.memoryId
    expect(memory).toMatchObject({ processingStatus: 'COMPLETED', version: 1 })
  })

  it('update: metadata at once, a stale --expected-version is a version conflict that changes nothing', async () => {
    const shownMemory = await shown(['memory', 'get', memoryId])
    expect(shownMemory.stdout).toMatch(/^version\s+1$/m)
    const merged = await shown([
      'memory',
      'update',
      memoryId,
      '--merge-metadata',
      '{"reviewed":"yes","draft":null}',
      '--expected-version',
      '1',
    ])
    expect(merged.stdout).toMatch(/^version\s+2$/m)
    expect(merged.stdout).toMatch(/^metadata\s+\{"topic":"office","reviewed":"yes"\}$/m)

    const stale = await shownFailing([
      'memory',
      'update',
      memoryId,
      '--merge-metadata',
      '{"reviewed":"no"}',
      '--expected-version',
      '1',
    ])
    expectError(
      stale,
      EXIT.FAILED,
      new RegExp(
        `^error: version conflict: memory ${memoryId} is at version 2, not 1; nothing was changed\\. ` +
          `See what changed with "memsvc memory history ${memoryId}", then run the update again with --expected-version 2$`,
      ),
    )
    expect((await user.ok(['memory', 'get', memoryId, '-o', 'json'])).json()).toMatchObject({
      version: 2,
      metadata: { topic: 'office', reviewed: 'yes' },
    })

    fs.writeFileSync(path.join(sandbox.dir, 'hours.md'), '# Hours\n\nThe office opens at eight.')
    const rewritten = (
      await shown([
        'memory',
        'update',
        memoryId,
        '--content-file',
        'hours.md',
        '--valid-until',
        '2031-01-01',
        '--expected-version',
        '2',
        '--wait',
        '-o',
        'json',
      ])
    ).json<any>()
    expect(rewritten).toMatchObject({
      version: 3,
      processingStatus: 'COMPLETED',
      contentType: 'text/markdown',
      validUntil: Date.parse('2031-01-01'),
    })
    expect(rewritten.contentPending).toBeFalsy()
    expect((await user.ok(['memory', 'get', memoryId, '--content'])).stdout).toBe(
      '# Hours\n\nThe office opens at eight.',
    )

    expectError(await user.run(['memory', 'update', memoryId]), EXIT.BAD_INPUT, /nothing to update/)
    expectError(
      await user.run(['memory', 'update', memoryId, '--merge-metadata', '[1]']),
      EXIT.BAD_INPUT,
      /--merge-metadata: must be a JSON object/,
    )
    expectError(
      await user.run(['memory', 'update', memoryId, '--valid-until', 'someday']),
      EXIT.BAD_INPUT,
      /--valid-until "someday"/,
    )
  })

  it('get with several ids: a table, NOT_FOUND for the missing one, exit 1', async () => {
    const others = (await memoriesOf(spaceId)).filter((memory) => memory.memoryId !== memoryId).slice(0, 2)
    const ids = [memoryId, ...others.map((memory) => memory.memoryId), MISSING_ID]
    const table = await shownFailing(['memory', 'get', ...ids])
    expect(table.code).toBe(EXIT.FAILED)
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+VERSION/m)
    expect(table.stdout).toMatch(new RegExp(`^${memoryId}\\s+COMPLETED\\s+3\\b`, 'm'))
    expect(table.stdout).toMatch(new RegExp(`^${MISSING_ID}\\s+NOT_FOUND\\b`, 'm'))
    expect(table.stderr.trim()).toBe(`error: 1 of 4 memories not found: ${MISSING_ID}`)
    const json = (await user.run(['memory', 'get', ...ids, '-o', 'json'])).json<{ results: any[] }>()
    expect(json.results.map((result) => result.memoryId)).toEqual(ids)
    expect(json.results[0].memory).toMatchObject({ memoryId, version: 3 })
    expect(json.results[3].error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
    const found = await shown(['memory', 'get', ...ids.slice(0, 3)])
    expect(found.stdout.match(/COMPLETED/g)).toHaveLength(3)
    expectError(await user.run(['memory', 'get', ...ids, '--content']), EXIT.BAD_INPUT, /--content shows one memory/)
  })

  it('history: every change newest first, with who, the key, the fields and the metadata and content changes', async () => {
    const table = await shown(['memory', 'history', memoryId])
    const rows = table.stdout.trimEnd().split('\n')
    expect(rows[0]).toMatch(/^ACTION\s+VERSION\s+WHEN/)
    expect(rows.slice(1).map((row) => row.split(/\s+/).slice(0, 2).join(' '))).toEqual(['UPDATE 3', 'UPDATE 2'])
    const changes = (await user.ok(['memory', 'history', memoryId, '-o', 'json'])).json<{ changes: any[] }>().changes
    const userId = user.readConfig().userId
    expect(changes[1]).toMatchObject({
      action: 'UPDATE',
      version: 2,
      changedById: userId,
      apiKeyId: expect.any(String),
      fields: ['metadata'],
    })
    expect(changes[1].metadataChanges).toEqual(
      expect.arrayContaining([
        { key: 'reviewed', after: 'yes' },
        { key: 'draft', before: true },
      ]),
    )
    expect(changes[0].fields).toEqual(expect.arrayContaining(['content', 'contentType', 'validUntil']))
    expect(changes[0].contentSha256Before).not.toBe(changes[0].contentSha256After)
    expect(rows[1]).toContain(
      `${changes[0].contentSha256Before.slice(0, 12)} → ${changes[0].contentSha256After.slice(0, 12)}`,
    )
    const page = await user.ok(['memory', 'history', memoryId, '--max-results', '1'])
    expect(page.stderr).toMatch(/^older changes: repeat with --next-token \S+ \(or --all\)$/m)
  })

  it('delete by filter: a dry run with the command to confirm, a count that moved is refused, then the delete', async () => {
    const drafts = (
      await user.ok(['space', 'create', '--name', 'drafts', '--embedder', embedderId, '-o', 'json'])
    ).json<{
      spaceId: string
    }>().spaceId
    const create = (text: string, topic: string) =>
      user.ok(['memory', 'create', '--space', drafts, text, '--metadata', JSON.stringify({ topic }), '-o', 'json'])
    for (const text of ['draft one', 'draft two', 'draft three']) await create(text, 'drafts')
    const kept = (await create('the final text', 'final')).json<{ memoryId: string }>().memoryId

    const dryRun = await shown(['memory', 'delete', '--space', drafts, '--filter', DRAFTS_FILTER])
    const confirm = `memsvc memory delete --space ${drafts} --filter '${DRAFTS_FILTER.replaceAll("'", `'\\''`)}' --expected-count 3`
    expect(dryRun.stdout).toBe(
      `3 memories of space ${drafts} match filter ${DRAFTS_FILTER}. Nothing was deleted (a dry run). To delete them:\n  ${confirm}\n`,
    )
    expect(
      (await user.ok(['memory', 'delete', '--space', drafts, '--filter', DRAFTS_FILTER, '-o', 'json'])).json(),
    ).toEqual({
      dryRun: true,
      matchedCount: 3,
      deletedCount: 0,
      command: confirm,
    })
    expect(await memoriesOf(drafts)).toHaveLength(4)

    await create('draft four, written meanwhile', 'drafts')
    const moved = await shownFailing([
      'memory',
      'delete',
      '--space',
      drafts,
      '--filter',
      DRAFTS_FILTER,
      '--expected-count',
      '3',
    ])
    expectError(
      moved,
      EXIT.FAILED,
      /^error: the count moved: 4 memories match now, not 3; nothing was deleted\. Check what matches, then confirm the new count: memsvc memory delete .* --expected-count 4$/,
    )
    expect(await memoriesOf(drafts)).toHaveLength(5)

    const deleted = await shown([
      'memory',
      'delete',
      '--space',
      drafts,
      '--filter',
      DRAFTS_FILTER,
      '--expected-count',
      '4',
    ])
    expect(deleted.stdout).toBe(`deleted 4 memories of space ${drafts} matching filter ${DRAFTS_FILTER}\n`)
    expect((await memoriesOf(drafts)).map((memory) => memory.memoryId)).toEqual([kept])

    expectError(
      await user.run(['memory', 'delete', '--space', drafts, '--filter', '']),
      EXIT.FAILED,
      /INVALID_ARGUMENT: filter: /,
    )
    expectError(
      await user.run(['memory', 'delete', '--space', drafts]),
      EXIT.BAD_INPUT,
      /--space needs --filter or --status/,
    )
    expectError(await user.run(['memory', 'delete', kept, '--space', drafts]), EXIT.BAD_INPUT, /not both/)
    expectError(
      await user.run(['memory', 'delete', '--filter', DRAFTS_FILTER]),
      EXIT.BAD_INPUT,
      /--filter goes with --space/,
    )
    await shown(['memory', 'delete', kept])
  })

  it('export to a file, then import into a new space: the counts are equal', async () => {
    exportFile = path.join(sandbox.dir, 'lifecycle.ndjson')
    const source = await memoriesOf(spaceId)
    expect(source).toHaveLength(BATCH_FILES + 2)
    const exported = await shown(['space', 'export', spaceId, '--file', 'lifecycle.ndjson'])
    expect(exported.stdout).toMatch(
      new RegExp(
        `^exported ${source.length} memories \\(\\d+ chunks?, [\\d.]+ [KM]B\\) of space ${spaceId} to lifecycle\\.ndjson\\n$`,
      ),
    )
    expect(exported.stderr).toMatch(/^exporting: /m)
    const lines = fs.readFileSync(exportFile, 'utf8').trimEnd().split('\n')
    expect(lines).toHaveLength(source.length + 2)
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: 'end', memoryCount: source.length })
    expect(fs.readdirSync(sandbox.dir).filter((name) => name.endsWith('.part'))).toEqual([])

    const imported = await shown(['space', 'import', 'lifecycle.ndjson', '--name', 'lifecycle copy', '-o', 'json'])
    const result = imported.json<any>()
    expect(result).toMatchObject({
      state: 'COMPLETED',
      memoriesExpected: source.length,
      memoriesImported: source.length,
      memoriesSkipped: 0,
      memoriesReembedding: 0,
      resumed: 0,
    })
    expect(result.vectorsImported).toBe(result.chunksImported)
    expect(imported.stderr).toMatch(/^importing: /m)
    const copy = await memoriesOf(result.spaceId)
    expect(copy).toHaveLength(source.length)
    expect(copy.map((memory) => memory.originalContentSha256).sort()).toEqual(
      source.map((memory) => memory.originalContentSha256).sort(),
    )
    const summary = await shown(['space', 'import', 'lifecycle.ndjson', '--space', result.spaceId])
    expect(summary.stdout).toMatch(/^state\s+COMPLETED$/m)
    expect(summary.stdout).toMatch(new RegExp(`^skipped\\s+${source.length} `, 'm'))

    expectError(await user.run(['space', 'export', MISSING_ID, '--file', 'missing.ndjson']), EXIT.FAILED, /NOT_FOUND/)
    expect(fs.readdirSync(sandbox.dir).filter((name) => name.startsWith('missing') || name.endsWith('.part'))).toEqual(
      [],
    )
    expectError(await user.run(['space', 'import', 'lifecycle.ndjson']), EXIT.BAD_INPUT, /--space ID .* or --name NAME/)
    expectError(await user.run(['space', 'import', 'nothing.ndjson', '--name', 'x']), EXIT.BAD_INPUT, /no such file/)
  })

  it('an import cut short is resumed with --resume; a connection reset mid-stream is resumed by itself', async () => {
    const lines = fs.readFileSync(exportFile, 'utf8').split('\n')
    const half = lines.slice(0, Math.floor(lines.length / 2)).join('\n')
    fs.writeFileSync(path.join(sandbox.dir, 'half.ndjson'), `${half}\n`)
    const cut = await shownFailing(['space', 'import', 'half.ndjson', '--name', 'resumed copy'])
    // Progress lines, then the error as the last line.
    expect({ code: cut.code, stdout: cut.stdout }).toEqual({ code: EXIT.FAILED, stdout: '' })
    const lastLine = cut.stderr.trimEnd().split('\n').at(-1)!
    expect(lastLine).toMatch(
      /^error: INVALID_ARGUMENT: .*without its end line .* Resume: memsvc space import half\.ndjson --resume [0-9a-f-]{36}$/,
    )
    const importId = /--resume ([0-9a-f-]{36})$/.exec(lastLine)![1]!

    // The whole file through a proxy that resets the connection when the marker's memory goes by.
    proxy.resetOnceWhenClientSends(CUT_MARKER)
    const { apiKey } = user.readConfig()
    const resumed = await shownFailing(
      [
        'space',
        'import',
        'lifecycle.ndjson',
        '--resume',
        importId,
        '--server',
        `http://127.0.0.1:${proxy.port}`,
        '-o',
        'json',
      ],
      RESUMING_IMPORT_TIMEOUT_MS,
      { SERVICE_API_KEY: apiKey },
    )
    expect(resumed.code, resumed.stderr).toBe(EXIT.OK)
    expect(resumed.stderr).toMatch(new RegExp(`^resuming import ${importId}$`, 'm'))
    expect(resumed.stderr).toMatch(new RegExp(`; resuming import ${importId} in 1 s \\(resume 1 of 5\\)$`, 'm'))
    const result = resumed.json<any>()
    const sourceCount = lines.length - 3
    expect(result).toMatchObject({ importId, state: 'COMPLETED', memoriesImported: sourceCount })
    expect(result.resumed).toBeGreaterThanOrEqual(1)
    expect(await memoriesOf(result.spaceId)).toHaveLength(sourceCount)
    if (process.env.MEMSVC_LIFECYCLE_TRANSCRIPT)
      fs.writeFileSync(process.env.MEMSVC_LIFECYCLE_TRANSCRIPT, `${transcript.join('\n')}\n`)
  })
})
