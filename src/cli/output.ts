// What a command prints on stdout: one JSON document for scripts (--output json), or
// text for people. Notes meant for people only (hints, "more pages") go to stderr so
// that stdout stays parseable.
import type { OutputFormat } from './client-settings.js'

export interface Printable {
  /** The JSON document (proto3 JSON shape: camelCase, enums as names, times in epoch ms). */
  json: unknown
  /** The text for people, built only when needed. */
  text: () => string
}

export function print(format: OutputFormat, output: Printable): void {
  process.stdout.write(format === 'json' ? `${JSON.stringify(output.json, null, 2)}\n` : output.text())
}

/** A note for people on stderr; never mixed into stdout. */
export function note(message: string): void {
  process.stderr.write(`${message}\n`)
}

/** Epoch milliseconds as ISO 8601 UTC (seconds precision), or "" when absent. */
export function formatTime(epochMs: number | undefined): string {
  if (epochMs === undefined || epochMs === 0) return ''
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** key=value,key=value, sorted so equal sets print equally. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  return Object.entries(labels ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join(',')
}

export const yesNo = (value: boolean | undefined): string => (value === undefined ? '' : value ? 'yes' : 'no')

/** Lists written with every item and no tokens to follow, as `--all` returns them. */
export function pageNote(nextToken: string | undefined, what: string): void {
  if (nextToken) note(`more ${what}: repeat with --next-token ${nextToken} (or --all)`)
}
