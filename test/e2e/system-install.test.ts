// `memsvc system install|uninstall` end to end, staged with --root into a temp directory
// (how an operator would check a host's tree too): every file with its mode and owner, the
// unit (systemd-analyze verify and security), the server READY from the installed layout
// with the installed settings, telling systemd READY/STOPPING, a second install keeping
// settings and data, upgrades from a bundle with rollback, uninstall with and without
// --purge, and debug installs (psql reaches the embedded database; normal ones listen on
// nothing but REST and gRPC).
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEnvFile } from '../../src/install/env-file.js'
import { EXIT, SERVER_START_TIMEOUT_MS } from '../support/cli.js'
import {
  createSandbox,
  killAllProcesses,
  runCli,
  type Sandbox,
  ServerProcess,
  waitUntil,
} from '../support/executable.js'
import {
  hasCommand,
  listeningPorts,
  listTree,
  modeAndOwner,
  provideSystemUnits,
  sha256,
  writeFakeBundle,
} from '../support/installed.js'

const TEST_TIMEOUT_MS = 120_000
/** The bar for `systemd-analyze security --offline=yes`. */
const MAX_EXPOSURE = 2.5
const PREFIX = '/opt/memsvc'
const UID = process.getuid?.() ?? -1
const GID = process.getgid?.() ?? -1
const OWNER = `${UID}:${GID}`

let sandbox: Sandbox
let version: string

beforeAll(async () => {
  sandbox = createSandbox()
  version = (await runCli(sandbox, ['--version'])).stdout.split('\n')[0]!.trim()
}, 60_000)

afterAll(() => {
  killAllProcesses()
  sandbox?.remove()
})

let roots = 0
function newRoot(): string {
  roots += 1
  return sandbox.makeDir(`root-${roots}`)
}

const system = (args: string[]) => runCli(sandbox, ['system', ...args], { timeoutMs: 60_000 })
const release = (root: string) => path.join(root, 'opt/memsvc/releases', version)
const readEnv = (root: string) => parseEnvFile(fs.readFileSync(path.join(root, 'etc/memsvc/memsvc.env'), 'utf8'))

/** The installed executable run as the unit would: settings from the env file, systemd's directories. */
function startInstalled(root: string, flags: string[] = [], extraEnv: NodeJS.ProcessEnv = {}): ServerProcess {
  const env = {
    ...readEnv(root),
    STATE_DIRECTORY: path.join(root, 'var/lib/memsvc'),
    CACHE_DIRECTORY: path.join(root, 'var/cache/memsvc'),
    ...extraEnv,
  }
  // Ports 0: several tests run servers side by side; the env file's ports are checked as text.
  return ServerProcess.start(
    { ...sandbox, executable: path.join(root, 'opt/memsvc/current/memsvc') },
    ['--rest-port', '0', '--grpc-port', '0', ...flags],
    env,
  )
}

async function systemInfo(server: ServerProcess): Promise<Record<string, unknown>> {
  const response = await server.get('/v1/system/info')
  expect(response.status).toBe(200)
  return JSON.parse(response.body) as Record<string, unknown>
}

describe('memsvc system install --root', { timeout: TEST_TIMEOUT_MS }, () => {
  it('--dry-run prints every step and creates nothing', async () => {
    const root = newRoot()
    const result = await system(['install', '--root', root, '--dry-run'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    const steps = result.stdout.trim().split('\n')
    expect(steps).toEqual([
      expect.stringMatching(/^would skip creating system user memsvc: staging into /),
      `would install ${version} as ${PREFIX}/releases/${version} (executable + licenses/) and point ${PREFIX}/current at it`,
      `would link /usr/local/bin/memsvc -> ${PREFIX}/current/memsvc`,
      'would create the state directory /var/lib/memsvc (0700, owner memsvc; kept on upgrade)',
      'would write /etc/memsvc/memsvc.env (0640, root:memsvc): ports 8080/9090, embedded database, a new metrics secret',
      'would write /etc/systemd/system/memsvc.service (Type=notify, no capabilities)',
      `would record the install in ${PREFIX}/install.json`,
    ])
    expect(fs.readdirSync(root)).toEqual([])
  })

  it('creates every file with its mode and owner, and a unit that passes systemd-analyze', async () => {
    const root = newRoot()
    const result = await system(['install', '--root', root, '--rest-port', '8443', '--grpc-port', '9443'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(result.stderr).toContain(
      `staged into ${root}; on the target host: systemctl daemon-reload && systemctl enable --now memsvc`,
    )

    expect(listTree(root)).toEqual([
      'etc',
      'etc/memsvc',
      'etc/memsvc/memsvc.env',
      'etc/systemd',
      'etc/systemd/system',
      'etc/systemd/system/memsvc.service',
      'opt',
      'opt/memsvc',
      'opt/memsvc/current',
      'opt/memsvc/install.json',
      'opt/memsvc/releases',
      `opt/memsvc/releases/${version}`,
      `opt/memsvc/releases/${version}/licenses`,
      `opt/memsvc/releases/${version}/memsvc`,
      'usr',
      'usr/local',
      'usr/local/bin',
      'usr/local/bin/memsvc',
      'var',
      'var/lib',
      'var/lib/memsvc',
    ])
    // Staged files belong to whoever ran the install (the target host's memsvc user does not exist here).
    const modes = Object.fromEntries(
      [
        'etc',
        'etc/memsvc',
        'etc/memsvc/memsvc.env',
        'etc/systemd/system/memsvc.service',
        'opt/memsvc',
        `opt/memsvc/releases/${version}/memsvc`,
        'var/lib',
        'var/lib/memsvc',
        'usr/local/bin',
      ].map((file) => [file, modeAndOwner(path.join(root, file))]),
    )
    expect(modes).toEqual({
      etc: `0755 ${OWNER}`,
      'etc/memsvc': `0750 ${OWNER}`,
      'etc/memsvc/memsvc.env': `0640 ${OWNER}`,
      'etc/systemd/system/memsvc.service': `0644 ${OWNER}`,
      'opt/memsvc': `0755 ${OWNER}`,
      [`opt/memsvc/releases/${version}/memsvc`]: `0755 ${OWNER}`,
      'var/lib': `0755 ${OWNER}`,
      'var/lib/memsvc': `0700 ${OWNER}`,
      'usr/local/bin': `0755 ${OWNER}`,
    })
    expect(fs.readlinkSync(path.join(root, 'usr/local/bin/memsvc'))).toBe(`${PREFIX}/current/memsvc`)
    expect(fs.readlinkSync(path.join(root, 'opt/memsvc/current'))).toBe(`releases/${version}`)
    expect(sha256(path.join(release(root), 'memsvc'))).toBe(sha256(sandbox.executable))
    expect(fs.readdirSync(path.join(release(root), 'licenses')).sort()).toEqual(
      fs.readdirSync(path.join(sandbox.dir, 'licenses')).sort(),
    )

    const env = readEnv(root)
    expect(env).toMatchObject({
      SERVICE_REST_PORT: '8443',
      SERVICE_GRPC_PORT: '9443',
      SERVICE_SHUTDOWN_TIMEOUT_SEC: '30',
    })
    expect(env.SERVICE_METRICS_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(env.DB_URL).toBeUndefined()
    expect(env.SERVICE_DEBUG_DB_LISTEN).toBeUndefined()

    const unit = fs.readFileSync(path.join(root, 'etc/systemd/system/memsvc.service'), 'utf8')
    const lines = new Set(unit.split('\n'))
    for (const line of [
      'Type=notify',
      'NotifyAccess=all',
      'User=memsvc',
      'Group=memsvc',
      'EnvironmentFile=/etc/memsvc/memsvc.env',
      `ExecStart=${PREFIX}/current/memsvc serve`,
      'Restart=on-failure',
      'TimeoutStopSec=60s',
      'KillSignal=SIGTERM',
      'KillMode=mixed',
      'StateDirectory=memsvc',
      'StateDirectoryMode=0700',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'CapabilityBoundingSet=',
      'AmbientCapabilities=',
      'PrivateUsers=yes',
    ])
      expect(lines, line).toContain(line)
    expect(unit).not.toMatch(/ReadWritePaths|CAP_NET_BIND_SERVICE/)
    expect(JSON.parse(fs.readFileSync(path.join(root, 'opt/memsvc/install.json'), 'utf8'))).toEqual({
      version,
      user: 'memsvc',
      userCreated: false,
      unit: '/etc/systemd/system/memsvc.service',
      binLink: '/usr/local/bin/memsvc',
      envFile: '/etc/memsvc/memsvc.env',
      stateDir: '/var/lib/memsvc',
    })

    if (!hasCommand('systemd-analyze'))
      throw new Error('systemd-analyze is missing: apt-get install systemd (scripts/test.mjs installs it)')
    provideSystemUnits(root)
    const verify = spawnSync('systemd-analyze', ['verify', `--root=${root}`, 'memsvc.service'], { encoding: 'utf8' })
    expect(verify.status, verify.stderr).toBe(0)
    expect(verify.stderr).toBe('')
    const security = spawnSync(
      'systemd-analyze',
      ['security', '--offline=yes', `--root=${root}`, '--no-pager', 'memsvc.service'],
      { encoding: 'utf8' },
    )
    const exposure = /Overall exposure level for memsvc\.service: (\d+\.\d)/.exec(security.stdout)
    expect(exposure, security.stdout + security.stderr).not.toBeNull()
    expect(Number(exposure![1])).toBeLessThanOrEqual(MAX_EXPOSURE)
  })

  it('a port below 1024 gives the unit CAP_NET_BIND_SERVICE and nothing else', async () => {
    const root = newRoot()
    const result = await system(['install', '--root', root, '--rest-port', '443'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    const unit = fs.readFileSync(path.join(root, 'etc/systemd/system/memsvc.service'), 'utf8')
    expect(unit).toContain('CapabilityBoundingSet=CAP_NET_BIND_SERVICE\nAmbientCapabilities=CAP_NET_BIND_SERVICE\n')
    expect(unit).not.toContain('PrivateUsers=')
  })

  it('the installed server reaches READY from the installed layout, with the installed settings, and tells systemd', async () => {
    const root = newRoot()
    expect((await system(['install', '--root', root])).code).toBe(EXIT.OK)
    // systemd's side of sd_notify: a datagram socket; python3 because Node cannot bind one.
    const notifySocket = path.join(sandbox.makeDir(`notify-${roots}`), 'notify')
    const received = `${notifySocket}.log`
    const listener = spawn(
      'python3',
      [
        '-c',
        [
          'import socket, sys',
          's = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])',
          'print("bound", flush=True)',
          'while True:',
          '    open(sys.argv[2], "a").write(s.recv(4096).decode() + "\\n")',
        ].join('\n'),
        notifySocket,
        received,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    try {
      await new Promise((resolve) => listener.stdout.once('data', resolve))
      const server = startInstalled(root, [], { NOTIFY_SOCKET: notifySocket })
      await server.waitForReady(SERVER_START_TIMEOUT_MS)
      const info = await systemInfo(server)
      expect(info).toMatchObject({
        storage: 'embedded',
        debugDatabaseListen: '',
        license: { present: true, directory: path.join(release(root), 'licenses') },
      })
      expect(fs.existsSync(path.join(root, 'var/lib/memsvc/pgdata/PG_VERSION'))).toBe(true)
      expect(server.hasLogged(/built-in default secret/)).toBe(false)
      expect(
        (await server.get('/metrics', { 'X-Service-Metrics-Key': readEnv(root).SERVICE_METRICS_SECRET! })).status,
      ).toBe(200)
      expect((await server.get('/metrics')).status).toBe(401)
      await waitUntil(
        'READY=1 at systemd',
        () => fs.existsSync(received) && /^READY=1$/m.test(fs.readFileSync(received, 'utf8')),
      )
      expect((await server.stop()).code).toBe(0)
      expect(fs.readFileSync(received, 'utf8')).toMatch(
        /READY=1\nSTATUS=ready: REST on port \d+, gRPC on port \d+\n(.*\n)*STOPPING=1\nSTATUS=draining after SIGTERM\n/,
      )
    } finally {
      listener.kill()
    }
  })

  it('a second install upgrades in place, keeping the env file, its secret and the data', async () => {
    const root = newRoot()
    expect((await system(['install', '--root', root])).code).toBe(EXIT.OK)
    const envFile = path.join(root, 'etc/memsvc/memsvc.env')
    const before = fs.readFileSync(envFile, 'utf8')
    fs.writeFileSync(path.join(root, 'var/lib/memsvc/marker'), 'data')
    const unitBefore = fs.readFileSync(path.join(root, 'etc/systemd/system/memsvc.service'), 'utf8')

    const again = await system(['install', '--root', root, '--rest-port', '8181', '--debug'])
    expect(again.code, again.stderr).toBe(EXIT.OK)
    expect(again.stdout).toContain('keep /etc/memsvc/memsvc.env (never overwritten)')
    expect(again.stderr).toContain(
      '--rest-port, --debug not applied: /etc/memsvc/memsvc.env exists and is kept; edit it instead',
    )
    expect(fs.readFileSync(envFile, 'utf8')).toBe(before)
    expect(fs.readFileSync(path.join(root, 'var/lib/memsvc/marker'), 'utf8')).toBe('data')
    expect(fs.readFileSync(path.join(root, 'etc/systemd/system/memsvc.service'), 'utf8')).toBe(unitBefore)
    expect(fs.readdirSync(path.join(root, 'opt/memsvc/releases'))).toEqual([version])
  })

  it('upgrade --from a newer bundle makes it current, keeps the old release, and rolling back restores it', async () => {
    const root = newRoot()
    expect((await system(['install', '--root', root])).code).toBe(EXIT.OK)
    const bundle = writeFakeBundle(sandbox.makeDir(`bundle-${roots}`), '9.9.9-e2e')
    const installed = path.join(root, 'opt/memsvc/current/memsvc')
    const upgraded = await runCli({ ...sandbox, executable: installed }, ['upgrade', '--from', bundle], {
      timeoutMs: 60_000,
    })
    expect(upgraded.code, upgraded.stderr).toBe(EXIT.OK)
    expect(upgraded.stdout).toBe(
      `upgraded ${path.join(root, 'opt/memsvc/releases/9.9.9-e2e/memsvc')}: ${version} -> 9.9.9-e2e (executable and licences)\n`,
    )
    expect(upgraded.stderr).toContain(
      `previous version kept; to go back: ln -sfn releases/${version} ${path.join(root, 'opt/memsvc/current')}`,
    )
    expect(fs.readlinkSync(path.join(root, 'opt/memsvc/current'))).toBe('releases/9.9.9-e2e')
    expect(fs.readFileSync(path.join(root, 'opt/memsvc/current/licenses/LICENSE'), 'utf8')).toBe(
      'licence of 9.9.9-e2e\n',
    )
    expect(execFileSync(installed, ['--version'], { encoding: 'utf8' }).trim()).toBe('9.9.9-e2e')
    expect(fs.readdirSync(path.join(root, 'opt/memsvc/releases')).sort()).toEqual(['9.9.9-e2e', version].sort())

    execFileSync('ln', ['-sfn', `releases/${version}`, path.join(root, 'opt/memsvc/current')])
    expect(execFileSync(installed, ['--version'], { encoding: 'utf8' }).split('\n')[0]).toBe(version)
    expect(sha256(installed)).toBe(sha256(sandbox.executable))

    // Installing the release that is already current changes nothing, and keeps the other one.
    const reinstall = await system(['install', '--root', root])
    expect(reinstall.code, reinstall.stderr).toBe(EXIT.OK)
    expect(reinstall.stdout).toContain(
      `install ${version} as ${PREFIX}/releases/${version} (executable + licenses/) and point ${PREFIX}/current at it\n`,
    )
    expect(fs.readdirSync(path.join(root, 'opt/memsvc/releases')).sort()).toEqual(['9.9.9-e2e', version].sort())
  })

  it('uninstall removes what install created and keeps settings and data; --purge removes those too', async () => {
    const root = newRoot()
    expect((await system(['install', '--root', root])).code).toBe(EXIT.OK)
    fs.writeFileSync(path.join(root, 'var/lib/memsvc/marker'), 'data')
    // What systemd's CacheDirectory= would hold once the service ran.
    fs.mkdirSync(path.join(root, 'var/cache/memsvc'), { recursive: true })
    fs.writeFileSync(path.join(root, 'var/cache/memsvc/uws.node'), 'addon')

    const dryRun = await system(['uninstall', '--root', root, '--dry-run'])
    expect(dryRun.code, dryRun.stderr).toBe(EXIT.OK)
    expect(dryRun.stdout).toBe(
      [
        'would remove the unit /etc/systemd/system/memsvc.service',
        'would remove the link /usr/local/bin/memsvc',
        `would remove the releases and licences under ${PREFIX}`,
        'would remove the addon cache /var/cache/memsvc',
        '',
      ].join('\n'),
    )
    expect(fs.existsSync(path.join(root, 'opt/memsvc/current/memsvc'))).toBe(true)

    const kept = await system(['uninstall', '--root', root])
    expect(kept.code, kept.stderr).toBe(EXIT.OK)
    expect(kept.stderr).toContain(
      'kept /etc/memsvc/memsvc.env and /var/lib/memsvc (data); "system uninstall --purge" removes them',
    )
    expect(listTree(root)).toEqual([
      'etc',
      'etc/memsvc',
      'etc/memsvc/memsvc.env',
      'etc/systemd',
      'etc/systemd/system',
      'opt',
      'usr',
      'usr/local',
      'usr/local/bin',
      'var',
      'var/cache',
      'var/lib',
      'var/lib/memsvc',
      'var/lib/memsvc/marker',
    ])

    const notInstalled = await system(['uninstall', '--root', root])
    expect(notInstalled.code).toBe(EXIT.FAILED)
    expect(notInstalled.stderr).toMatch(/error: memsvc is not installed under .*\/opt\/memsvc \(no install\.json\)/)

    expect((await system(['install', '--root', root])).code).toBe(EXIT.OK)
    const purged = await system(['uninstall', '--root', root, '--purge'])
    expect(purged.code, purged.stderr).toBe(EXIT.OK)
    expect(purged.stdout).toContain(
      'remove ALL DATA (embedded database, encryption key, certificates) in /var/lib/memsvc',
    )
    expect(listTree(root)).toEqual([
      'etc',
      'etc/systemd',
      'etc/systemd/system',
      'opt',
      'usr',
      'usr/local',
      'usr/local/bin',
      'var',
      'var/cache',
      'var/lib',
    ])
  })
})

describe('debug installs', { timeout: TEST_TIMEOUT_MS }, () => {
  it('install --debug: psql reaches the embedded database on the debug port, and system info says where', async () => {
    const root = newRoot()
    const result = await system(['install', '--root', root, '--debug'])
    expect(result.code, result.stderr).toBe(EXIT.OK)
    expect(readEnv(root).SERVICE_DEBUG_DB_LISTEN).toBe('127.0.0.1:5432')
    // 5432 is this machine's PostgreSQL: the flag (beating the env file) picks a free port instead.
    const server = startInstalled(root, ['--debug-db-listen', '127.0.0.1:0'])
    await server.waitForReady(SERVER_START_TIMEOUT_MS)
    const warning = await server.waitForLog(
      /WARN .*DEBUG INSTALL: the embedded database accepts PostgreSQL connections WITHOUT A PASSWORD/,
    )
    const port = Number(/listen=127\.0\.0\.1:(\d+)/.exec(warning)![1])
    expect((await systemInfo(server)).debugDatabaseListen).toBe(`127.0.0.1:${port}`)
    const psql = spawnSync(
      'psql',
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-Atc',
        'select count(*) from schema_migrations',
      ],
      {
        encoding: 'utf8',
        env: { PATH: '/usr/bin:/bin', PGCONNECT_TIMEOUT: '10' },
        timeout: 30_000,
      },
    )
    expect(psql.status, psql.stderr).toBe(0)
    expect(Number(psql.stdout.trim())).toBeGreaterThan(0)
    const { restPort, grpcPort } = await server.listening()
    expect(listeningPorts(server.pid)).toEqual([restPort, grpcPort, port].sort((a, b) => a - b))
    expect((await server.stop()).code).toBe(0)
  })

  it('a normal install listens on REST and gRPC only, and system info reports no debug database', async () => {
    const root = newRoot()
    expect((await system(['install', '--root', root])).code).toBe(EXIT.OK)
    const server = startInstalled(root)
    await server.waitForReady(SERVER_START_TIMEOUT_MS)
    const { restPort, grpcPort } = await server.listening()
    expect(listeningPorts(server.pid)).toEqual([restPort, grpcPort].sort((a, b) => a - b))
    expect((await systemInfo(server)).debugDatabaseListen).toBe('')
    expect(server.hasLogged(/DEBUG INSTALL/)).toBe(false)
    expect((await server.stop()).code).toBe(0)
  })

  it('the debug port is refused with an external database: serve exits 2, install --debug --db-url exits 2', async () => {
    const serve = await runCli(sandbox, [
      'serve',
      '--db-url',
      'postgres://postgres@127.0.0.1:5432/postgres',
      '--debug-db-listen',
      '5433',
    ])
    expect(serve.code).toBe(EXIT.BAD_INPUT)
    expect(serve.stderr).toBe(
      'memsvc: --debug-db-listen: only for the embedded database; with --db-url connect to that PostgreSQL directly\n',
    )
    const install = await system(['install', '--root', newRoot(), '--debug', '--db-url', 'postgres://db/memsvc'])
    expect(install.code).toBe(EXIT.BAD_INPUT)
    expect(install.stderr).toBe('error: --debug exposes the embedded database; with --db-url there is none to expose\n')
  })
})
