// memsvc system info|health|drain
import type { Argv } from 'yargs'
import { MemsvcError } from '../../../sdk/src/index.js'
import { HealthCheckResponse_ServingStatus as ServingStatus } from '../../generated/grpc/health/v1/health.js'
import type { SystemInfo } from '../../generated/memsvc/v1/system.js'
import { DEFAULT_DRAIN_TIMEOUT_SEC, MAX_DRAIN_TIMEOUT_SEC } from '../../validation/limits.js'
import type { ClientSettings } from '../client-settings.js'
import { clientHandler, commandGroup, withOptions } from '../command.js'
import { type Connection, runAuthenticated, withConnection } from '../connection.js'
import { CliError, EXIT_FAILED } from '../exit-codes.js'
import { parseChoice, parseInteger } from '../option-parsing.js'
import { print, yesNo } from '../output.js'
import { renderFields } from '../table.js'
import { SYSTEM_INSTALL_COMMANDS } from './system-install.js'

const HEALTH_DEADLINE_MS = 10_000
/** Extra time the call gets beyond the drain timeout, for the server to answer. */
const DRAIN_DEADLINE_MARGIN_MS = 30_000
const PROBES = ['LIVE', 'READY', 'STARTUP'] as const
type Probe = (typeof PROBES)[number]

const HEALTH_OPTIONS = {
  probe: {
    type: 'string',
    describe: 'Which answer decides the exit code: live (the server answers), ready (SERVING), startup (past STARTING)',
    default: 'ready',
    requiresArg: true,
  },
  service: {
    type: 'string',
    describe: 'grpc.health.v1 service name to check (default "": the whole server)',
    default: '',
    requiresArg: true,
  },
} as const

const DRAIN_OPTIONS = {
  reason: { type: 'string', describe: 'Why; recorded in the server log', requiresArg: true },
  wait: {
    type: 'boolean',
    describe: 'Return only once in-flight work has finished (or --timeout passed); exit 1 if it did not',
  },
  timeout: {
    type: 'string',
    describe: `Seconds in-flight work may take to finish, 0-${MAX_DRAIN_TIMEOUT_SEC} (server default ${DEFAULT_DRAIN_TIMEOUT_SEC})`,
    requiresArg: true,
  },
} as const

/** How this command trusts the server, for people checking what they talk to. */
export function describeTrust(settings: ClientSettings): string {
  if (!settings.server.tls) return 'plaintext (no TLS)'
  if (settings.insecure) return 'TLS, NOT verified (--insecure)'
  if (settings.pin) return `TLS, pinned certificate SHA-256 ${settings.pin}`
  return 'TLS, verified against the system CAs'
}

function infoFields(settings: ClientSettings, info: SystemInfo): Array<[string, string | undefined]> {
  const license = info.license
  return [
    ['server', settings.server.url],
    ['connection', describeTrust(settings)],
    ['version', info.version],
    [
      'runtime',
      info.runtime
        ? `Node.js ${info.runtime.node}, OpenSSL ${info.runtime.openssl}, uWebSockets.js ${info.runtime.uws}`
        : undefined,
    ],
    ['state', info.lifecycleState],
    ['initialized', yesNo(info.initialized)],
    ['storage', info.storage],
    ['tls', yesNo(info.tlsEnabled)],
    [
      'debug database',
      info.debugDatabaseListen ? `${info.debugDatabaseListen} (psql, no password: debug install)` : undefined,
    ],
    ['licenses', license ? `${license.directory}${license.present ? '' : ' (MISSING)'}` : undefined],
    ['product licence', license?.productLicense],
    ['third-party packages', license ? String(license.thirdPartyPackages) : undefined],
  ]
}

const info = clientHandler(async (_argv, settings) => {
  const systemInfo = await withConnection(settings, { authenticated: false }, (connection) =>
    connection.run((api) => api.system.info({})),
  )
  print(settings.output, {
    json: { server: settings.server.url, ...systemInfo },
    text: () => renderFields(infoFields(settings, systemInfo)),
  })
})

/** The lifecycle state from system info; a server that refuses new calls is draining or quiesced. */
async function lifecycleState(connection: Connection): Promise<string> {
  try {
    const systemInfo = await connection.run((api) => api.system.info({}, { deadlineMs: HEALTH_DEADLINE_MS }))
    return systemInfo.lifecycleState
  } catch (error) {
    if (error instanceof CliError) throw error
    if (MemsvcError.is(error) && /draining|quiesced/i.test(error.message))
      return /quiesced/i.test(error.message) ? 'QUIESCED' : 'DRAINING'
    return 'UNKNOWN'
  }
}

const health = clientHandler(async (argv, settings) => {
  const probe: Probe = parseChoice(argv.probe, 'probe', PROBES)
  const service = String(argv.service ?? '')
  const result = await withConnection(settings, { authenticated: false }, async (connection) => {
    const response = await connection.run((api) => api.health.check({ service }, { deadlineMs: HEALTH_DEADLINE_MS }))
    const state = await lifecycleState(connection)
    return { status: response.status, state }
  })
  const ready = result.status === ServingStatus.SERVING
  // SERVING implies started; otherwise only the state can tell.
  const started = ready || (result.state !== 'STARTING' && result.state !== 'UNKNOWN')
  const report = {
    server: settings.server.url,
    service,
    live: true,
    ready,
    started,
    servingStatus: result.status,
    state: result.state,
  }
  print(settings.output, {
    json: report,
    text: () =>
      renderFields([
        ['server', settings.server.url],
        ['service', service || undefined],
        ['live', 'yes'],
        ['ready', `${yesNo(ready)} (${result.status})`],
        ['started', yesNo(started)],
        ['state', result.state],
      ]),
  })
  const passed = probe === 'LIVE' || (probe === 'READY' ? ready : started)
  if (!passed)
    throw new CliError(
      `${settings.server.url} is not ${probe === 'READY' ? 'ready' : 'started'} (${result.status}, state ${result.state})`,
      EXIT_FAILED,
    )
})

const drain = clientHandler(async (argv, settings) => {
  const timeoutSec =
    argv.timeout === undefined
      ? undefined
      : parseInteger(argv.timeout, 'timeout', { min: 0, max: MAX_DRAIN_TIMEOUT_SEC })
  const request = { timeoutSec, reason: argv.reason as string | undefined, waitForQuiesce: argv.wait === true }
  const deadlineMs = (timeoutSec ?? MAX_DRAIN_TIMEOUT_SEC) * 1000 + DRAIN_DEADLINE_MARGIN_MS
  const result = await runAuthenticated(settings, (api) => api.admin.drain(request, { deadlineMs }))
  print(settings.output, {
    json: { server: settings.server.url, ...result },
    text: () =>
      renderFields([
        ['server', settings.server.url],
        ['state', result.state],
        ['quiesced', yesNo(result.quiesced)],
        ['message', result.message],
      ]),
  })
  if (request.waitForQuiesce && !result.quiesced)
    throw new CliError(`${settings.server.url} did not quiesce in time: ${result.message}`, EXIT_FAILED)
})

export function systemCommand(yargs: Argv): Argv {
  return commandGroup(yargs, 'system', 'Server information, health and drain; install as a systemd service', [
    {
      command: 'info',
      describe: 'Version, lifecycle state, storage, licences (no API key needed)',
      builder: (command) =>
        command
          .example('$0 system info', 'what is running there?')
          .example('$0 system info --output json | jq -r .version', 'the server version'),
      handler: info,
    },
    {
      command: 'health',
      describe: 'Check grpc.health.v1 and the lifecycle state; exits non-zero when not serving (no API key needed)',
      builder: (command) =>
        withOptions(command, HEALTH_OPTIONS)
          .example('$0 system health', 'exit 0 only when the server is ready')
          .example('$0 system health --probe live', 'exit 0 whenever the server answers')
          .example('$0 system health --service memsvc.v1.ApiKeyService', 'one service'),
      handler: health,
    },
    {
      command: 'drain',
      describe: 'Stop the server taking new work (readiness and gRPC health flip first); admins',
      builder: (command) =>
        withOptions(command, DRAIN_OPTIONS)
          .example('$0 system drain --reason "maintenance"', 'start draining and return at once')
          .example('$0 system drain --wait --timeout 60', 'wait up to 60 s for in-flight work to finish'),
      handler: drain,
    },
    ...SYSTEM_INSTALL_COMMANDS,
  ])
}
