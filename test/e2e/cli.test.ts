// The command-line client end to end, as a new user sees it: the built executable, a
// fresh HOME, a real `memsvc serve` (plaintext here; TLS and pinning in
// cli-tls.test.ts). The tests in this file run in order and share one server and
// one user, like a session: init first, drain last.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CliUser,
  cleanUp,
  EXIT,
  expectError,
  freePort,
  RAW_KEY_PATTERN,
  type RunningServer,
  startServer,
} from '../support/cli.js'
import { createSandbox, type Sandbox } from '../support/executable.js'

const TEST_TIMEOUT_MS = 60_000
const DAY_MS = 86_400_000

interface ApiKey {
  apiKeyId: string
  userId: string
  keyPrefix: string
  status: string
  labels: Record<string, string>
  expiresAt?: number
}

let sandbox: Sandbox
let server: RunningServer
let user: CliUser
let rootKey: string
let rootUserId: string

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  server = await startServer(sandbox, { tls: false, dataDir: sandbox.makeDir('data') })
}, 90_000)

afterAll(() => cleanUp([server], sandbox), 30_000)

/** Every command and subcommand, for the --help checks. */
const COMMANDS = [
  ['init'],
  ['apikey', 'create'],
  ['apikey', 'list'],
  ['apikey', 'update'],
  ['apikey', 'delete'],
  ['user', 'create'],
  ['user', 'list'],
  ['user', 'get'],
  ['user', 'delete'],
  ['user', 'me'],
  ['system', 'info'],
  ['system', 'health'],
  ['system', 'drain'],
  ['embedder', 'create'],
  ['embedder', 'list'],
  ['embedder', 'get'],
  ['embedder', 'update'],
  ['embedder', 'delete'],
  ['embedder', 'probe'],
  ['llm', 'create'],
  ['llm', 'list'],
  ['llm', 'get'],
  ['llm', 'update'],
  ['llm', 'delete'],
  ['llm', 'probe'],
  ['reranker', 'create'],
  ['reranker', 'list'],
  ['reranker', 'get'],
  ['reranker', 'update'],
  ['reranker', 'delete'],
  ['reranker', 'probe'],
  ['upgrade'],
  ['version'],
]

describe('memsvc client, plaintext server', { timeout: TEST_TIMEOUT_MS }, () => {
  it('has --help with examples and the exit codes on every command', async () => {
    const top = await user.ok(['--help'])
    for (const word of [
      'init',
      'apikey',
      'embedder',
      'llm',
      'reranker',
      'user',
      'system',
      'upgrade',
      'version',
      'serve',
      'Exit codes:',
      'SERVICE_API_KEY',
    ])
      expect(top.stdout).toContain(word)
    for (const command of COMMANDS) {
      const help = await user.ok([...command, '--help'])
      expect(help.stdout, command.join(' ')).toContain('Examples:')
      expect(help.stdout, command.join(' ')).toContain('Exit codes:')
      expect(help.stdout, command.join(' ')).toContain('--output')
    }
    const llmCreate = await user.ok(['llm', 'create', '--help'])
    for (const flag of [
      '--no-chat',
      '--no-streaming',
      '--no-function-calling',
      '--temperature',
      '--stop-sequence',
      '--adc-scope',
      '--adc-quota-project',
      '--no-credentials',
      '--api-key-secret',
      '--credential-header',
      '--credential-prefix',
      '--modality',
    ]) {
      expect(llmCreate.stdout).toContain(flag)
    }
  })

  it('prints its version', async () => {
    expect((await user.ok(['version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    expect((await user.ok(['version', '--output', 'json'])).json()).toEqual({
      version: expect.any(String),
      runtime: { node: expect.any(String), openssl: expect.any(String), uws: expect.any(String) },
    })
  })

  it('before init: info works without a key, other commands say where a key comes from (exit 2)', async () => {
    const info = (await user.ok(['system', 'info', '--server', server.address, '-o', 'json'])).json()
    expect(info).toMatchObject({ initialized: false, lifecycleState: 'READY', storage: 'embedded', tlsEnabled: false })
    expectError(
      await user.run(['apikey', 'list', '--server', server.address]),
      EXIT.BAD_INPUT,
      /no API key for http:\/\/127\.0\.0\.1:\d+: pass --api-key, set SERVICE_API_KEY, or run "memsvc init"/,
    )
  })

  it('init saves the root key, user id and server in a 0600 config file', async () => {
    const result = await user.ok(['init', '--server', server.address, '--output', 'json'])
    const body = result.json<{
      rootApiKey: string
      userId: string
      server: string
      alreadyInitialized: boolean
      configFile: string
    }>()
    expect(body).toMatchObject({ alreadyInitialized: false, server: server.address, configFile: user.configFile })
    expect(body.rootApiKey).toMatch(RAW_KEY_PATTERN)
    rootKey = body.rootApiKey
    rootUserId = body.userId
    const config = user.readConfig()
    expect(config).toEqual({
      server: server.address,
      apiKey: rootKey,
      userId: rootUserId,
      initializedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    expect(fs.statSync(user.configFile).mode & 0o777).toBe(0o600)
    expect(fs.statSync(user.configFile.replace(/\/config\.json$/, '')).mode & 0o777).toBe(0o700)
    const me = (await user.ok(['user', 'me', '-o', 'json'])).json()
    expect(me).toMatchObject({ userId: rootUserId, username: 'root', role: 'ADMIN' })
  })

  it('init again explains what to do, exits 1 and leaves the saved key alone', async () => {
    const before = fs.readFileSync(user.configFile, 'utf8')
    expectError(
      await user.run(['init']),
      EXIT.FAILED,
      /already initialised.*already holds a key for it.*Nothing was changed/,
    )
    // Another user of the same server, with no config of their own:
    expectError(
      await user.run(['init', '--server', server.address], { XDG_CONFIG_HOME: sandbox.makeDir('other-user-config') }),
      EXIT.FAILED,
      /already initialised.*Use an existing key: pass --api-key KEY or set SERVICE_API_KEY, or save it with "memsvc init --api-key KEY"/,
    )
    expect(fs.readFileSync(user.configFile, 'utf8')).toBe(before)
  })

  it('init --api-key on an initialised server saves that key after checking it', async () => {
    const otherConfig = sandbox.makeDir('adopting-user-config')
    expectError(
      await user.run(['init', '--server', server.address, '--api-key', 'msk_wrong'], { XDG_CONFIG_HOME: otherConfig }),
      EXIT.FAILED,
      /^error: UNAUTHENTICATED/,
    )
    expect(fs.existsSync(`${otherConfig}/memsvc/config.json`)).toBe(false)
    const adopted = await user.ok(['init', '--server', server.address, '--api-key', rootKey], {
      XDG_CONFIG_HOME: otherConfig,
    })
    expect(adopted.stdout).toContain('saved your key for user root')
    expect(adopted.stdout).not.toContain(rootKey)
    expect(JSON.parse(fs.readFileSync(`${otherConfig}/memsvc/config.json`, 'utf8'))).toMatchObject({
      server: server.address,
      apiKey: rootKey,
      userId: rootUserId,
    })
  })

  it('apikey create prints the raw key once; table and JSON', async () => {
    const table = await user.ok([
      'apikey',
      'create',
      '--label',
      'env=prod',
      '--label',
      'team=search',
      '--expires-at',
      '30d',
    ])
    expect(table.stdout).toMatch(RAW_KEY_PATTERN)
    expect(table.stdout).toContain('shown only this once')
    expect(table.stdout).toMatch(/labels\s+env=prod,team=search/)

    const before = Date.now()
    const created = (
      await user.ok(['apikey', 'create', '--label', 'app=cli-test', '--expires-at', '7d', '-o', 'json'])
    ).json<{ apiKeyMetadata: ApiKey; rawApiKey: string }>()
    expect(created.rawApiKey).toMatch(RAW_KEY_PATTERN)
    expect(created.apiKeyMetadata).toMatchObject({
      status: 'ACTIVE',
      labels: { app: 'cli-test' },
      userId: rootUserId,
      keyPrefix: created.rawApiKey.slice(0, 12),
    })
    expect(created.apiKeyMetadata.expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY_MS - 1000)
    expect(created.apiKeyMetadata.expiresAt).toBeLessThanOrEqual(Date.now() + 7 * DAY_MS)

    // The new key works on its own (flag beats the config file).
    const me = (await user.ok(['user', 'me', '--api-key', created.rawApiKey, '-o', 'json'])).json()
    expect(me).toMatchObject({ userId: rootUserId })
  })

  it('apikey create accepts an ISO date and epoch milliseconds; the server rejects the past (exit 1)', async () => {
    const iso = new Date(Date.now() + 10 * DAY_MS).toISOString().slice(0, 10)
    const byDate = (await user.ok(['apikey', 'create', '--expires-at', iso, '-o', 'json'])).json<{
      apiKeyMetadata: ApiKey
    }>()
    expect(byDate.apiKeyMetadata.expiresAt).toBe(Date.parse(iso))
    const epoch = Date.now() + DAY_MS
    const byEpoch = (await user.ok(['apikey', 'create', '--expires-at', String(epoch), '-o', 'json'])).json<{
      apiKeyMetadata: ApiKey
    }>()
    expect(byEpoch.apiKeyMetadata.expiresAt).toBe(epoch)
    expectError(
      await user.run(['apikey', 'create', '--expires-at', '2020-01-01']),
      EXIT.FAILED,
      /^error: INVALID_ARGUMENT: expiresAt: must be in the future \(field expiresAt\)$/,
    )
  })

  it('prints a server error as one line with code, message and field (exit 1)', async () => {
    const result = await user.run(['apikey', 'create', '--label', 'Env=prod'])
    expectError(result, EXIT.FAILED, /^error: INVALID_ARGUMENT: labels\.Env: label keys are .+ \(field labels\.Env\)$/)
  })

  it('rejects bad command lines before sending anything (exit 2)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['apikey', 'create', '--label', 'no-equals-sign'], /--label "no-equals-sign": use key=value/],
      [['apikey', 'create', '--expires-at', 'tomorrow'], /--expires-at "tomorrow": give epoch milliseconds/],
      [['apikey', 'list', '--max-results', 'lots'], /--max-results "lots": must be a whole number/],
      [['apikey', 'list', '--status', 'sleeping'], /--status "sleeping": must be one of ACTIVE, INACTIVE/],
      [['apikey', 'update', '00000000-0000-4000-8000-000000000000'], /nothing to update/],
      [['user', 'create', 'bob', '--role', 'king'], /--role "king": must be one of ADMIN, USER/],
      [['system', 'info', '--server', 'ftp://x:1'], /--server ftp:\/\/x:1: use https:\/\/host:port/],
    ]
    for (const [args, pattern] of cases) expectError(await user.run(args), EXIT.BAD_INPUT, pattern)
    // Parser errors: same exit code; the usage hint goes on a second line.
    for (const args of [
      ['apikey', 'list', '--bogus'],
      ['apikey', 'list', '--output', 'xml'],
      ['apikey'],
      ['apikey', 'update', 'x', '--merge-label', 'a=1', '--replace-label', 'b=2'],
      // A flag without its value: yargs raises this one as an error object, not a message.
      ['apikey', 'create', '--label'],
      ['apikey', 'list', '--max-results'],
    ]) {
      const result = await user.run(args)
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: EXIT.BAD_INPUT, stdout: '' })
      expect(result.stderr).toMatch(/^error: .+\nRun "memsvc .*--help" for usage\.\n$/)
    }
  })

  it('apikey list: table, JSON, filters and paging', async () => {
    const all = (await user.ok(['apikey', 'list', '-o', 'json'])).json<{ keys: ApiKey[]; nextToken?: string }>()
    expect(all.keys.length).toBeGreaterThanOrEqual(5)
    expect(all.nextToken).toBeUndefined()
    expect(JSON.stringify(all)).not.toMatch(RAW_KEY_PATTERN)

    const prod = (await user.ok(['apikey', 'list', '--label', 'env=prod', '--status', 'active', '-o', 'json'])).json<{
      keys: ApiKey[]
    }>()
    expect(prod.keys.map((key) => key.labels)).toEqual([{ env: 'prod', team: 'search' }])

    const firstPage = (await user.ok(['apikey', 'list', '--max-results', '2', '-o', 'json'])).json<{
      keys: ApiKey[]
      nextToken: string
    }>()
    expect(firstPage.keys).toHaveLength(2)
    expect(firstPage.nextToken).toEqual(expect.any(String))
    const secondPage = (
      await user.ok(['apikey', 'list', '--max-results', '2', '--next-token', firstPage.nextToken, '-o', 'json'])
    ).json<{ keys: ApiKey[] }>()
    expect(secondPage.keys[0]!.apiKeyId).not.toBe(firstPage.keys[0]!.apiKeyId)
    const everything = (await user.ok(['apikey', 'list', '--max-results', '2', '--all', '-o', 'json'])).json<{
      keys: ApiKey[]
      nextToken?: string
    }>()
    expect(everything.keys.map((key) => key.apiKeyId)).toEqual(all.keys.map((key) => key.apiKeyId))
    expect(everything.nextToken).toBeUndefined()

    const table = await user.ok(['apikey', 'list', '--max-results', '2'])
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+PREFIX\s+STATUS\s+LABELS/)
    expect(table.stdout).toContain(firstPage.keys[0]!.apiKeyId)
    expect(table.stderr).toMatch(/^more API keys: repeat with --next-token \S+ \(or --all\)\n$/)
  })

  it('sizes tables to the terminal width and never cuts ids', async () => {
    const keys = (await user.ok(['apikey', 'list', '-o', 'json'])).json<{ keys: ApiKey[] }>().keys
    for (const columns of [80, 100]) {
      const table = await user.ok(['apikey', 'list'], { COLUMNS: String(columns) })
      const lines = table.stdout.trimEnd().split('\n')
      for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(columns)
      for (const key of keys) expect(table.stdout).toContain(key.apiKeyId)
    }
    // Piped output with no width is never cut.
    expect((await user.ok(['apikey', 'list'])).stdout).toContain('team=search')
  })

  it('apikey update: status and the three label forms; a deactivated key stops working', async () => {
    const created = (await user.ok(['apikey', 'create', '--label', 'a=1', '-o', 'json'])).json<{
      apiKeyMetadata: ApiKey
      rawApiKey: string
    }>()
    const id = created.apiKeyMetadata.apiKeyId
    const merged = (await user.ok(['apikey', 'update', id, '--merge-label', 'b=2', '-o', 'json'])).json<ApiKey>()
    expect(merged.labels).toEqual({ a: '1', b: '2' })
    const replaced = (await user.ok(['apikey', 'update', id, '--replace-label', 'c=3', '-o', 'json'])).json<ApiKey>()
    expect(replaced.labels).toEqual({ c: '3' })
    const cleared = (await user.ok(['apikey', 'update', id, '--clear-labels', '-o', 'json'])).json<ApiKey>()
    expect(cleared.labels).toEqual({})

    const inactive = await user.ok(['apikey', 'update', id, '--status', 'INACTIVE'])
    expect(inactive.stdout).toMatch(/status\s+INACTIVE/)
    expectError(
      await user.run(['user', 'me', '--api-key', created.rawApiKey]),
      EXIT.FAILED,
      /^error: UNAUTHENTICATED: .*check --api-key/,
    )
    await user.ok(['apikey', 'update', id, '--status', 'active'])
    await user.ok(['user', 'me', '--api-key', created.rawApiKey])
  })

  it('apikey delete: JSON result; deleting again is NOT_FOUND (exit 1)', async () => {
    const created = (await user.ok(['apikey', 'create', '-o', 'json'])).json<{
      apiKeyMetadata: ApiKey
      rawApiKey: string
    }>()
    const id = created.apiKeyMetadata.apiKeyId
    expect((await user.ok(['apikey', 'delete', id, '-o', 'json'])).json()).toEqual({ apiKeyId: id, deleted: true })
    expectError(await user.run(['user', 'me', '--api-key', created.rawApiKey]), EXIT.FAILED, /^error: UNAUTHENTICATED/)
    expectError(await user.run(['apikey', 'delete', id]), EXIT.FAILED, /^error: NOT_FOUND: /)
    expectError(
      await user.run(['apikey', 'delete', 'not-a-uuid']),
      EXIT.FAILED,
      /^error: INVALID_ARGUMENT: .*\(field apiKeyId\)$/,
    )
  })

  it('user create|list|get|delete|me, and a regular user is refused admin commands', async () => {
    const ana = (await user.ok(['user', 'create', 'ana', '--display-name', 'Ana Lima', '-o', 'json'])).json<{
      userId: string
    }>()
    expect(ana).toMatchObject({ username: 'ana', displayName: 'Ana Lima', role: 'USER' })
    const ops = (await user.ok(['user', 'create', 'ops', '--role', 'admin', '-o', 'json'])).json()
    expect(ops).toMatchObject({ username: 'ops', role: 'ADMIN' })
    expectError(await user.run(['user', 'create', 'ana']), EXIT.FAILED, /^error: ALREADY_EXISTS: /)

    const users = (await user.ok(['user', 'list', '--all', '-o', 'json'])).json<{
      users: Array<{ username: string }>
    }>()
    expect(users.users.map((entry) => entry.username).sort()).toEqual(['ana', 'ops', 'root'])
    expect((await user.ok(['user', 'list'])).stdout).toMatch(/^ID\s+USERNAME\s+DISPLAY NAME\s+ROLE/)
    expect((await user.ok(['user', 'get', ana.userId])).stdout).toMatch(/display name\s+Ana Lima/)

    const anaKey = (await user.ok(['apikey', 'create', '--owner-id', ana.userId, '-o', 'json'])).json<{
      rawApiKey: string
    }>().rawApiKey
    expect((await user.ok(['user', 'me', '--api-key', anaKey, '-o', 'json'])).json()).toMatchObject({ username: 'ana' })
    expectError(
      await user.run(['user', 'list', '--api-key', anaKey]),
      EXIT.FAILED,
      /^error: PERMISSION_DENIED: .*admin/,
    )
    const anaKeys = (await user.ok(['apikey', 'list', '--api-key', anaKey, '-o', 'json'])).json<{ keys: ApiKey[] }>()
    expect(anaKeys.keys.map((key) => key.userId)).toEqual([ana.userId])

    expect((await user.ok(['user', 'delete', ana.userId, '-o', 'json'])).json()).toEqual({
      userId: ana.userId,
      deleted: true,
    })
    expectError(await user.run(['user', 'get', ana.userId]), EXIT.FAILED, /^error: NOT_FOUND: /)
  })

  it('system info and system health (table and JSON)', async () => {
    const info = (await user.ok(['system', 'info', '-o', 'json'])).json()
    expect(info).toMatchObject({
      server: server.address,
      initialized: true,
      lifecycleState: 'READY',
      version: expect.any(String),
      license: { present: true },
    })
    expect((await user.ok(['system', 'info'])).stdout).toMatch(/connection\s+plaintext \(no TLS\)/)

    const health = await user.ok(['system', 'health'])
    expect(health.stdout).toMatch(/ready\s+yes \(SERVING\)/)
    expect(health.stdout).toMatch(/state\s+READY/)
    expect((await user.ok(['system', 'health', '-o', 'json'])).json()).toEqual({
      server: server.address,
      service: '',
      live: true,
      ready: true,
      started: true,
      servingStatus: 'SERVING',
      state: 'READY',
    })
    await user.ok(['system', 'health', '--probe', 'startup', '--service', 'memsvc.v1.ApiKeyService'])
    expectError(
      await user.run(['system', 'health', '--service', 'no.such.Service']),
      EXIT.FAILED,
      /^error: NOT_FOUND: unknown service/,
    )
  })

  it('flag beats environment beats config file, for the server and the key', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`
    // Server: config alone works; env beats config; flag beats env.
    expect((await user.ok(['system', 'info', '-o', 'json'])).json()).toMatchObject({ server: server.address })
    expectError(await user.run(['system', 'info'], { SERVICE_SERVER: closed }), EXIT.UNREACHABLE, /cannot connect/)
    await user.ok(['user', 'me', '--server', server.address], { SERVICE_SERVER: closed })
    // Key: env beats config; flag beats env.
    expectError(
      await user.run(['user', 'me'], { SERVICE_API_KEY: 'msk_not_a_key' }),
      EXIT.FAILED,
      /^error: UNAUTHENTICATED/,
    )
    await user.ok(['user', 'me', '--api-key', rootKey], { SERVICE_API_KEY: 'msk_not_a_key' })
    // The saved key is never sent to another server.
    expectError(
      await user.run(['user', 'me', '--server', closed]),
      EXIT.BAD_INPUT,
      /no API key for .*belongs to http:\/\/127\.0\.0\.1:\d+/,
    )
  })

  it('connection failures: one line naming the address (exit 3)', async () => {
    const port = await freePort()
    expectError(
      await user.run(['system', 'info', '--server', `http://127.0.0.1:${port}`]),
      EXIT.UNREACHABLE,
      new RegExp(`^error: cannot connect to 127\\.0\\.0\\.1:${port}: connection refused; .*--server`),
    )
    expectError(
      await user.run(['system', 'info', '--server', `127.0.0.1:${server.grpcPort}`]),
      EXIT.UNREACHABLE,
      /does not answer with TLS; .*use --server http:\/\/127\.0\.0\.1:\d+/,
    )
    expectError(
      await user.run(['system', 'info', '--server', 'http://no-such-host.invalid:9090']),
      EXIT.UNREACHABLE,
      /cannot resolve host "no-such-host\.invalid"/,
    )
  })

  it('system drain: readiness flips, new calls are refused by the server (exit 1, not 3)', async () => {
    const drained = (await user.ok(['system', 'drain', '--reason', 'cli e2e', '-o', 'json'])).json()
    expect(drained).toMatchObject({ state: expect.stringMatching(/^(DRAINING|QUIESCED)$/) })
    const health = await user.run(['system', 'health', '-o', 'json'])
    expect(health.code).toBe(EXIT.FAILED)
    expect(health.json()).toMatchObject({ live: true, ready: false, servingStatus: 'NOT_SERVING' })
    expect(health.stderr).toMatch(/^error: .* is not ready/)
    expect((await user.run(['system', 'health', '--probe', 'live'])).code).toBe(EXIT.OK)
    expectError(await user.run(['apikey', 'list']), EXIT.FAILED, /^error: UNAVAILABLE: server is (draining|quiesced)/)
    const waited = (await user.ok(['system', 'drain', '--wait', '--timeout', '5', '-o', 'json'])).json()
    expect(waited).toMatchObject({ quiesced: true })
  })

  it('never shows a raw API key except in the output of init and apikey create', () => {
    for (const run of user.runs) {
      const createsKey = run.args[0] === 'init' || (run.args[0] === 'apikey' && run.args[1] === 'create')
      if (!createsKey) expect(`${run.stdout}${run.stderr}`, `memsvc ${run.args.join(' ')}`).not.toMatch(RAW_KEY_PATTERN)
    }
  })
})
