// The fault suite's figures: each scenario appends one row to a file the global setup
// chose (test files run in separate workers), and the global teardown prints them as
// one table the closing note can quote.
import fs from 'node:fs'
import { inject } from 'vitest'

export interface FigureRow {
  scenario: string
  /** Operations attempted. */
  tried: number
  /** Operations that got an answer they should not have (5xx other than the expected 503, hangs, resets). */
  failed: number
  /** Acknowledged writes missing afterwards. */
  lost: number
  ms: number
  /** Anything else worth quoting (latencies, flip times). */
  notes?: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    faultFiguresFile: string
  }
}

export function recordFigures(row: FigureRow): void {
  const file = inject('faultFiguresFile')
  if (!file) return
  fs.appendFileSync(file, `${JSON.stringify({ ...row, ms: Math.round(row.ms) })}\n`)
}

export function formatFigures(rows: FigureRow[]): string {
  const header = ['scenario', 'tried', 'failed', 'lost', 'time', 'notes']
  const body = rows.map((row) => [
    row.scenario,
    String(row.tried),
    String(row.failed),
    String(row.lost),
    `${(row.ms / 1000).toFixed(1)} s`,
    row.notes ?? '',
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)))
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...body.map(line)].join('\n')
}
