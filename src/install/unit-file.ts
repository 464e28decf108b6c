// The systemd unit `memsvc system install` writes (and the release bundle ships).
// Type=notify: the server runs systemd-notify(1) at READY and at the start of a drain
// (src/runtime/systemd-notify.ts), hence NotifyAccess=all. The hardening is what
// `systemd-analyze security` rates; the lines left out, and why, are in the README.

/** Ports below this need CAP_NET_BIND_SERVICE. */
const FIRST_UNPRIVILEGED_PORT = 1024
/** systemd waits this much longer than the server's own drain before it sends SIGKILL. */
const STOP_MARGIN_SEC = 30
/** The first start creates the embedded database, which takes a few seconds on a slow disk. */
const START_TIMEOUT_SEC = 120
const RESTART_DELAY_SEC = 5

export const UNIT_NAME = 'memsvc.service'

export interface UnitSettings {
  version: string
  /** Absolute paths on the target host (not under a staging root). */
  executable: string
  envFile: string
  user: string
  restPort: number
  grpcPort: number
  shutdownTimeoutSec: number
}

export function needsBindCapability(settings: Pick<UnitSettings, 'restPort' | 'grpcPort'>): boolean {
  return [settings.restPort, settings.grpcPort].some((port) => port > 0 && port < FIRST_UNPRIVILEGED_PORT)
}

export function renderUnit(settings: UnitSettings): string {
  const lowPort = needsBindCapability(settings)
  // PrivateUsers= maps the service into a user namespace where no capability reaches the host's ports.
  const capabilityLines = lowPort
    ? ['CapabilityBoundingSet=CAP_NET_BIND_SERVICE', 'AmbientCapabilities=CAP_NET_BIND_SERVICE']
    : ['CapabilityBoundingSet=', 'AmbientCapabilities=', 'PrivateUsers=yes']
  return [
    `# memsvc ${settings.version}: written by "memsvc system install" and rewritten by every install.`,
    '# Settings belong in the environment file; local changes to the unit in a drop-in (systemctl edit memsvc).',
    '[Unit]',
    'Description=memsvc memory service (REST and gRPC)',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=notify',
    'NotifyAccess=all',
    `User=${settings.user}`,
    `Group=${settings.user}`,
    `EnvironmentFile=${settings.envFile}`,
    `ExecStart=${settings.executable} serve`,
    'Restart=on-failure',
    `RestartSec=${RESTART_DELAY_SEC}s`,
    `TimeoutStartSec=${START_TIMEOUT_SEC}s`,
    `TimeoutStopSec=${settings.shutdownTimeoutSec + STOP_MARGIN_SEC}s`,
    'KillSignal=SIGTERM',
    // SIGTERM to the server only (it drains); anything left after TimeoutStopSec gets SIGKILL.
    'KillMode=mixed',
    'StateDirectory=memsvc',
    'StateDirectoryMode=0700',
    'CacheDirectory=memsvc',
    'CacheDirectoryMode=0700',
    'UMask=0077',
    'NoNewPrivileges=yes',
    'ProtectSystem=strict',
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    'PrivateMounts=yes',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'ProtectProc=invisible',
    // Only /proc/<pid>: checked by serving READY (and /metrics) under a /proc mounted subset=pid.
    'ProcSubset=pid',
    'RestrictNamespaces=yes',
    'RestrictRealtime=yes',
    'RestrictSUIDSGID=yes',
    'LockPersonality=yes',
    'RemoveIPC=yes',
    'KeyringMode=private',
    'DevicePolicy=closed',
    ...capabilityLines,
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6',
    'SystemCallArchitectures=native',
    'SystemCallFilter=@system-service',
    'SystemCallFilter=~@privileged @resources',
    // A filtered call fails (Node treats e.g. a refused setrlimit as harmless) instead of killing the server.
    'SystemCallErrorNumber=EPERM',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n')
}
