// memsvc system install|uninstall: local commands (no server, no API key) that set this
// executable up as a systemd service, or take it away again.
import fs from 'node:fs'
import path from 'node:path'
import { LICENSES_DIR, MODELS_DIR } from '../../install/releases.js'
import {
  DEFAULT_GRPC_PORT,
  DEFAULT_PREFIX,
  DEFAULT_REST_PORT,
  DEFAULT_USER,
  planInstall,
  planUninstall,
  runSteps,
} from '../../install/system-install.js'
import { installDir, isStandalone, VERSION } from '../../runtime/environment.js'
import { type Args, plainHandler, type Subcommand, withOptions } from '../command.js'
import { badInput } from '../exit-codes.js'
import { parseInteger } from '../option-parsing.js'
import { note } from '../output.js'

const MAX_PORT = 65535
const LOCATION_OPTIONS = {
  root: {
    type: 'string',
    describe: 'Stage the install under this directory instead of / (no user, no systemctl)',
    default: '/',
    requiresArg: true,
  },
  prefix: { type: 'string', describe: 'Where releases and licences go', default: DEFAULT_PREFIX, requiresArg: true },
  'dry-run': { type: 'boolean', describe: 'Print every step, change nothing' },
} as const

const INSTALL_OPTIONS = {
  user: {
    type: 'string',
    describe: 'System user the service runs as (created if missing)',
    default: DEFAULT_USER,
    requiresArg: true,
  },
  'rest-port': {
    type: 'string',
    describe: `REST port written to the env file (default ${DEFAULT_REST_PORT})`,
    requiresArg: true,
  },
  'grpc-port': {
    type: 'string',
    describe: `gRPC port written to the env file (default ${DEFAULT_GRPC_PORT})`,
    requiresArg: true,
  },
  'db-url': {
    type: 'string',
    describe: 'PostgreSQL URL written to the env file (default: the embedded database)',
    requiresArg: true,
  },
  debug: {
    type: 'boolean',
    describe: 'Debug install: the embedded database also listens on 127.0.0.1:5432 for psql (no password)',
  },
} as const

const UNINSTALL_OPTIONS = {
  purge: {
    type: 'boolean',
    describe: 'Also delete the settings, ALL DATA in /var/lib/memsvc and the user install created',
  },
} as const

function absolute(flag: string, value: unknown): string {
  const text = String(value)
  if (!path.isAbsolute(text)) throw badInput(`--${flag} ${text}: must be an absolute path`)
  return path.resolve(text)
}

const optionalPort = (value: unknown, flag: string) =>
  value === undefined ? undefined : parseInteger(value, flag, { min: 1, max: MAX_PORT })

/** The models bundled beside the executable (a release made with --model), installed with it. */
function bundledModels(): string | undefined {
  const models = path.join(installDir, MODELS_DIR)
  return fs.existsSync(models) ? models : undefined
}

const install = plainHandler(async (argv: Args) => {
  if (!isStandalone)
    throw badInput(
      'system install installs the standalone memsvc executable; this one runs from source under node (npm run build)',
    )
  const licenses = path.join(installDir, LICENSES_DIR)
  if (!fs.existsSync(licenses))
    throw badInput(
      `${licenses} is missing: run install from the extracted release bundle (the executable with licenses/ beside it)`,
    )
  const dryRun = argv.dryRun === true
  const { steps, notes } = planInstall({
    root: absolute('root', argv.root),
    prefix: absolute('prefix', argv.prefix),
    user: String(argv.user),
    restPort: optionalPort(argv.restPort, 'rest-port'),
    grpcPort: optionalPort(argv.grpcPort, 'grpc-port'),
    dbUrl: argv.dbUrl === undefined ? undefined : String(argv.dbUrl),
    debug: argv.debug === true,
    dryRun,
    version: VERSION,
    files: { executable: process.execPath, licenses, models: bundledModels() },
  })
  runSteps(steps, dryRun, (line) => process.stdout.write(`${line}\n`))
  for (const line of notes) note(`note: ${line}`)
})

const uninstall = plainHandler(async (argv: Args) => {
  const dryRun = argv.dryRun === true
  const { steps, notes } = planUninstall({
    root: absolute('root', argv.root),
    prefix: absolute('prefix', argv.prefix),
    purge: argv.purge === true,
    dryRun,
  })
  runSteps(steps, dryRun, (line) => process.stdout.write(`${line}\n`))
  for (const line of notes) note(`note: ${line}`)
})

export const SYSTEM_INSTALL_COMMANDS: Subcommand[] = [
  {
    command: 'install',
    describe:
      'Install this executable as the systemd service memsvc (as root; a second run upgrades in place, keeping settings and data)',
    builder: (command) =>
      withOptions(command, LOCATION_OPTIONS, INSTALL_OPTIONS)
        .example('sudo ./memsvc system install', 'from the extracted release bundle')
        .example('sudo ./memsvc system install --dry-run', 'print every step, change nothing')
        .example('./memsvc system install --root /tmp/stage', 'stage the tree into a directory'),
    handler: install,
  },
  {
    command: 'uninstall',
    describe: 'Remove the service, the releases and the link; settings and data stay unless --purge',
    builder: (command) =>
      withOptions(command, LOCATION_OPTIONS, UNINSTALL_OPTIONS)
        .example('sudo memsvc system uninstall', 'keeps /etc/memsvc and /var/lib/memsvc')
        .example('sudo memsvc system uninstall --purge', 'removes everything, data included'),
    handler: uninstall,
  },
]
