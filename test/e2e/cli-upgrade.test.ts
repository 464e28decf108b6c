// `memsvc upgrade` end to end: the built executable replaces itself from a local file
// and from a local HTTP server, after checking the SHA-256; refuses a mismatch or a
// candidate that does not run; falls back to ~/.local/bin when its directory is not
// writable (shown for real by running as an unprivileged user, since root ignores
// directory permissions).
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXIT, runAsUser } from '../support/cli.js'
import { BUILT_EXECUTABLE, createSandbox, killAllProcesses, runCli, type Sandbox } from '../support/executable.js'

const TEST_TIMEOUT_MS = 60_000
const FAKE_VERSION = '9.9.9-e2e'
const NOBODY = { uid: 65534, gid: 65534 }

let sandbox: Sandbox
let httpServer: http.Server
let baseUrl: string
let candidates: string
let builtVersion: string

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** A stand-in new release: a script that answers --version like memsvc does. */
function writeScript(file: string, body: string): string {
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  fs.writeFileSync(`${file}.sha256`, `${sha256(file)}  ${path.basename(file)}\n`)
  return file
}

let installs = 0
/** A fresh install directory holding a copy of the built executable; returns its path. */
function install(): string {
  installs += 1
  const dir = sandbox.makeDir(`install-${installs}`)
  const executable = path.join(dir, 'memsvc')
  fs.copyFileSync(BUILT_EXECUTABLE, executable)
  fs.chmodSync(executable, 0o755)
  return executable
}

/** Runs the copy at `executable` (not the sandbox's) with the sandbox's clean environment. */
function upgrade(executable: string, args: string[]) {
  return runCli({ ...sandbox, executable }, ['upgrade', ...args], { timeoutMs: 45_000 })
}

/** The first line of --version (the second names the runtime), as `memsvc upgrade` reads it. */
const versionOf = (executable: string) =>
  runCli({ ...sandbox, executable }, ['--version']).then((result) => result.stdout.split('\n')[0]!.trim())
/** Leftover temp files of an upgrade in the install directory. */
const leftovers = (dir: string) => fs.readdirSync(dir).filter((name) => name !== 'memsvc')

beforeAll(async () => {
  sandbox = createSandbox()
  candidates = sandbox.makeDir('candidates')
  writeScript(path.join(candidates, 'memsvc-fake'), `echo ${FAKE_VERSION}`)
  writeScript(path.join(candidates, 'memsvc-broken'), 'echo "Segmentation fault" >&2; exit 139')
  fs.copyFileSync(BUILT_EXECUTABLE, path.join(candidates, 'memsvc-real'))
  fs.writeFileSync(path.join(candidates, 'memsvc-real.sha256'), `${sha256(BUILT_EXECUTABLE)}  memsvc-real\n`)
  builtVersion = await versionOf(sandbox.executable)

  // Serves the candidates directory; /latest redirects, /missing is 404.
  httpServer = http.createServer((request, response) => {
    const name = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname).slice(1)
    if (name === 'latest') {
      response.writeHead(302, { location: '/memsvc-fake' }).end()
      return
    }
    if (name === 'latest.sha256') {
      response.writeHead(302, { location: '/memsvc-fake.sha256' }).end()
      return
    }
    const file = path.join(candidates, path.basename(name))
    if (!name || !fs.existsSync(file)) {
      response.writeHead(404).end('not found')
      return
    }
    response.writeHead(200, { 'content-length': fs.statSync(file).size, 'content-type': 'application/octet-stream' })
    fs.createReadStream(file).pipe(response)
  })
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`
}, 60_000)

afterAll(async () => {
  killAllProcesses()
  httpServer?.closeAllConnections()
  await new Promise<void>((resolve) => (httpServer ? httpServer.close(() => resolve()) : resolve()))
  sandbox?.remove()
})

describe('memsvc upgrade', { timeout: TEST_TIMEOUT_MS }, () => {
  it('--check prints current and candidate versions and changes nothing', async () => {
    const executable = install()
    const result = await upgrade(executable, ['--from', path.join(candidates, 'memsvc-fake'), '--check'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(result.stdout).toMatch(
      new RegExp(
        `^current\\s+${builtVersion.replaceAll('.', '\\.').replaceAll('+', '\\+')}\\s.*\\ncandidate\\s+${FAKE_VERSION}\\s`,
      ),
    )
    const json = await upgrade(executable, ['--from', path.join(candidates, 'memsvc-fake'), '--check', '-o', 'json'])
    expect(JSON.parse(json.stdout)).toMatchObject({
      current: builtVersion,
      candidate: FAKE_VERSION,
      upgradeAvailable: true,
    })
    expect(await versionOf(executable)).toBe(builtVersion)
    expect(leftovers(path.dirname(executable))).toEqual([])
  })

  it('--dry-run verifies everything and replaces nothing', async () => {
    const executable = install()
    const result = await upgrade(executable, ['--from', path.join(candidates, 'memsvc-fake'), '--dry-run'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(result.stdout).toMatch(/verified 9\.9\.9-e2e .*Nothing was changed/)
    expect(await versionOf(executable)).toBe(builtVersion)
    expect(leftovers(path.dirname(executable))).toEqual([])
  })

  it('replaces the executable from a local file, checksum from the .sha256 beside it', async () => {
    const executable = install()
    const result = await upgrade(executable, ['--from', path.join(candidates, 'memsvc-fake')])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(result.stdout).toBe(`upgraded ${executable}: ${builtVersion} -> ${FAKE_VERSION}\n`)
    expect(result.stderr).toMatch(
      /^downloading .*memsvc-fake \(\d+\.\d kB\)\n(.*\n)*downloaded \d+\.\d kB in \d+\.\d s\n$/,
    )
    expect(await versionOf(executable)).toBe(FAKE_VERSION)
    expect(fs.statSync(executable).mode & 0o777).toBe(0o755)
    expect(leftovers(path.dirname(executable))).toEqual([]) // no .old, no temp file
  })

  it('refuses a checksum mismatch and leaves everything as it was (exit 1)', async () => {
    const executable = install()
    const wrong = 'ab'.repeat(32)
    const result = await upgrade(executable, ['--from', path.join(candidates, 'memsvc-fake'), '--sha256', wrong])
    expect(result.code).toBe(EXIT.FAILED)
    expect(result.stderr).toMatch(
      new RegExp(
        `\\nerror: checksum mismatch for .*memsvc-fake: expected ${wrong} \\(from --sha256\\), got [0-9a-f]{64}; nothing was changed\\n$`,
      ),
    )
    expect(await versionOf(executable)).toBe(builtVersion)
    expect(leftovers(path.dirname(executable))).toEqual([])

    // A checksum file that does not match is refused the same way.
    const tampered = writeScript(path.join(candidates, 'memsvc-tampered'), `echo ${FAKE_VERSION}`)
    fs.appendFileSync(tampered, '# changed after the checksum was made\n')
    const fromFile = await upgrade(executable, ['--from', tampered])
    expect(fromFile.code).toBe(EXIT.FAILED)
    expect(fromFile.stderr).toMatch(/checksum mismatch .*\(from .*memsvc-tampered\.sha256\)/)
    expect(await versionOf(executable)).toBe(builtVersion)
  })

  it('needs a checksum: no flag and no .sha256 beside it is bad input (exit 2)', async () => {
    const executable = install()
    const lonely = path.join(candidates, 'memsvc-lonely')
    fs.copyFileSync(path.join(candidates, 'memsvc-fake'), lonely)
    const result = await upgrade(executable, ['--from', lonely])
    expect(result.code).toBe(EXIT.BAD_INPUT)
    expect(result.stderr).toMatch(/^error: no checksum: .*memsvc-lonely\.sha256 does not exist; pass --sha256 HEX/)
    const missing = await upgrade(executable, [
      '--from',
      path.join(candidates, 'nothing-here'),
      '--sha256',
      'ab'.repeat(32),
    ])
    expect(missing.code).toBe(EXIT.FAILED)
    expect(missing.stderr).toMatch(/^error: cannot download: .*nothing-here does not exist\n$/)
  })

  it('refuses a candidate that does not run --version, keeping the old one (exit 1)', async () => {
    const executable = install()
    const result = await upgrade(executable, ['--from', path.join(candidates, 'memsvc-broken')])
    expect(result.code).toBe(EXIT.FAILED)
    expect(result.stderr).toMatch(
      /error: the new executable does not run \("--version": .*Segmentation fault\); nothing was changed\n$/,
    )
    expect(await versionOf(executable)).toBe(builtVersion)
    expect(leftovers(path.dirname(executable))).toEqual([])
  })

  it('upgrades from an HTTP URL, following a redirect, with the checksum from <url>.sha256', async () => {
    const executable = install()
    const result = await upgrade(executable, ['--from', `${baseUrl}/latest`])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(result.stderr).toContain(`downloading ${baseUrl}/latest`)
    expect(result.stderr).toMatch(/downloaded \d+\.\d kB/)
    expect(await versionOf(executable)).toBe(FAKE_VERSION)

    const notFound = await upgrade(install(), ['--from', `${baseUrl}/memsvc-gone`, '--sha256', 'ab'.repeat(32)])
    expect(notFound.code).toBe(EXIT.FAILED)
    expect(notFound.stderr).toMatch(/^error: cannot download: .*memsvc-gone: HTTP 404\n$/)
  })

  it('installs the real executable over HTTP with progress, and the new one works', async () => {
    const result = await upgrade(install(), ['--from', `${baseUrl}/memsvc-real`, '--check'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    // The progress lines: at least one intermediate "x of y" line before "downloaded".
    expect(result.stderr).toMatch(
      /downloading .*memsvc-real \(\d+\.\d MB\)\n( {2}\d+\.\d [kM]B of \d+\.\d MB \d+%\n)+downloaded \d+\.\d MB in/,
    )
    const real = install()
    const upgraded = await upgrade(real, ['--from', `${baseUrl}/memsvc-real`])
    expect(upgraded.code, upgraded.stderr).toBe(EXIT.OK)
    expect(await versionOf(real)).toBe(builtVersion)
    expect(sha256(real)).toBe(sha256(BUILT_EXECUTABLE))
    expect(leftovers(path.dirname(real))).toEqual([])
  })

  it('falls back to ~/.local/bin when the install directory is not writable, and says so', async () => {
    const executable = install()
    const installDir = path.dirname(executable)
    const home = sandbox.makeDir('nobody-home')
    // The unprivileged user must reach the files, own its HOME and not own the install dir.
    fs.chmodSync(sandbox.dir, 0o755)
    fs.chmodSync(installDir, 0o755)
    fs.chmodSync(candidates, 0o755)
    if (process.getuid?.() === 0) fs.chownSync(home, NOBODY.uid, NOBODY.gid)
    else fs.chmodSync(installDir, 0o555)
    const env = { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' }
    const from = path.join(candidates, 'memsvc-fake')

    const dryRun = await runAsUser(
      NOBODY.uid,
      NOBODY.gid,
      executable,
      ['upgrade', '--from', from, '--dry-run'],
      env,
      sandbox.dir,
    )
    expect(dryRun.code, dryRun.stderr).toBe(EXIT.OK)
    expect(dryRun.stderr).toMatch(/is not writable \(EACCES\); a real run would install into .*\/\.local\/bin/)
    expect(fs.existsSync(path.join(home, '.local'))).toBe(false)

    const result = await runAsUser(NOBODY.uid, NOBODY.gid, executable, ['upgrade', '--from', from], env, sandbox.dir)
    expect(result.code, result.stderr).toBe(EXIT.OK)
    const fallback = path.join(home, '.local', 'bin', 'memsvc')
    expect(result.stdout).toBe(`installed ${FAKE_VERSION} as ${fallback}\n`)
    expect(result.stderr).toContain(
      `note: ${installDir} is not writable (EACCES), so the new executable went into ${path.dirname(fallback)} instead; ${executable} is unchanged.`,
    )
    expect(result.stderr).toContain(`${path.dirname(fallback)} must be on your PATH (before ${installDir})`)
    expect(await versionOf(executable)).toBe(builtVersion)
    expect(await versionOf(fallback)).toBe(FAKE_VERSION)
    expect(leftovers(installDir)).toEqual([])
  })
})
