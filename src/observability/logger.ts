import type { LogLevel } from '../config/server-config.js'

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export type LogFields = Record<string, unknown>

export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
}

export type LogSink = (line: string) => void

const stderrSink: LogSink = (line) => process.stderr.write(`${line}\n`)

/** Field names whose values are secret by nature; they are masked even if a caller passes them by mistake. */
const SECRET_FIELD = /key|secret|password|token|authorization|hash/i
/** Raw API keys, wherever they appear in a message. */
const RAW_KEY_PATTERN = /msk_[0-9A-Za-z]{20,}/g

const isSecretName = (name: string) => SECRET_FIELD.test(name) && !/(_id|Id|Prefix|prefix|count)$/.test(name)

/** Masks secret-named properties at any depth of an object field, not only at the top. */
const redactNested = (name: string, value: unknown) => (name !== '' && isSecretName(name) ? '[redacted]' : value)

function formatValue(name: string, value: unknown): string {
  if (isSecretName(name)) return '[redacted]'
  const text =
    value instanceof Error ? value.message : typeof value === 'string' ? value : JSON.stringify(value, redactNested)
  const safe = (text ?? 'undefined').replace(RAW_KEY_PATTERN, 'msk_[redacted]')
  return /[\s"=]/.test(safe) ? JSON.stringify(safe) : safe
}

/** One line per event: `time LEVEL message key=value …`, readable under journald and greppable. */
export function createLogger(level: LogLevel = 'info', sink: LogSink = stderrSink): Logger {
  const threshold = LEVEL_RANK[level]
  const write = (lineLevel: LogLevel, message: string, fields?: LogFields) => {
    if (LEVEL_RANK[lineLevel] < threshold) return
    let line = `${new Date().toISOString()} ${lineLevel.toUpperCase().padEnd(5)} ${message.replace(RAW_KEY_PATTERN, 'msk_[redacted]')}`
    if (fields) {
      for (const [name, value] of Object.entries(fields)) {
        if (value !== undefined) line += ` ${name}=${formatValue(name, value)}`
      }
    }
    sink(line)
  }
  return {
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  }
}
