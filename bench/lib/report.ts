// One report per run: a flat list of rows (what the table shows and what the smoke test
// checks), plus the details behind them. Written as JSON (results/*.json, gitignored)
// and Markdown (results/latest.md, meant to be committed).
import fs from 'node:fs'
import path from 'node:path'
import type { Comparison, SoakResult } from '../scenarios/types.js'
import type { MachineLoad } from './machine.js'

export interface ReportRow {
  id: string
  measure: string
  /** memsvc's number: a rate per second, milliseconds or MiB. */
  value: number
  unit: '/s' | 'ms' | 'MiB' | 'ratio'
  floor?: string
  floorValue?: number
  ratio?: number
  target?: number
  pass?: boolean
  p50Ms?: number
  p99Ms?: number
  floorP50Ms?: number
  floorP99Ms?: number
  /** CPU µs per request of the server under test (the INSERT floor: of its client). */
  cpuUs?: number
  floorCpuUs?: number
  notes?: string[]
}

export interface BenchReport {
  startedAt: string
  finishedAt: string
  complete: boolean
  mode: string
  command: string
  machine: { before: MachineLoad; after: MachineLoad; cpus: number; cpuModel: string; pinned: string }
  versions: Record<string, string>
  rows: ReportRow[]
  comparisons: Comparison[]
  soaks: SoakResult[]
  /** Markdown paragraphs after the table (the memory benchmark's method and caveats). */
  extra?: string[]
}

export function comparisonRow(comparison: Comparison): ReportRow {
  return {
    id: comparison.id,
    measure: comparison.measure,
    value: comparison.product.rate,
    unit: '/s',
    floor: comparison.floor,
    floorValue: comparison.floorResult.rate,
    ratio: comparison.ratio,
    target: comparison.target,
    pass: comparison.ratio >= comparison.target && comparison.product.errors === 0,
    p50Ms: comparison.product.p50Ms,
    p99Ms: comparison.product.p99Ms,
    floorP50Ms: comparison.floorResult.p50Ms,
    floorP99Ms: comparison.floorResult.p99Ms,
    cpuUs: comparison.product.cpuUsPerRequest,
    floorCpuUs: comparison.floorResult.cpuUsPerRequest,
    notes: comparison.notes,
  }
}

export function soakRow(soak: SoakResult): ReportRow {
  const first = soak.samples[0]?.rate ?? 0
  return {
    id: soak.id,
    measure: soak.measure,
    value: Math.min(...soak.samples.map((sample) => sample.rate)),
    unit: '/s',
    floor: `own first ${soak.sampleSeconds} s`,
    floorValue: first,
    ratio: soak.minRatio,
    target: soak.target,
    pass: soak.minRatio >= soak.target && soak.load.errors === 0,
    p50Ms: soak.load.p50Ms,
    p99Ms: soak.load.p99Ms,
    cpuUs: soak.load.cpuUsPerRequest,
    notes: [
      ...soak.notes,
      `CPU per request stayed within ${fixed(soak.minCpuRatio, 3)} of the first interval's (rate ratio ${fixed(soak.minRatio, 3)}; load average ${fixed(Math.min(...soak.samples.map((sample) => sample.loadavg1)), 1)}–${fixed(Math.max(...soak.samples.map((sample) => sample.loadavg1)), 1)})`,
    ],
  }
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits)
const rate = (value: number | undefined) => (value === undefined ? '–' : Math.round(value).toLocaleString('en-US'))
/** A row's own number in its unit. */
const valueText = (value: number | undefined, unit: ReportRow['unit']) =>
  unit === 'ms'
    ? `${fixed(value, 2)} ms`
    : unit === 'MiB'
      ? `${fixed(value, 1)} MiB`
      : unit === 'ratio'
        ? fixed(value, 3)
        : `${rate(value)}/s`
const latency = (p50?: number, p99?: number) => (p50 === undefined ? '–' : `${fixed(p50, 2)} / ${fixed(p99, 2)}`)

function verdict(row: ReportRow): string {
  if (row.pass === undefined) return ''
  return row.pass ? 'met' : 'MISSED'
}

export function renderTable(rows: ReportRow[]): string {
  const targeted = rows.filter((row) => row.target !== undefined)
  const other = rows.filter((row) => row.target === undefined)
  const lines = [
    '| Measure | memsvc | Floor | Floor value | Ratio | Target | | memsvc p50 / p99 ms | floor p50 / p99 ms | CPU µs/req memsvc / floor |',
    '|---|---:|---|---:|---:|---:|---|---:|---:|---:|',
    ...targeted.map(
      (row) =>
        `| ${row.measure} | ${valueText(row.value, row.unit)} | ${row.floor} | ${valueText(row.floorValue, row.unit)} | ${fixed(row.ratio, 3)} | ≥ ${row.target} | ${verdict(row)} | ${latency(row.p50Ms, row.p99Ms)} | ${latency(row.floorP50Ms, row.floorP99Ms)} | ${row.cpuUs === undefined ? '–' : `${fixed(row.cpuUs, 0)} / ${fixed(row.floorCpuUs, 0)}`} |`,
    ),
    '',
    '| Measure | memsvc |',
    '|---|---:|',
    ...other.map(
      (row) =>
        `| ${row.measure} | ${row.unit === 'ms' ? `${rate(row.value)} ms` : valueText(row.value, row.unit)}${row.p50Ms === undefined ? '' : ` (p50 / p99 ${latency(row.p50Ms, row.p99Ms)} ms)`} |`,
    ),
  ]
  return lines.join('\n')
}

function renderSoak(soak: SoakResult): string {
  return [
    `**${soak.measure}** — rate every ${soak.sampleSeconds} s, divided by the first interval:`,
    '',
    `(lowest rate ratio ${fixed(soak.minRatio, 3)}; lowest CPU-per-request ratio ${fixed(soak.minCpuRatio, 3)} — first interval's CPU µs/req over this one's, which other work on the machine barely moves)`,
    '',
    '| t (s) | req/s | ratio | CPU µs/req | CPU ratio | load avg | RSS MiB |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...soak.samples.map(
      (sample) =>
        `| ${fixed(sample.atSeconds, 0)} | ${rate(sample.rate)} | ${fixed(sample.ratio, 3)} | ${fixed(sample.cpuUsPerRequest, 0)} | ${fixed(sample.cpuRatio, 3)} | ${fixed(sample.loadavg1, 2)} | ${fixed(sample.rssMiB, 1)} |`,
    ),
  ].join('\n')
}

export function renderMarkdown(report: BenchReport): string {
  const { machine } = report
  const notes = report.rows.flatMap((row) => (row.notes ?? []).map((note) => `- ${row.id}: ${note}`))
  return [
    `# memsvc benchmark — ${report.mode}`,
    '',
    `Run ${report.startedAt} → ${report.finishedAt}${report.complete ? '' : ' (INCOMPLETE: the run failed part-way)'}; \`${report.command}\`.`,
    '',
    `Machine: ${machine.cpus} × ${machine.cpuModel}; ${machine.pinned}.`,
    `Load before: \`${machine.before.uptime}\``,
    `Load after:  \`${machine.after.uptime}\``,
    '',
    `Versions: ${Object.entries(report.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join('; ')}.`,
    '',
    "Ratios divide memsvc by a floor measured in the same run, floor and memsvc alternating; each side's best run counts.",
    '',
    renderTable(report.rows),
    '',
    ...report.soaks.flatMap((soak) => [renderSoak(soak), '']),
    ...(report.extra ?? []).flatMap((paragraph) => [paragraph, '']),
    ...(notes.length > 0 ? ['Notes:', '', ...notes, ''] : []),
  ].join('\n')
}

export function writeReport(report: BenchReport, outDir: string, prefix = ''): { json: string; markdown: string } {
  fs.mkdirSync(outDir, { recursive: true })
  const stamp = report.startedAt.replace(/[:.]/g, '-')
  const json = path.join(outDir, `${prefix}bench-${stamp}.json`)
  const body = `${JSON.stringify(report, null, 2)}\n`
  fs.writeFileSync(json, body)
  // latest.* always describe a complete run; a failed or interrupted one is kept beside them.
  const latest = `${prefix}${report.complete ? 'latest' : 'incomplete'}`
  fs.writeFileSync(path.join(outDir, `${latest}.json`), body)
  const markdown = path.join(outDir, `${latest}.md`)
  fs.writeFileSync(markdown, renderMarkdown(report))
  return { json, markdown }
}
