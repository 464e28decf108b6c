// What a command prints on stdout: one JSON document for scripts (--output json), or
// text for people. Notes meant for people only (hints, "more pages") go to stderr so
// that stdout stays parseable.
import type { OutputFormat } from './client-settings.js'
import type { Page } from './command.js'

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

export interface Listing<Item> {
  /** The JSON field that holds the items: `{"spaces": [...]}`. */
  field: string
  /** The items in the "more …" note: "spaces", "API keys". */
  what: string
  /** An item's JSON, when it is not the message as received. */
  json?: (item: Item) => unknown
  /** The text for people: a table, or a line saying there is nothing. */
  text: (items: Item[]) => string
}

/** Prints the page a `list` command fetched; the token for the next page goes into the JSON, or into a note. */
export function printPage<Item>(format: OutputFormat, page: Page<Item>, listing: Listing<Item>): void {
  print(format, {
    json: {
      [listing.field]: listing.json ? page.items.map(listing.json) : page.items,
      ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    },
    text: () => listing.text(page.items),
  })
  if (format === 'table') pageNote(page.nextToken, listing.what)
}

/** A word as a POSIX shell reads it back unchanged: bare when it is safe, else in single quotes. */
export function shellQuote(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word
  return `'${word.replaceAll("'", `'\\''`)}'`
}
