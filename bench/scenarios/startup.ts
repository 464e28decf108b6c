// Time from spawn to READY (first 200 from /readyz), for the cases users meet:
// external PostgreSQL with a fresh database (migrations run) and with an existing one,
// and the embedded database with an existing data dir (its first start, which runs
// initdb, is reported too but is a one-off). Each case after the first start is timed
// over several starts and reported as the median, with the phases memsvc logs on READY.
// Embedded mode also reports its RSS: idle after the first start, idle on an existing
// data dir, and at its peak under a short load.
import path from 'node:path'
import { createFixtures } from '../lib/fixtures.js'
import { rssMiB } from '../lib/machine.js'
import { createSandbox, type RunningServer, type Sandbox, startMemsvc } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import { sleep } from '../lib/processes.js'
import type { ReportRow } from '../lib/report.js'
import { RssSampler } from '../lib/rss-sampler.js'
import { percentile } from '../lib/stats.js'
import { bearer, READ_CONNECTIONS, warmAndRunWrk } from './http-load.js'

const COMMON_ARGS = ['--tls-disabled', '--rest-port', '0', '--grpc-port', '0', '--bind-address', '127.0.0.1']

export const serverArgs = (extra: string[]) => [...COMMON_ARGS, ...extra]

/** Starts per case: one start on a shared machine is noise, the median of five is not. */
const FULL_STARTS = 5
const QUICK_STARTS = 1
export const startsFor = (options: BenchOptions) => (options.quick ? QUICK_STARTS : FULL_STARTS)
/** Before an idle RSS sample: start-up garbage collected, the first requests' JIT settled. */
const IDLE_SETTLE_MS = 3_000
const QUICK_IDLE_SETTLE_MS = 300

export const TARGET_EXTERNAL_EXISTING_MS = 400
export const TARGET_EMBEDDED_EXISTING_MS = 800
export const TARGET_EMBEDDED_RSS_MIB = 200

/** memsvc's READY line: `… INFO  ready state=READY startupMs=412 phasesMs=runtime:40,modules:95,…` */
const READY_LINE = /\bready state=READY startupMs=(\d+) phasesMs=(\S+)/

export interface StartupPhases {
  /** Milliseconds from the process's start to READY, as memsvc measured it. */
  totalMs: number
  /** Phase → milliseconds, in the order the phases began. */
  phases: Map<string, number>
}

/** The phases memsvc logged on READY; undefined for an executable that does not log them. */
export function parseStartupPhases(log: string): StartupPhases | undefined {
  const match = READY_LINE.exec(log)
  if (!match) return undefined
  const phases = new Map<string, number>()
  for (const entry of match[2]!.split(',')) {
    const [name, ms] = entry.split(':')
    if (name && ms !== undefined) phases.set(name, (phases.get(name) ?? 0) + Number(ms))
  }
  return { totalMs: Number(match[1]), phases }
}

/** One case's starts: spawn → READY as the harness saw it, and the phases memsvc logged. */
export interface StartupCase {
  id: string
  measure: string
  readyMs: number[]
  phases: StartupPhases[]
  targetMs?: number
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  ) ?? Number.NaN

async function timeStart(
  executable: string,
  args: string[],
  sandbox: Sandbox,
  into: StartupCase,
  keepRunning = false,
): Promise<RunningServer> {
  const server = await startMemsvc({ executable, args, sandbox })
  into.readyMs.push(server.readyMs)
  const phases = parseStartupPhases(server.log())
  if (phases) into.phases.push(phases)
  if (!keepRunning) await server.stop()
  return server
}

/** Starts the same configuration again `starts` times (the database exists by now). */
export async function externalExistingStartup(
  executable: string,
  args: string[],
  sandbox: Sandbox,
  starts: number,
): Promise<StartupCase> {
  const result: StartupCase = {
    id: 'ready-external-existing',
    measure: 'spawn → READY, external PostgreSQL, existing database',
    readyMs: [],
    phases: [],
    targetMs: TARGET_EXTERNAL_EXISTING_MS,
  }
  for (let index = 0; index < starts; index++) await timeStart(executable, args, sandbox, result)
  return result
}

export interface EmbeddedStartup {
  first: StartupCase
  existing: StartupCase
  rssFirstIdleMiB?: number
  rssExistingIdleMiB?: number
  rssLoadPeakMiB?: number
  rssAfterLoadMiB?: number
  loadRate?: number
}

/**
 * The embedded database in a data dir of its own, step by step (so that a comparison can
 * take several executables in turn): the first start (initdb) with its idle RSS and the
 * bench's fixtures, then starts on the existing data dir; the last of them stays up for its
 * idle RSS and a short GET /v1/apikeys load, with the RSS peak while it runs.
 */
export class EmbeddedStartupRun {
  readonly result: EmbeddedStartup = {
    first: {
      id: 'ready-embedded-first',
      measure: 'spawn → READY, embedded, first start (initdb; one-off)',
      readyMs: [],
      phases: [],
    },
    existing: {
      id: 'ready-embedded-existing',
      measure: 'spawn → READY, embedded, existing data dir',
      readyMs: [],
      phases: [],
      targetMs: TARGET_EMBEDDED_EXISTING_MS,
    },
  }
  readonly #sandbox = createSandbox()
  readonly #args = serverArgs(['--data-dir', path.join(this.#sandbox.dir, 'data')])
  readonly #settleMs: number
  #readerKey: string | undefined

  constructor(
    readonly executable: string,
    readonly options: BenchOptions,
  ) {
    this.#settleMs = options.quick ? QUICK_IDLE_SETTLE_MS : IDLE_SETTLE_MS
  }

  async firstStart(): Promise<void> {
    const first = await timeStart(this.executable, this.#args, this.#sandbox, this.result.first, true)
    try {
      await sleep(this.#settleMs)
      this.result.rssFirstIdleMiB = rssMiB(first.pid)
      this.#readerKey = (await createFixtures(first.restUrl)).reader.key
    } finally {
      await first.stop()
    }
  }

  async restart(): Promise<void> {
    await timeStart(this.executable, this.#args, this.#sandbox, this.result.existing)
  }

  /** A start like restart()'s, after which the server stays up for the RSS samples and the load. */
  async restartUnderLoad(): Promise<void> {
    if (!this.#readerKey) throw new Error('firstStart() creates the fixtures the load needs')
    const server = await timeStart(this.executable, this.#args, this.#sandbox, this.result.existing, true)
    try {
      await sleep(this.#settleMs)
      this.result.rssExistingIdleMiB = rssMiB(server.pid)
      const rss = new RssSampler(server.pid)
      const load = await rss.during(
        warmAndRunWrk({ ...this.options, warmupSeconds: 0 }, server.pid, {
          url: `${server.restUrl}/v1/apikeys`,
          connections: READ_CONNECTIONS,
          headers: bearer(this.#readerKey),
        }),
      )
      this.result.loadRate = load.rate
      this.result.rssLoadPeakMiB = rss.peakMiB
      await sleep(this.#settleMs)
      this.result.rssAfterLoadMiB = rssMiB(server.pid)
    } finally {
      await server.stop()
    }
  }

  remove(): void {
    this.#sandbox.remove()
  }
}

/** EmbeddedStartupRun's steps for one executable: `starts` starts on the existing data dir. */
export async function embeddedStartup(
  executable: string,
  options: BenchOptions,
  starts: number,
): Promise<EmbeddedStartup> {
  const run = new EmbeddedStartupRun(executable, options)
  try {
    await run.firstStart()
    for (let index = 0; index < starts - 1; index++) await run.restart()
    await run.restartUnderLoad()
    return run.result
  } finally {
    run.remove()
  }
}

/** The report row of a case: the median start, with the spread and the target in its notes. */
export function startupRow(timed: StartupCase): ReportRow {
  const value = median(timed.readyMs)
  const spread =
    timed.readyMs.length > 1
      ? `median of ${timed.readyMs.length} starts, ${Math.round(Math.min(...timed.readyMs))}–${Math.round(Math.max(...timed.readyMs))} ms`
      : 'one start'
  const target =
    timed.targetMs === undefined ? '' : `; target < ${timed.targetMs} ms (${value < timed.targetMs ? 'met' : 'MISSED'})`
  return { id: timed.id, measure: timed.measure, value, unit: 'ms', notes: [`${spread}${target}`] }
}

export function embeddedRssRows(embedded: EmbeddedStartup, options: BenchOptions): ReportRow[] {
  const row = (id: string, measure: string, value: number | undefined, target?: number): ReportRow => ({
    id,
    measure,
    value: value ?? Number.NaN,
    unit: 'MiB',
    notes:
      target === undefined || value === undefined
        ? undefined
        : [`target < ${target} MiB (${value < target ? 'met' : 'MISSED'})`],
  })
  return [
    row(
      'rss-embedded-first',
      'RSS idle, embedded, right after the first start (initdb)',
      embedded.rssFirstIdleMiB,
      TARGET_EMBEDDED_RSS_MIB,
    ),
    row(
      'rss-embedded-idle',
      'RSS idle, embedded, existing data dir',
      embedded.rssExistingIdleMiB,
      TARGET_EMBEDDED_RSS_MIB,
    ),
    row(
      'rss-embedded-load',
      `RSS under load, embedded (peak, GET /v1/apikeys for ${options.seconds} s at ${Math.round(embedded.loadRate ?? 0)}/s)`,
      embedded.rssLoadPeakMiB,
    ),
    row('rss-embedded-after', 'RSS idle, embedded, after the load', embedded.rssAfterLoadMiB),
  ]
}

/** Markdown: each phase's median per case, so a slow start shows where its time went. */
export function renderStartupPhases(cases: StartupCase[]): string | undefined {
  const logged = cases.filter((timed) => timed.phases.length > 0)
  if (logged.length === 0) return undefined
  const names: string[] = []
  for (const timed of logged)
    for (const phases of timed.phases)
      for (const name of phases.phases.keys()) if (!names.includes(name)) names.push(name)
  const cell = (timed: StartupCase, name: string) => {
    const values = timed.phases.flatMap((phases) => (phases.phases.has(name) ? [phases.phases.get(name)!] : []))
    return values.length === 0 ? '–' : String(Math.round(median(values)))
  }
  return [
    '**Start-up phases** — milliseconds, median over the starts of each case, as memsvc logs them on READY ' +
      "(`runtime`: Node and the executable until the bundle runs; `modules`: the bundle's top-level code; phases " +
      'that overlap are each counted whole, so they need not add up to the total):',
    '',
    `| Phase | ${logged.map((timed) => timed.measure.replace(/^spawn → READY, /, '')).join(' | ')} |`,
    `|---|${logged.map(() => '---:').join('|')}|`,
    ...names.map((name) => `| ${name} | ${logged.map((timed) => cell(timed, name)).join(' | ')} |`),
    `| **total (memsvc's own clock)** | ${logged.map((timed) => String(Math.round(median(timed.phases.map((phases) => phases.totalMs))))).join(' | ')} |`,
    `| spawn → /readyz 200 (harness) | ${logged.map((timed) => String(Math.round(median(timed.readyMs)))).join(' | ')} |`,
  ].join('\n')
}
