// One report per run: a flat list of rows (what the table shows and what the smoke test
// checks), plus the details behind them. Written as JSON (results/*.json, gitignored)
// and Markdown (results/latest.md, meant to be committed).
import fs from 'node:fs'
import path from 'node:path'
import type { Comparison, SoakLineTrend, SoakResult } from '../scenarios/types.js'
import type { MachineLoad } from './machine.js'
import type { MemorySnapshot } from './rss-sampler.js'

export interface ReportRow {
  id: string
  measure: string
  /**
   * memsvc's number: a rate per second (of requests, or of document pages), a byte rate (MB/s,
   * 10^6 bytes), milliseconds, MiB or CPU µs per request.
   */
  value: number
  /** '% per 10 min': a soak's trend, the least-squares line's change over 10 minutes as a percentage of its mean. */
  unit: '/s' | 'pages/s' | 'MB/s' | 'ms' | 'MiB' | 'ratio' | 'µs/req' | '% per 10 min'
  floor?: string
  floorValue?: number
  ratio?: number
  target?: number
  /** The target is an upper bound (ratio ≤ target): a cost that must not grow. */
  targetIsMaximum?: boolean
  /** How the target reads where `≤ target` would not say it (a rise in MiB, a change per 10 minutes). */
  targetText?: string
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
  /** memsvc's memory idle before the load, at its RSS peak under load and idle after it (default scenarios). */
  memory?: MemoryAroundLoad
  /** Markdown paragraphs after the table (the memory benchmark's method and caveats). */
  extra?: string[]
}

export interface MemoryAroundLoad {
  before?: MemorySnapshot
  peak?: MemorySnapshot
  /** Idle again, at each of these seconds after the last load ended. */
  after: Array<{ seconds: number; snapshot?: MemorySnapshot }>
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

/**
 * Five rows per soak. Judged: its trends over the whole run (CPU per request and RSS by their
 * least-squares lines, the JS heap by its lowest samples), on soaks of 10 minutes or more.
 * Reported beside them, unjudged: its lowest interval's rate and its highest interval's CPU per
 * request, each against the first interval's.
 */
export function soakRows(soak: SoakResult): ReportRow[] {
  const first = soak.samples[0]
  const later = soak.samples.slice(1)
  const worstCpu = later.reduce<number | undefined>(
    (worst, sample) => (worst === undefined || sample.cpuUsPerRequest > worst ? sample.cpuUsPerRequest : worst),
    undefined,
  )
  const loadRange = `${fixed(Math.min(...soak.samples.map((sample) => sample.loadavg1)), 1)}–${fixed(Math.max(...soak.samples.map((sample) => sample.loadavg1)), 1)}`
  const coreRange = `${fixed(Math.min(...soak.samples.map((sample) => sample.coreShare * 100)), 0)}–${fixed(Math.max(...soak.samples.map((sample) => sample.coreShare * 100)), 0)} %`
  const noErrors = soak.load.errors === 0
  const judged = (met: boolean) => (soak.judged ? met && noErrors : undefined)
  const unjudged = soak.judged
    ? []
    : [
        `not judged: the trend targets are for soaks of 10 minutes or more (--long); this one ran ${soak.samples.length} intervals`,
      ]
  const intervals = `${soak.samples.length} intervals of ${soak.sampleSeconds} s`
  const lineRow = (
    id: string,
    what: string,
    trend: SoakLineTrend | undefined,
    meanText: (mean: number) => string,
    slopeText: (perTenMinutes: number) => string,
  ): ReportRow => ({
    id,
    measure: `${soak.measure}: ${what}, least-squares trend`,
    value: trend ? trend.changePer10Min * 100 : Number.NaN,
    unit: '% per 10 min',
    floor: trend
      ? `line over ${intervals}: mean ${meanText(trend.mean)}, ${slopeText(trend.slopePerSecond * TEN_MINUTES_S)} per 10 min`
      : `line over ${intervals}`,
    ratio: trend ? 1 + trend.changePer10Min : Number.NaN,
    target: trend ? 1 + trend.target : undefined,
    targetIsMaximum: true,
    targetText: trend ? `≤ +${fixed(trend.target * 100, 0)} % per 10 min` : undefined,
    pass: trend ? judged(trend.changePer10Min <= trend.target) : undefined,
    notes: trend
      ? [
          `${what}: the line's standard error is ±${fixed((trend.slopeStandardError * TEN_MINUTES_S * 100) / trend.mean, 1)} % per 10 min`,
          ...unjudged,
        ]
      : [],
  })
  const { cpu, rss, heap } = soak.trends
  const rows: ReportRow[] = [
    {
      id: soak.id,
      measure: `${soak.measure}: lowest interval's rate ÷ first`,
      value: Math.min(...soak.samples.map((sample) => sample.rate)),
      unit: '/s',
      floor: `own first ${soak.sampleSeconds} s`,
      floorValue: first?.rate ?? 0,
      ratio: soak.minRatio,
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
    },
    lineRow(
      `${soak.id}-cpu-trend`,
      'CPU µs/req',
      cpu,
      (mean) => `${fixed(mean, 1)} µs/req`,
      (change) => `${signed(change, 2)} µs/req`,
    ),
    lineRow(
      `${soak.id}-rss-trend`,
      'RSS',
      rss,
      (mean) => `${fixed(mean, 1)} MiB`,
      (change) => `${signed(change, 1)} MiB`,
    ),
  ]
  if (heap)
    rows.push({
      id: `${soak.id}-heap-trend`,
      measure: `${soak.measure}: JS heap in use, lowest reading of the last third`,
      value: heap.lastLowestMiB,
      unit: 'MiB',
      floor: 'lowest reading of the first third',
      floorValue: heap.firstLowestMiB,
      ratio: heap.lastLowestMiB / heap.firstLowestMiB,
      targetText: `≤ +${heap.targetMiB} MiB`,
      pass: judged(heap.riseMiB <= heap.targetMiB),
      notes: unjudged,
    })
  return rows
}

const TEN_MINUTES_S = 600
const signed = (value: number, digits: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(digits)}`
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
          : unit === '% per 10 min'
            ? value === undefined || !Number.isFinite(value)
              ? '–'
              : `${signed(value, 1)} % per 10 min`
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
  row.targetText ?? (row.target === undefined ? '(no target)' : `${row.targetIsMaximum ? '≤' : '≥'} ${row.target}`)

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
  const { cpu, rss, heap } = soak.trends
  const line = (what: string, trend: SoakLineTrend | undefined) =>
    trend
      ? `${what} ${signed(trend.changePer10Min * 100, 1)} % per 10 min (±${fixed((trend.slopeStandardError * TEN_MINUTES_S * 100) / trend.mean, 1)}), target ≤ +${fixed(trend.target * 100, 0)} %`
      : `${what} –`
  const trends = [
    line('CPU µs/req', cpu),
    line('RSS', rss),
    heap
      ? `JS heap in use, lowest reading of the first third ${fixed(heap.firstLowestMiB, 1)} MiB, of the last ${fixed(heap.lastLowestMiB, 1)} MiB (${signed(heap.riseMiB, 1)}), target ≤ +${heap.targetMiB} MiB`
      : undefined,
  ].filter((text) => text !== undefined)
  return [
    `**${soak.measure}** — rate every ${soak.sampleSeconds} s, divided by the first interval:`,
    '',
    `Trends over the whole soak${soak.judged ? '' : ' (not judged: the targets are for 10 minutes or more)'}: ${trends.join('; ')}. The CPU and RSS lines are least-squares fits over every interval, their change over 10 minutes given as a share of the series' mean (± the slope's standard error); the heap's lowest readings (every 2 s) are those taken just after a collection: what is live.`,
    '',
    `(Reported, not judged: lowest rate ratio ${fixed(soak.minRatio, 3)}; highest CPU µs/req against the first interval's ×${fixed(soak.maxCpuGrowth, 3)}. "Core" is the server's CPU seconds per second: well below 100 % something else limited the rate, and fewer requests per event-loop wake-up then cost more CPU each. "PostgreSQL" is the CPU of this database's backends per request; "GC" the share of the interval memsvc spent collecting garbage, "heap" its JS heap in use at the sample, "heap low" the lowest of its readings every 2 s in the interval.)`,
    '',
    '| t (s) | req/s | ratio | CPU µs/req | × first | core | PostgreSQL µs/req | GC | heap MiB | heap low MiB | load avg | RSS MiB |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...soak.samples.map(
      (sample) =>
        `| ${fixed(sample.atSeconds, 0)} | ${rate(sample.rate)} | ${fixed(sample.ratio, 3)} | ${fixed(sample.cpuUsPerRequest, 0)} | ${fixed(sample.cpuGrowth, 3)} | ${fixed(sample.coreShare * 100, 0)} % | ${fixed(sample.databaseCpuUsPerRequest, 0)} | ${sample.gcShare === undefined ? '–' : `${fixed(sample.gcShare * 100, 1)} %`} | ${fixed(sample.heapUsedMiB, 0)} | ${fixed(sample.heapLowMiB, 0)} | ${fixed(sample.loadavg1, 2)} | ${fixed(sample.rssMiB, 1)} |`,
    ),
  ].join('\n')
}

/** memsvc's memory around the load: /proc for RSS, its /metrics for the rest (nodejs_* gauges). */
function renderMemory(memory: MemoryAroundLoad): string {
  const columns: Array<[string, MemorySnapshot | undefined]> = [
    ['idle before the load', memory.before],
    ['at the RSS peak under load', memory.peak],
    ...memory.after.map(({ seconds, snapshot }): [string, MemorySnapshot | undefined] => [
      `idle, ${seconds} s after the load`,
      snapshot,
    ]),
  ]
  const row = (label: string, value: (snapshot: MemorySnapshot) => number | undefined) =>
    `| ${label} | ${columns.map(([, snapshot]) => (snapshot ? fixed(value(snapshot), 1) : '–')).join(' | ')} |`
  return [
    '**memsvc memory around the load**, MiB (RSS from `/proc`; the rest from its `/metrics`: V8 heap used and committed, external memory and the ArrayBuffers and Buffers within it):',
    '',
    `| | ${columns.map(([label]) => label).join(' | ')} |`,
    `|---|${columns.map(() => '---:').join('|')}|`,
    row('RSS', (snapshot) => snapshot.rssMiB),
    row('heapUsed', (snapshot) => snapshot.heapUsedMiB),
    row('heapTotal', (snapshot) => snapshot.heapTotalMiB),
    row('external', (snapshot) => snapshot.externalMiB),
    row('arrayBuffers', (snapshot) => snapshot.arrayBuffersMiB),
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
    ...(report.memory ? [renderMemory(report.memory), ''] : []),
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
