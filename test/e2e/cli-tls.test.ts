// The client against a TLS server with its default self-signed certificate: pinning
// on first use, the pin surviving restarts, a changed certificate refused until the
// user re-pins, and --insecure as the explicit opt-out. Tests run in order (one user,
// one server address whose certificate changes underneath).
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CliUser,
  certificateFingerprint,
  cleanUp,
  EXIT,
  expectError,
  freePort,
  RAW_KEY_PATTERN,
  type RunningServer,
  startServer,
} from '../support/cli.js'
import { createSandbox, type Sandbox } from '../support/executable.js'

const TEST_TIMEOUT_MS = 90_000

let sandbox: Sandbox
let user: CliUser
let server: RunningServer | undefined
/** Fixed, so that restarted servers keep the address the pin belongs to. */
let grpcPort: number
let address: string
let firstDataDir: string
let rootKey: string

async function restart(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  await server?.process.stop('SIGTERM')
  server = await startServer(sandbox, { tls: true, dataDir, grpcPort, env })
  return server
}

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  grpcPort = await freePort()
  address = `https://127.0.0.1:${grpcPort}`
  firstDataDir = sandbox.makeDir('data-1')
  await restart(firstDataDir)
}, 90_000)

afterAll(() => cleanUp([server], sandbox), 30_000)

describe('memsvc client, TLS server with a self-signed certificate', { timeout: TEST_TIMEOUT_MS }, () => {
  it('refuses the unpinned self-signed certificate and says how to pin it (exit 3); --insecure skips', async () => {
    expectError(
      await user.run(['system', 'info', '--server', address]),
      EXIT.UNREACHABLE,
      /^error: the TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT; SHA-256 [0-9A-F:]{95}\)\. .*"memsvc init".*--insecure/,
    )
    const insecure = (await user.ok(['system', 'info', '--server', address, '--insecure', '-o', 'json'])).json()
    expect(insecure).toMatchObject({ tlsEnabled: true, initialized: false })
  })

  it('init pins the certificate, prints its fingerprint and saves it', async () => {
    const fingerprint = certificateFingerprint(firstDataDir)
    const result = await user.ok(['init', '--server', `127.0.0.1:${grpcPort}`])
    expect(result.stderr).toContain(`Pinned the server's self-signed certificate, SHA-256 ${fingerprint}`)
    expect(result.stdout).toMatch(RAW_KEY_PATTERN)
    expect(result.stdout).toContain(`connection  TLS, pinned certificate SHA-256 ${fingerprint}`)
    rootKey = RAW_KEY_PATTERN.exec(result.stdout)![0]
    expect(user.readConfig()).toMatchObject({ server: address, apiKey: rootKey, pinnedCertificateSha256: fingerprint })
    expect(fs.statSync(user.configFile).mode & 0o777).toBe(0o600)
  })

  it('later commands verify against the pin, also after a restart with the same certificate', async () => {
    expect((await user.ok(['user', 'me', '-o', 'json'])).json()).toMatchObject({ username: 'root' })
    expect((await user.ok(['system', 'info'])).stdout).toMatch(
      /connection\s+TLS, pinned certificate SHA-256 [0-9A-F:]{95}/,
    )
    await restart(firstDataDir)
    expect((await user.ok(['apikey', 'list', '-o', 'json'])).json<{ keys: unknown[] }>().keys).toHaveLength(1)
    await user.ok(['system', 'health'])
  })

  it('a changed certificate is refused with the way to re-pin, never silently accepted', async () => {
    const before = fs.readFileSync(user.configFile, 'utf8')
    const secondDataDir = sandbox.makeDir('data-2')
    await restart(secondDataDir)
    const pinned = certificateFingerprint(firstDataDir)
    const presented = certificateFingerprint(secondDataDir)
    expect(presented).not.toBe(pinned)
    for (const args of [['user', 'me'], ['system', 'info'], ['system', 'health'], ['init']]) {
      expectError(
        await user.run(args),
        EXIT.UNREACHABLE,
        new RegExp(
          `the TLS certificate of ${address.replaceAll('.', '\\.')} has CHANGED: pinned SHA-256 ${pinned}, server now presents ${presented}\\. .*"memsvc init --repin".*pinnedCertificateSha256`,
        ),
      )
    }
    expect(fs.readFileSync(user.configFile, 'utf8')).toBe(before)
    // --insecure is the explicit opt-out (this new server has its own database, so the old key is unknown there).
    expect((await user.ok(['system', 'info', '--insecure', '-o', 'json'])).json()).toMatchObject({ initialized: false })
    expectError(await user.run(['user', 'me', '--insecure']), EXIT.FAILED, /^error: UNAUTHENTICATED/)
  })

  it('re-pinning after an expected change keeps the saved key when the server kept its database', async () => {
    // Same database, new certificate: the server regenerates it when its host names change.
    await restart(firstDataDir, { SERVICE_TLS_SELF_SIGNED_HOSTNAMES: 'localhost,127.0.0.1,::1,memsvc.test' })
    const fresh = certificateFingerprint(firstDataDir)
    expectError(await user.run(['user', 'me']), EXIT.UNREACHABLE, /has CHANGED/)
    const repinned = await user.ok(['init', '--repin'])
    expect(repinned.stdout).toContain(`Re-pinned ${address}: SHA-256 ${fresh}; the saved API key is unchanged`)
    expect(repinned.stdout).not.toMatch(RAW_KEY_PATTERN)
    expect(user.readConfig()).toMatchObject({ apiKey: rootKey, pinnedCertificateSha256: fresh })
    expect((await user.ok(['user', 'me', '-o', 'json'])).json()).toMatchObject({ username: 'root' })
  })

  it('a hand-edited pin is honoured (re-pinning by editing the config file)', async () => {
    const config = user.readConfig()
    const wrong = `${'AA:'.repeat(31)}AA`
    fs.writeFileSync(user.configFile, JSON.stringify({ ...config, pinnedCertificateSha256: wrong }))
    expectError(await user.run(['user', 'me']), EXIT.UNREACHABLE, /has CHANGED: pinned SHA-256 (AA:){31}AA/)
    // Lower case without colons is accepted too.
    fs.writeFileSync(
      user.configFile,
      JSON.stringify({
        ...config,
        pinnedCertificateSha256: config.pinnedCertificateSha256!.replaceAll(':', '').toLowerCase(),
      }),
    )
    await user.ok(['user', 'me'])
    fs.writeFileSync(user.configFile, JSON.stringify(config))
  })

  it('init --repin on a new server (new data directory) initialises it and saves the new key and pin', async () => {
    const thirdDataDir = sandbox.makeDir('data-3')
    await restart(thirdDataDir)
    const result = await user.ok(['init', '--repin', '-o', 'json'])
    const body = result.json<{ rootApiKey: string; pinnedCertificateSha256: string }>()
    expect(body.pinnedCertificateSha256).toBe(certificateFingerprint(thirdDataDir))
    expect(body.rootApiKey).not.toBe(rootKey)
    expect(user.readConfig()).toMatchObject({
      apiKey: body.rootApiKey,
      pinnedCertificateSha256: body.pinnedCertificateSha256,
    })
    // The replaced key is not lost: the previous config is kept beside it, still 0600.
    expect(result.stderr).toContain(`The previous settings (for ${address}) are kept in ${user.configFile}.previous`)
    expect(JSON.parse(fs.readFileSync(`${user.configFile}.previous`, 'utf8'))).toMatchObject({ apiKey: rootKey })
    expect(fs.statSync(`${user.configFile}.previous`).mode & 0o777).toBe(0o600)
    await user.ok(['user', 'me'])
  })

  it('a plaintext client against the TLS port is told to use https (exit 3)', async () => {
    expectError(
      await user.run(['system', 'info', '--server', `http://127.0.0.1:${grpcPort}`]),
      EXIT.UNREACHABLE,
      /answers with TLS, not plaintext; use --server https:\/\/127\.0\.0\.1:\d+/,
    )
  })
})
