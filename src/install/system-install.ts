// `memsvc system install` / `uninstall`: puts this executable and its licences under a
// prefix as a systemd service. Every change is a Step, so --dry-run prints exactly what a
// real run does. --root DIR stages the whole tree under DIR (tests, image builds): the
// paths inside the unit stay the target host's, and nothing touches the host's users or
// systemd, because those belong to the host the tree is for.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { CliError, EXIT_BAD_INPUT, EXIT_FAILED } from '../cli/exit-codes.js'
import { DEFAULT_DEBUG_DB_LISTEN, generateMetricsSecret, parseEnvFile, renderEnvFile } from './env-file.js'
import { activateRelease, currentLink, currentRelease, EXECUTABLE_NAME, type ReleaseFiles } from './releases.js'
import { renderUnit, UNIT_NAME } from './unit-file.js'

export const DEFAULT_PREFIX = '/opt/memsvc'
export const DEFAULT_USER = 'memsvc'
export const DEFAULT_REST_PORT = 8080
export const DEFAULT_GRPC_PORT = 9090
const DEFAULT_SHUTDOWN_TIMEOUT_SEC = 30
const BIN_LINK = '/usr/local/bin/memsvc'
const ENV_FILE = '/etc/memsvc/memsvc.env'
const STATE_DIR = '/var/lib/memsvc'
/** The unit's CacheDirectory= (the extracted HTTP addon); systemd makes it, uninstall removes it. */
const CACHE_DIR = '/var/cache/memsvc'
const UNIT_DIR = '/etc/systemd/system'
const MANIFEST = 'install.json'
const STATE_MODE = 0o700
const ENV_FILE_MODE = 0o640
const ENV_DIR_MODE = 0o750
const UNIT_MODE = 0o644
const DIR_MODE = 0o755

export interface InstallOptions {
  root: string
  prefix: string
  user: string
  restPort?: number
  grpcPort?: number
  dbUrl?: string
  debug: boolean
  dryRun: boolean
  version: string
  files: ReleaseFiles
}

export interface UninstallOptions {
  root: string
  prefix: string
  purge: boolean
  dryRun: boolean
}

/** What install created, so that uninstall removes exactly that (install.json under the prefix). */
export interface Manifest {
  version: string
  user: string
  userCreated: boolean
  unit: string
  binLink: string
  envFile: string
  stateDir: string
}

export interface Step {
  say: string
  run?: () => void
}

/** Host paths of one install, and where they are written (under --root when staging). */
class Layout {
  constructor(
    readonly root: string,
    readonly prefix: string,
  ) {}
  /** Where a host path is written. */
  at(hostPath: string): string {
    return this.root === '/' ? hostPath : path.join(this.root, hostPath)
  }
  get staging(): boolean {
    return this.root !== '/'
  }
  readonly unit = path.join(UNIT_DIR, UNIT_NAME)
  readonly binLink = BIN_LINK
  readonly envFile = ENV_FILE
  readonly stateDir = STATE_DIR
  get manifest(): string {
    return path.join(this.prefix, MANIFEST)
  }
}

/** Creates dir with `mode` (set again: umask and an earlier run may differ) and any missing parents 0755. */
function ensureDir(dir: string, mode: number): void {
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: DIR_MODE })
  fs.mkdirSync(dir, { recursive: true, mode })
  fs.chmodSync(dir, mode)
}

function userExists(user: string): boolean {
  return spawnSync('getent', ['passwd', user], { stdio: 'ignore' }).status === 0
}

function idsOf(user: string): { uid: number; gid: number } {
  const line = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).trim()
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/** systemd is PID 1 here (sd_booted): the check systemd's own tools use. */
function systemdRunning(): boolean {
  return fs.existsSync('/run/systemd/system')
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] })
  if (result.status !== 0)
    throw new CliError(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`,
      EXIT_FAILED,
    )
}

function readManifest(layout: Layout): Manifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(layout.at(layout.manifest), 'utf8')) as Manifest
  } catch {
    return undefined
  }
}

function chownUnlessStaging(
  layout: Layout,
  target: string,
  owner: () => { uid: number; gid: number },
  what: 'user' | 'group',
): void {
  if (layout.staging) return
  const ids = owner()
  fs.chownSync(target, what === 'user' ? ids.uid : 0, ids.gid)
}

export function planInstall(options: InstallOptions): { steps: Step[]; notes: string[] } {
  if (options.debug && options.dbUrl)
    throw new CliError('--debug exposes the embedded database; with --db-url there is none to expose', EXIT_BAD_INPUT)
  const layout = new Layout(options.root, options.prefix)
  const previous = readManifest(layout)
  const envPath = layout.at(layout.envFile)
  const existingEnv = fs.existsSync(envPath) ? parseEnvFile(fs.readFileSync(envPath, 'utf8')) : undefined
  const notes: string[] = []
  const steps: Step[] = []
  // The env file is the truth once it exists: the unit's capabilities and stop timeout follow it.
  const fromEnv = (name: string) => (existingEnv?.[name] ? Number(existingEnv[name]) : undefined)
  const restPort = fromEnv('SERVICE_REST_PORT') ?? options.restPort ?? DEFAULT_REST_PORT
  const grpcPort = fromEnv('SERVICE_GRPC_PORT') ?? options.grpcPort ?? DEFAULT_GRPC_PORT
  const shutdownTimeoutSec = fromEnv('SERVICE_SHUTDOWN_TIMEOUT_SEC') ?? DEFAULT_SHUTDOWN_TIMEOUT_SEC
  const owner = () => idsOf(options.user)

  let userCreated = previous?.userCreated ?? false
  if (layout.staging) {
    steps.push({
      say:
        `skip creating system user ${options.user}: staging into ${options.root} ` +
        `(users belong to the target host; files stay owned by ${process.getuid?.() ?? '?'})`,
    })
  } else if (userExists(options.user)) {
    steps.push({ say: `system user ${options.user} exists` })
  } else {
    userCreated = true
    steps.push({
      say:
        `create system user ${options.user} ` +
        `(useradd --system --user-group --home-dir ${layout.stateDir} --no-create-home --shell /usr/sbin/nologin)`,
      run: () =>
        run('useradd', [
          '--system',
          '--user-group',
          '--home-dir',
          layout.stateDir,
          '--no-create-home',
          '--shell',
          '/usr/sbin/nologin',
          options.user,
        ]),
    })
  }

  const executable = path.join(currentLink(options.prefix), EXECUTABLE_NAME)
  const running = currentRelease(layout.at(options.prefix))
  const was =
    running && path.basename(running) !== options.version ? ` (was ${path.basename(running)}, kept for rollback)` : ''
  const release = path.join(options.prefix, 'releases', options.version)
  steps.push({
    say: `install ${options.version} as ${release} (executable + licenses/) and point ${currentLink(options.prefix)} at it${was}`,
    run: () => {
      ensureDir(layout.at(options.prefix), DIR_MODE)
      const activated = activateRelease(layout.at(options.prefix), options.version, options.files)
      if (activated.previous) {
        const rollbackTo = path.relative(layout.at(options.prefix), activated.previous)
        notes.push(
          `previous release kept: roll back with  ln -sfn ${rollbackTo} ${currentLink(options.prefix)} && systemctl restart memsvc`,
        )
      }
    },
  })
  steps.push({
    say: `link ${layout.binLink} -> ${executable}`,
    run: () => {
      const link = layout.at(layout.binLink)
      ensureDir(path.dirname(link), DIR_MODE)
      const existing = fs.lstatSync(link, { throwIfNoEntry: false })
      if (existing && !existing.isSymbolicLink())
        throw new CliError(`${layout.binLink} exists and is not a symlink; move it away first`, EXIT_FAILED)
      const temporary = `${link}.memsvc-new`
      fs.rmSync(temporary, { force: true })
      fs.symlinkSync(executable, temporary)
      fs.renameSync(temporary, link)
    },
  })
  steps.push({
    say: `create the state directory ${layout.stateDir} (0700, owner ${options.user}; kept on upgrade)`,
    run: () => {
      const dir = layout.at(layout.stateDir)
      ensureDir(dir, STATE_MODE)
      chownUnlessStaging(layout, dir, owner, 'user')
    },
  })
  if (existingEnv) {
    steps.push({ say: `keep ${layout.envFile} (never overwritten)` })
    const ignored = [
      options.restPort !== undefined && options.restPort !== restPort && '--rest-port',
      options.grpcPort !== undefined && options.grpcPort !== grpcPort && '--grpc-port',
      options.dbUrl !== undefined && options.dbUrl !== existingEnv.DB_URL && '--db-url',
      options.debug && !existingEnv.SERVICE_DEBUG_DB_LISTEN && '--debug',
    ].filter(Boolean)
    if (ignored.length > 0)
      notes.push(`${ignored.join(', ')} not applied: ${layout.envFile} exists and is kept; edit it instead`)
  } else {
    const database = options.dbUrl ? 'DB_URL' : 'embedded database'
    const debugPort = options.debug ? `, DEBUG database port ${DEFAULT_DEBUG_DB_LISTEN}` : ''
    steps.push({
      say:
        `write ${layout.envFile} (0640, root:${options.user}): ` +
        `ports ${restPort}/${grpcPort}, ${database}, a new metrics secret${debugPort}`,
      run: () => {
        ensureDir(path.dirname(envPath), ENV_DIR_MODE)
        chownUnlessStaging(layout, path.dirname(envPath), owner, 'group')
        const text = renderEnvFile({
          restPort,
          grpcPort,
          shutdownTimeoutSec,
          dbUrl: options.dbUrl,
          debug: options.debug,
          metricsSecret: generateMetricsSecret(),
        })
        // Written under a temp name with its final mode, so the secret is never readable by others.
        const temporary = `${envPath}.memsvc-new`
        fs.writeFileSync(temporary, text, { mode: ENV_FILE_MODE })
        fs.chmodSync(temporary, ENV_FILE_MODE)
        chownUnlessStaging(layout, temporary, owner, 'group')
        fs.renameSync(temporary, envPath)
      },
    })
  }
  steps.push({
    say: `write ${layout.unit} (Type=notify, ${needsCapabilityText(restPort, grpcPort)})`,
    run: () => {
      const unit = layout.at(layout.unit)
      ensureDir(path.dirname(unit), DIR_MODE)
      fs.writeFileSync(
        unit,
        renderUnit({
          version: options.version,
          executable,
          envFile: layout.envFile,
          user: options.user,
          restPort,
          grpcPort,
          shutdownTimeoutSec,
        }),
        { mode: UNIT_MODE },
      )
      fs.chmodSync(unit, UNIT_MODE)
    },
  })
  const manifest: Manifest = {
    version: options.version,
    user: options.user,
    userCreated,
    unit: layout.unit,
    binLink: layout.binLink,
    envFile: layout.envFile,
    stateDir: layout.stateDir,
  }
  steps.push({
    say: `record the install in ${layout.manifest}`,
    run: () =>
      fs.writeFileSync(layout.at(layout.manifest), `${JSON.stringify(manifest, null, 2)}\n`, { mode: UNIT_MODE }),
  })
  if (!layout.staging && systemdRunning()) {
    steps.push({ say: 'systemctl daemon-reload', run: () => run('systemctl', ['daemon-reload']) })
    steps.push({ say: `systemctl enable ${UNIT_NAME}`, run: () => run('systemctl', ['enable', '--quiet', UNIT_NAME]) })
    steps.push({
      say: `systemctl restart ${UNIT_NAME} (starts it; an upgrade restarts into the new release)`,
      run: () => run('systemctl', ['restart', UNIT_NAME]),
    })
  } else {
    notes.push(
      layout.staging
        ? `staged into ${options.root}; on the target host: systemctl daemon-reload && systemctl enable --now memsvc`
        : 'systemd is not running here: start the service with  systemctl enable --now memsvc  once it is',
    )
  }
  return { steps, notes }
}

function readLink(file: string): string | undefined {
  try {
    return fs.readlinkSync(file)
  } catch {
    return undefined
  }
}

function needsCapabilityText(restPort: number, grpcPort: number): string {
  return [restPort, grpcPort].some((port) => port > 0 && port < 1024)
    ? 'CAP_NET_BIND_SERVICE for a port below 1024'
    : 'no capabilities'
}

export function planUninstall(options: UninstallOptions): { steps: Step[]; notes: string[] } {
  const layout = new Layout(options.root, options.prefix)
  const manifest = readManifest(layout)
  if (!manifest)
    throw new CliError(
      `memsvc is not installed under ${layout.at(options.prefix)} (no ${MANIFEST}); pass the --prefix (and --root) it was installed with`,
      EXIT_FAILED,
    )
  const steps: Step[] = []
  const notes: string[] = []
  const remove = (hostPath: string, what: string): Step => ({
    say: `remove ${what} ${hostPath}`,
    run: () => fs.rmSync(layout.at(hostPath), { recursive: true, force: true }),
  })
  if (!layout.staging && systemdRunning()) {
    steps.push({
      say: `systemctl disable --now ${UNIT_NAME}`,
      run: () => run('systemctl', ['disable', '--now', '--quiet', UNIT_NAME]),
    })
  }
  steps.push(remove(manifest.unit, 'the unit'))
  if (!layout.staging && systemdRunning())
    steps.push({ say: 'systemctl daemon-reload', run: () => run('systemctl', ['daemon-reload']) })
  const link = readLink(layout.at(manifest.binLink))
  if (link === undefined || link.startsWith(`${options.prefix}/`)) steps.push(remove(manifest.binLink, 'the link'))
  else notes.push(`${manifest.binLink} points elsewhere (${link}); left alone`)
  steps.push(remove(options.prefix, 'the releases and licences under'))
  if (fs.existsSync(layout.at(CACHE_DIR))) steps.push(remove(CACHE_DIR, 'the addon cache'))
  if (options.purge) {
    steps.push(remove(path.dirname(manifest.envFile), 'the settings (metrics secret, DB_URL) in'))
    steps.push(remove(manifest.stateDir, 'ALL DATA (embedded database, encryption key, certificates) in'))
    if (manifest.userCreated && !layout.staging)
      steps.push({ say: `remove system user ${manifest.user}`, run: () => run('userdel', [manifest.user]) })
  } else {
    notes.push(`kept ${manifest.envFile} and ${manifest.stateDir} (data); "system uninstall --purge" removes them`)
  }
  return { steps, notes }
}

/** Prints each step, and runs it unless dry-run. */
export function runSteps(steps: Step[], dryRun: boolean, say: (line: string) => void): void {
  for (const step of steps) {
    say(`${dryRun ? 'would ' : ''}${step.say}`)
    if (!dryRun) step.run?.()
  }
}
