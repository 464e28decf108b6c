import type { Argv } from 'yargs'
import {
  ConfigError,
  EXIT_CONFIG_ERROR,
  extractSystemProperties,
  resolveServerConfig,
  SELF_SIGNED_HOSTNAMES_ENV,
  SERVER_OPTIONS,
  type ServerConfig,
} from '../config/server-config.js'
import { DataDirInUseError } from '../db/embedded.js'
import { STARTUP_KEEPALIVE_MS } from '../lifecycle/startup-keepalive.js'
import { StartupTimeline } from '../lifecycle/startup-timeline.js'
import { createLogger } from '../observability/logger.js'
import { DataDirPermissionError } from '../runtime/data-dir.js'
import { startIdleMemoryReclaimer } from '../runtime/idle-memory.js'
import { reexecOffsetMs } from '../runtime/small-host-process.js'
import { systemdNotifier } from '../runtime/systemd-notify.js'
import { EncryptionKeyError } from '../secrets/encryption-key.js'
import { installProcessGuards } from '../server/process-guards.js'
import { startServer } from '../server/server.js'

const EXIT_STARTUP_FAILED = 1
/** Each keepalive gives systemd three of its intervals more: one missed message is not fatal. */
const STARTUP_EXTENSION_USEC = STARTUP_KEEPALIVE_MS * 3 * 1000

export function describeServeOptions<T>(yargs: Argv<T>): Argv<T> {
  let configured = yargs
  for (const spec of SERVER_OPTIONS) {
    const envNote = spec.env ? ` [env ${spec.env}]` : ''
    const defaultNote =
      spec.defaultText ??
      (spec.defaultValue === undefined || spec.kind === 'boolean' ? undefined : String(spec.defaultValue))
    configured = configured.option(spec.flag, {
      type: spec.kind === 'boolean' ? 'boolean' : 'string',
      describe: `${spec.describe}${envNote}${defaultNote ? ` (default: ${defaultNote})` : ''}`,
      group: spec.group,
    }) as Argv<T>
  }
  return configured
    .epilog(
      [
        'Flags beat environment variables, which beat defaults.',
        `Self-signed certificate hostnames: ${SELF_SIGNED_HOSTNAMES_ENV} (default localhost,127.0.0.1,::1).`,
        'Without --db-url the server runs on an embedded single-node database in --data-dir.',
        'Probes: GET /livez, /readyz, /startupz (no credential). Metrics: GET /metrics with X-Service-Metrics-Key.',
      ].join('\n'),
    )
    .example('$0 serve', 'embedded database, TLS with a self-signed certificate')
    .example('$0 serve --db-url jdbc:postgresql://db:5432/memsvc --db-user memsvc --db-password …', 'PostgreSQL')
    .example('$0 serve --tls-disabled --rest-port 8080 --grpc-port 9090', 'plaintext')
}

/**
 * Runs the server until SIGTERM/SIGINT; exits 2 on a bad setting, 1 if start-up fails.
 * `mainStartMs` (performance.now()) is when main() began: start-up is timed from the process's start.
 */
export async function runServe(flags: Record<string, unknown>, rawArgs: string[], mainStartMs: number): Promise<void> {
  const { properties } = extractSystemProperties(rawArgs)
  let config: ServerConfig
  try {
    config = resolveServerConfig(flags, process.env, properties)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`memsvc: ${error.message}\n`)
      process.exit(EXIT_CONFIG_ERROR)
    }
    throw error
  }
  const log = createLogger(config.logLevel)
  installProcessGuards(log)
  // The server replaced itself once to set its memory (src/runtime/small-host-process.ts):
  // the first process's time counts too.
  const reexecMs = reexecOffsetMs()
  const startup = new StartupTimeline(-reexecMs)
  if (reexecMs > 0) startup.add('memory-reexec', -reexecMs, 0)
  startup.addProcessPhases(mainStartMs)
  // The command line and settings: yargs, the configuration, the logger.
  startup.add('cli', mainStartMs)
  // Type=notify units (memsvc system install): systemd counts the service started at READY, not at exec.
  const notify = systemdNotifier(log)
  let server: Awaited<ReturnType<typeof startServer>>
  try {
    server = await startServer(config, log, {
      startup,
      // Long start-up work that is progress moves systemd's start deadline (TimeoutStartSec) on.
      startupKeepalive: (status) => void notify(`EXTEND_TIMEOUT_USEC=${STARTUP_EXTENSION_USEC}`, `STATUS=${status}`),
    })
  } catch (error) {
    log.error('cannot start', { error: error as Error })
    process.exit(error instanceof DataDirPermissionError ? EXIT_CONFIG_ERROR : EXIT_STARTUP_FAILED)
  }
  const running = server
  // The heap a burst of load grew is given back once the server is idle again (src/runtime/idle-memory.ts).
  let idleMemory: { stop(): void } | undefined
  running.ready.then(
    () => {
      void notify('READY=1', `STATUS=ready: REST on port ${running.restPort}, gRPC on port ${running.grpcPort}`)
      idleMemory = startIdleMemoryReclaimer(log)
    },
    () => {},
  )
  running.ready.catch(async (error: unknown) => {
    log.error('cannot start', { error: error as Error })
    await running.shutdown('start-up failed').catch(() => {})
    process.exit(
      error instanceof DataDirInUseError || error instanceof EncryptionKeyError
        ? EXIT_CONFIG_ERROR
        : EXIT_STARTUP_FAILED,
    )
  })
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log.warn('second signal: exiting now', { signal })
      process.exit(EXIT_STARTUP_FAILED)
    }
    signalled = true
    idleMemory?.stop()
    void notify('STOPPING=1', `STATUS=draining after ${signal}`)
    void running.shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error('shutdown failed', { error: error as Error })
        process.exit(EXIT_STARTUP_FAILED)
      },
    )
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
}
