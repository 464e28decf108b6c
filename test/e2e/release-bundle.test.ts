// `npm run release` end to end: the tarball holds what an air-gapped host needs, its
// SHA256SUMS verifies with sha256sum -c, the unpacked executable serves READY on its
// embedded database inside a network namespace with no network (unshare -n) and reads
// the licences it came with; `memsvc upgrade --from <tarball>` swaps executable and
// licences, keeping the old ones, and refuses a bundle that does not match SHA256SUMS.
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXIT } from '../support/cli.js'
import { BUILT_EXECUTABLE, createSandbox, killAllProcesses, runCli, type Sandbox } from '../support/executable.js'
import { hasCommand, sha256 } from '../support/installed.js'

const run = promisify(execFile)
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..')
const RELEASE_DIR = path.join(REPO_ROOT, 'dist', 'release')
const TEST_TIMEOUT_MS = 240_000
/** Polls of `system health` (0.5 s apart) before the server inside the namespace counts as failed. */
const READY_POLLS = 300

let sandbox: Sandbox
let tarball: string
let version: string

beforeAll(async () => {
  sandbox = createSandbox()
  version = execFileSync(BUILT_EXECUTABLE, ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim()
  await run(process.execPath, ['--import', 'tsx', 'scripts/release.ts'], { cwd: REPO_ROOT })
  tarball = path.join(RELEASE_DIR, `memsvc-${version}-linux-x64.tar.gz`)
}, 120_000)

afterAll(() => {
  killAllProcesses()
  sandbox?.remove()
})

/** Unpacks the release tarball into a new directory of the sandbox; returns the bundle's directory. */
function unpack(name: string): string {
  const dir = sandbox.makeDir(name)
  execFileSync('tar', ['-xzf', tarball, '-C', dir])
  return path.join(dir, `memsvc-${version}-linux-x64`)
}

describe('npm run release', { timeout: TEST_TIMEOUT_MS }, () => {
  it('writes the tarball with executable, licences, unit, example env and INSTALL text, and SHA256SUMS that verifies', () => {
    expect(fs.readdirSync(RELEASE_DIR).sort()).toEqual(['SHA256SUMS', path.basename(tarball)])
    const top = `memsvc-${version}-linux-x64/`
    const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort()
    expect(listing).toEqual([
      top,
      `${top}INSTALL.txt`,
      `${top}licenses/`,
      `${top}licenses/LICENSE`,
      `${top}licenses/THIRD_PARTY_NOTICES.md`,
      `${top}licenses/third-party.json`,
      `${top}memsvc`,
      `${top}memsvc.env.example`,
      `${top}memsvc.service`,
      // The default model the build converts (scripts/default-model), with its licence and notice.
      `${top}models/`,
      `${top}models/use-lite-512/`,
      `${top}models/use-lite-512/1_Pooling/`,
      `${top}models/use-lite-512/1_Pooling/config.json`,
      `${top}models/use-lite-512/LICENSE`,
      `${top}models/use-lite-512/NOTICE`,
      `${top}models/use-lite-512/config.json`,
      `${top}models/use-lite-512/model.onnx`,
      `${top}models/use-lite-512/modules.json`,
      `${top}models/use-lite-512/tokenizer.json`,
      `${top}models/use-lite-512/tokenizer_config.json`,
    ])
    const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: RELEASE_DIR, encoding: 'utf8' })
    expect(check.status, check.stderr).toBe(0)
    expect(check.stdout).toBe(`${path.basename(tarball)}: OK\n`)

    const bundle = unpack('listing')
    expect(sha256(path.join(bundle, 'memsvc'))).toBe(sha256(BUILT_EXECUTABLE))
    expect(fs.statSync(path.join(bundle, 'memsvc')).mode & 0o777).toBe(0o755)
    expect(fs.readFileSync(path.join(bundle, 'memsvc.service'), 'utf8')).toContain(
      'ExecStart=/opt/memsvc/current/memsvc serve\n',
    )
    expect(fs.readFileSync(path.join(bundle, 'memsvc.env.example'), 'utf8')).not.toMatch(/^SERVICE_METRICS_SECRET=/m)
    expect(fs.readFileSync(path.join(bundle, 'INSTALL.txt'), 'utf8')).toContain('./memsvc system install')
  })

  it('the unpacked bundle answers READY on its embedded database without any network, reading its own licences', async () => {
    if (!hasCommand('unshare') || !hasCommand('ip'))
      throw new Error('unshare (util-linux) and ip (iproute2) are needed')
    const bundle = unpack('airgapped')
    const data = sandbox.makeDir('airgapped-data')
    // Inside the namespace only loopback exists (brought up so the CLI can reach the server).
    const script = [
      'set -e',
      'ip link set lo up',
      'echo "links: $(ip -o link show | cut -d: -f2 | tr -d " " | tr "\\n" " ")"',
      `./memsvc serve --tls-disabled --rest-port 8080 --grpc-port 9090 --data-dir "${data}" 2>"${data}/server.log" &`,
      'server=$!',
      'polls=0',
      'until ./memsvc system health --server http://127.0.0.1:9090 >/dev/null 2>&1; do',
      `  polls=$((polls + 1)); if [ $polls -ge ${READY_POLLS} ]; then kill $server; cat "${data}/server.log" >&2; exit 9; fi; sleep 0.5`,
      'done',
      './memsvc system info --server http://127.0.0.1:9090 --output json',
      'kill -TERM $server; wait $server',
    ].join('\n')
    const { stdout } = await run('unshare', ['-n', 'sh', '-c', script], {
      cwd: bundle,
      env: sandbox.env,
      timeout: TEST_TIMEOUT_MS - 10_000,
    })
    const [links, ...json] = stdout.split('\n')
    expect(links).toBe('links: lo ')
    const info = JSON.parse(json.join('\n')) as Record<string, unknown>
    expect(info).toMatchObject({
      version,
      lifecycleState: 'READY',
      storage: 'embedded',
      license: {
        present: true,
        directory: path.join(bundle, 'licenses'),
        productLicense: expect.stringMatching(/^Apache License/),
      },
    })
    expect((info.license as { thirdPartyPackages: number }).thirdPartyPackages).toBeGreaterThan(0)
  })

  it('upgrade --from the tarball swaps executable and licences, keeping the old ones as .old', async () => {
    const dir = sandbox.makeDir('flat')
    const executable = path.join(dir, 'memsvc')
    fs.copyFileSync(BUILT_EXECUTABLE, executable)
    fs.chmodSync(executable, 0o755)
    fs.mkdirSync(path.join(dir, 'licenses'))
    fs.writeFileSync(path.join(dir, 'licenses', 'LICENSE'), 'the old licence\n')
    const result = await runCli({ ...sandbox, executable }, ['upgrade', '--from', tarball], { timeoutMs: 120_000 })
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(result.stdout).toBe(`upgraded ${executable}: ${version} -> ${version} (executable and licences)\n`)
    expect(result.stderr).toContain(`previous version kept; to go back: mv ${executable}.old ${executable}`)
    expect(fs.readdirSync(dir).sort()).toEqual(['licenses', 'licenses.old', 'memsvc', 'memsvc.old'])
    expect(fs.readFileSync(path.join(dir, 'licenses.old', 'LICENSE'), 'utf8')).toBe('the old licence\n')
    expect(fs.readdirSync(path.join(dir, 'licenses')).sort()).toEqual([
      'LICENSE',
      'THIRD_PARTY_NOTICES.md',
      'third-party.json',
    ])
  })

  it('upgrade --from a tarball that does not match SHA256SUMS changes nothing (exit 1)', async () => {
    const dir = sandbox.makeDir('tampered')
    const copy = path.join(dir, path.basename(tarball))
    fs.copyFileSync(tarball, copy)
    fs.writeFileSync(path.join(dir, 'SHA256SUMS'), `${'ab'.repeat(32)}  ${path.basename(tarball)}\n`)
    const before = sha256(sandbox.executable)
    const result = await runCli(sandbox, ['upgrade', '--from', copy], { timeoutMs: 120_000 })
    expect(result.code).toBe(EXIT.FAILED)
    expect(result.stderr).toMatch(
      new RegExp(
        `error: checksum mismatch for .*: expected ${'ab'.repeat(32)} \\(from .*/SHA256SUMS\\), got [0-9a-f]{64}; nothing was changed\\n$`,
      ),
    )
    expect(sha256(sandbox.executable)).toBe(before)
    expect(fs.readdirSync(sandbox.dir).filter((name) => name.endsWith('.old'))).toEqual([])
  })
})
