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
  /**
   * memsvc's number: a rate per second (of requests, or of document pages), a byte rate (MB/s,
   * 10^6 bytes), milliseconds, MiB or CPU µs per request.
   */
  value: number
  unit: '/s' | 'pages/s' | 'MB/s' | 'ms' | 'MiB' | 'ratio' | 'µs/req'
  floor?: string
  floorValue?: number
  ratio?: number
  target?: number
  /** The target is an upper bound (ratio ≤ target): a cost that must not grow. */
  targetIsMaximum?: boolean
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
    pass:
      comparison.target === undefined
        ? undefined
        : comparison.ratio >= comparison.target && comparison.product.errors === 0,
    p50Ms: comparison.product.p50Ms,
    p99Ms: comparison.product.p99Ms,
    floorP50Ms: comparison.floorResult.p50Ms,
    floorP99Ms: comparison.floorResult.p99Ms,
    cpuUs: comparison.product.cpuUsPerRequest,
    floorCpuUs: comparison.floorResult.cpuUsPerRequest,
    notes: comparison.notes,
  }
}

/** Two rows per soak: its lowest rate against its first interval's, and its highest CPU per request likewise. */
export function soakRows(soak: SoakResult): ReportRow[] {
  const first = soak.samples[0]
  const later = soak.samples.slice(1)
  const worstCpu = later.reduce<number | undefined>(
    (worst, sample) => (worst === undefined || sample.cpuUsPerRequest > worst ? sample.cpuUsPerRequest : worst),
    undefined,
  )
  const loadRange = `${fixed(Math.min(...soak.samples.map((sample) => sample.loadavg1)), 1)}–${fixed(Math.max(...soak.samples.map((sample) => sample.loadavg1)), 1)}`
  const coreRange = `${fixed(Math.min(...soak.samples.map((sample) => sample.coreShare * 100)), 0)}–${fixed(Math.max(...soak.samples.map((sample) => sample.coreShare * 100)), 0)} %`
  const failed = soak.load.errors === 0
  return [
    {
      id: soak.id,
      measure: soak.measure,
      value: Math.min(...soak.samples.map((sample) => sample.rate)),
      unit: '/s',
      floor: `own first ${soak.sampleSeconds} s`,
      floorValue: first?.rate ?? 0,
      ratio: soak.minRatio,
      target: soak.target,
      pass: soak.minRatio >= soak.target && failed,
      p50Ms: soak.load.p50Ms,
      p99Ms: soak.load.p99Ms,
      cpuUs: soak.load.cpuUsPerRequest,
      notes: [...soak.notes, `load average ${loadRange}; the server used ${coreRange} of its core per interval`],
    },
    {
      id: `${soak.id}-cpu`,
      measure: `${soak.measure}: CPU µs/req, worst interval ÷ first`,
      value: worstCpu ?? first?.cpuUsPerRequest ?? Number.NaN,
      unit: 'µs/req',
      floor: `own first ${soak.sampleSeconds} s`,
      floorValue: first?.cpuUsPerRequest ?? Number.NaN,
      ratio: soak.maxCpuGrowth,
      target: soak.cpuTarget,
      targetIsMaximum: true,
      pass: soak.maxCpuGrowth <= soak.cpuTarget && failed,
    },
  ]
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
        : unit === 'µs/req'
          ? `${fixed(value, 0)} µs/req`
          : unit === 'pages/s'
            ? // A few pages a second (OCR): whole numbers would hide the difference.
              `${fixed(value, 2)} pages/s`
            : unit === 'MB/s'
              ? `${fixed(value, 1)} MB/s`
              : `${rate(value)}/s`
const latency = (p50?: number, p99?: number) => (p50 === undefined ? '–' : `${fixed(p50, 2)} / ${fixed(p99, 2)}`)

function verdict(row: ReportRow): string {
  if (row.pass === undefined) return ''
  return row.pass ? 'met' : 'MISSED'
}

const targetText = (row: ReportRow) =>
  row.target === undefined ? '(no target)' : `${row.targetIsMaximum ? '≤' : '≥'} ${row.target}`

export function renderTable(rows: ReportRow[]): string {
  // Rows divided by a floor, with or without a target of their own, then plain figures.
  const targeted = rows.filter((row) => row.floor !== undefined)
  const other = rows.filter((row) => row.floor === undefined)
  const lines = [
    '| Measure | memsvc | Floor | Floor value | Ratio | Target | | memsvc p50 / p99 ms | floor p50 / p99 ms | CPU µs/req memsvc / floor |',
    '|---|---:|---|---:|---:|---:|---|---:|---:|---:|',
    ...targeted.map(
      (row) =>
        `| ${row.measure} | ${valueText(row.value, row.unit)} | ${row.floor} | ${valueText(row.floorValue, row.unit)} | ${fixed(row.ratio, 3)} | ${targetText(row)} | ${verdict(row)} | ${latency(row.p50Ms, row.p99Ms)} | ${latency(row.floorP50Ms, row.floorP99Ms)} | ${row.cpuUs === undefined ? '–' : `${fixed(row.cpuUs, 0)} / ${fixed(row.floorCpuUs, 0)}`} |`,
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
    `(lowest rate ratio ${fixed(soak.minRatio, 3)}, target ≥ ${soak.target}; highest CPU µs/req against the first interval's ×${fixed(soak.maxCpuGrowth, 3)}, target ≤ ${soak.cpuTarget}. "Core" is the server's CPU seconds per second: well below 100 % something else limited the rate, and fewer requests per event-loop wake-up then cost more CPU each. "PostgreSQL" is the CPU of this database's backends per request; "GC" the share of the interval memsvc spent collecting garbage, "heap" its JS heap in use.)`,
    '',
    '| t (s) | req/s | ratio | CPU µs/req | × first | core | PostgreSQL µs/req | GC | heap MiB | load avg | RSS MiB |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...soak.samples.map(
      (sample) =>
        `| ${fixed(sample.atSeconds, 0)} | ${rate(sample.rate)} | ${fixed(sample.ratio, 3)} | ${fixed(sample.cpuUsPerRequest, 0)} | ${fixed(sample.cpuGrowth, 3)} | ${fixed(sample.coreShare * 100, 0)} % | ${fixed(sample.databaseCpuUsPerRequest, 0)} | ${sample.gcShare === undefined ? '–' : `${fixed(sample.gcShare * 100, 1)} %`} | ${fixed(sample.heapUsedMiB, 0)} | ${fixed(sample.loadavg1, 2)} | ${fixed(sample.rssMiB, 1)} |`,
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
