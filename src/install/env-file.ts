// /etc/memsvc/memsvc.env: the service's settings (systemd EnvironmentFile=). Written once
// at the first install and never overwritten, so an operator's edits and the metrics
// secret generated then survive upgrades.
import crypto from 'node:crypto'

const METRICS_SECRET_BYTES = 32
export const DEFAULT_DEBUG_DB_LISTEN = '127.0.0.1:5432'

export interface EnvFileSettings {
  restPort: number
  grpcPort: number
  shutdownTimeoutSec: number
  dbUrl?: string
  debug: boolean
  /** Absent: the example file in the release bundle, which must not carry a real secret. */
  metricsSecret?: string
}

export function generateMetricsSecret(): string {
  return crypto.randomBytes(METRICS_SECRET_BYTES).toString('base64url')
}

/** systemd reads double-quoted values with backslash escapes and expands no variables. */
function quote(value: string): string {
  return `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`
}

export function renderEnvFile(settings: EnvFileSettings): string {
  return [
    '# memsvc settings, read by memsvc.service (EnvironmentFile=). Edit, then: systemctl restart memsvc',
    '# Every variable is listed in "memsvc serve --help". "memsvc system install" never overwrites this file.',
    `SERVICE_REST_PORT=${settings.restPort}`,
    `SERVICE_GRPC_PORT=${settings.grpcPort}`,
    `SERVICE_SHUTDOWN_TIMEOUT_SEC=${settings.shutdownTimeoutSec}`,
    'SERVICE_LOG_LEVEL=info',
    '',
    '# Data directory: systemd sets $STATE_DIRECTORY (/var/lib/memsvc) and the server uses it.',
    '# Without DB_URL the server runs on its embedded database there.',
    settings.dbUrl === undefined
      ? '#DB_URL="jdbc:postgresql://db.example:5432/memsvc?user=memsvc"'
      : `DB_URL=${quote(settings.dbUrl)}`,
    '#DB_PASSWORD=',
    '',
    '# GET /metrics requires this in the X-Service-Metrics-Key header.',
    settings.metricsSecret === undefined
      ? '#SERVICE_METRICS_SECRET=  (install generates one)'
      : `SERVICE_METRICS_SECRET=${quote(settings.metricsSecret)}`,
    '',
    '# Debug installs only: psql into the embedded database (no password). Never on a shared host.',
    settings.debug
      ? `SERVICE_DEBUG_DB_LISTEN=${DEFAULT_DEBUG_DB_LISTEN}`
      : `#SERVICE_DEBUG_DB_LISTEN=${DEFAULT_DEBUG_DB_LISTEN}`,
    '',
  ].join('\n')
}

/** The assignments of an env file (comments and blank lines skipped, quotes removed). */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (!match) continue
    const raw = match[2]!.trim()
    values[match[1]!] = /^".*"$/.test(raw) ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw
  }
  return values
}
