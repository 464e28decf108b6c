// --processes: what a second and a fourth memsvc process on the same PostgreSQL add, behind
// a local nginx (loopback only, round-robin, upstream keepalive). wrk measures
// authenticated GET /v1/apikeys (the caller owns 10 keys): first one process directly, then
// one, two and four (by default) through nginx, so nginx's own cost is seen apart from what
// more processes add. Each run also reads the CPU time of every memsvc process, of nginx
// and of the database's backends (/proc), per request.
//
// Nothing is pinned: the processes are meant to share the machine's cores. On two cores
// with wrk, nginx and PostgreSQL on them too, four processes cannot scale linearly, and the
// report says how far they got and where the CPU went.
import crypto from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { createFixtures, READER_KEYS } from '../lib/fixtures.js'
import type { LoadResult } from '../lib/load-result.js'
import { cpuSeconds, machineBusySeconds } from '../lib/machine.js'
import { createSandbox, type RunningServer, startMemsvc } from '../lib/memsvc.js'
import { type RunningNginx, startNginx } from '../lib/nginx.js'
import type { BenchOptions } from '../lib/options.js'
import { backendCpuBetween, backendCpuSeconds } from '../lib/postgres-cpu.js'
import { onCleanup } from '../lib/processes.js'
import type { ReportRow } from '../lib/report.js'
import { type HttpLoad, runWrk } from '../lib/wrk.js'
import { bearer, READ_CONNECTIONS } from './http-load.js'
import { writeEncryptionKeyFile } from './memory.js'
import { serverArgs } from './startup.js'
import type { BenchMode, ModeContext, ModeReport } from './types.js'

/**
 * Background-job connections per process: the usage stamps are its only jobs here, and four
 * processes at the default of 20 could take most of a shared PostgreSQL's 100 connections.
 */
const BACKGROUND_POOL_MAX = 2
const US_PER_SECOND = 1e6

interface Setup {
  id: string
  measure: string
  processes: number
  viaNginx: boolean
}

interface SetupResult extends Setup {
  load: LoadResult
  /** CPU µs per request: all memsvc processes together, the database's backends, nginx (master and worker). */
  memsvcCpuUs: number
  postgresCpuUs: number
  nginxCpuUs?: number
  /** Whole machine (both cores, everyone's work) busy during the run, in cores. */
  machineBusyCores: number
  /** Backends of the bench database at the end of the run. */
  backends: number
  backendNote?: string
}

export const processesMode: BenchMode = {
  prefix: 'processes-',
  describe: (options: BenchOptions) =>
    `${options.quick ? 'quick (smoke test; numbers are not measurements), ' : ''}processes, GET /v1/apikeys with ${options.processCounts.join(', ')} memsvc processes behind nginx and 1 direct; ${options.seconds} s per run after ${options.warmupSeconds} s warm-up, best of ${options.rounds} rounds; PostgreSQL pool of ${options.poolMax} connections per process (background jobs: ${BACKGROUND_POOL_MAX})`,
  usesWrk: true,
  pinning: 'nothing pinned: wrk, nginx, the memsvc processes and PostgreSQL share every core',
  run: runProcesses,
}

async function runProcesses(context: ModeContext, report: ModeReport): Promise<void> {
  const { options, database, workDir, log } = context
  // Servers sharing a database share its encryption key, as the operator's guide asks.
  const args = serverArgs([
    ...['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', String(options.poolMax)],
    ...['--background-db-max-pool', String(BACKGROUND_POOL_MAX)],
    ...['--encryption-key-file', writeEncryptionKeyFile(workDir)],
    ...['--metrics-scrape-secret', crypto.randomBytes(16).toString('hex')],
  ])
  const servers: RunningServer[] = []
  const startProcess = async () => {
    // Each process has a HOME of its own, as separate hosts would.
    const sandbox = servers.length === 0 ? context.sandbox : createSandbox()
    if (servers.length > 0) onCleanup(async () => sandbox.remove())
    const server = await startMemsvc({ executable: context.executable, args, sandbox, unpinned: true })
    servers.push(server)
    log(`memsvc #${servers.length} pid ${server.pid} READY in ${server.readyMs.toFixed(0)} ms`)
  }
  const sql = postgres(database.url, { max: 1, onnotice: () => {}, connect_timeout: 5 })
  try {
    await startProcess()
    const fixtures = await createFixtures(servers[0]!.restUrl)
    const headers = bearer(fixtures.reader.key)
    const results: SetupResult[] = []
    const measureSetup = async (setup: Setup, url: string, nginx?: RunningNginx) => {
      const load: Omit<HttpLoad, 'seconds'> = {
        url: `${url}/v1/apikeys`,
        connections: READ_CONNECTIONS,
        headers,
        unpinned: true,
      }
      let best: SetupResult | undefined
      for (let round = 0; round < options.rounds; round++) {
        const result = await measureOnce(setup, load, servers.slice(0, setup.processes), sql, options, nginx)
        if (!best || result.load.rate > best.load.rate) best = result
      }
      results.push(best!)
      log(
        `  ${setup.measure}: ${Math.round(best!.load.rate)}/s p50 ${best!.load.p50Ms?.toFixed(2)} ms p99 ${best!.load.p99Ms?.toFixed(2)} ms; CPU µs/req memsvc ${best!.memsvcCpuUs.toFixed(0)}, PostgreSQL ${best!.postgresCpuUs.toFixed(0)}, nginx ${best!.nginxCpuUs?.toFixed(0) ?? '–'}; errors ${best!.load.errors}`,
      )
      Object.assign(report, reportOf(results, options))
    }

    await measureSetup(
      { id: 'processes-direct-1', measure: '1 process, direct (no nginx)', processes: 1, viaNginx: false },
      servers[0]!.restUrl,
    )
    for (const count of options.processCounts) {
      while (servers.length < count) await startProcess()
      const upstreams = servers.slice(0, count).map((server) => new URL(server.restUrl).host)
      const nginx = await startNginx(path.join(workDir, `nginx-${count}`), upstreams)
      log(`nginx pid ${nginx.pid} on ${nginx.url} → ${upstreams.join(', ')}`)
      try {
        await measureSetup(
          {
            id: `processes-nginx-${count}`,
            measure: `${count} process${count === 1 ? '' : 'es'} behind nginx`,
            processes: count,
            viaNginx: true,
          },
          nginx.url,
          nginx,
        )
      } finally {
        await nginx.stop()
      }
    }
  } finally {
    await sql.end({ timeout: 5 })
    await Promise.all(servers.map((server) => server.stop()))
  }
}

const sumCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0)

/** Warm-up, then one measured run with every process's CPU time read around it. */
async function measureOnce(
  setup: Setup,
  load: Omit<HttpLoad, 'seconds'>,
  servers: RunningServer[],
  sql: postgres.Sql,
  options: BenchOptions,
  nginx?: RunningNginx,
): Promise<SetupResult> {
  if (options.warmupSeconds > 0) await runWrk({ ...load, seconds: options.warmupSeconds })
  const pids = servers.map((server) => server.pid)
  const postgresBefore = await backendCpuSeconds(sql)
  const memsvcBefore = sumCpu(pids)
  const nginxBefore = nginx?.cpuSeconds()
  const machineBefore = machineBusySeconds()
  const started = performance.now()
  const result = await runWrk({ ...load, seconds: options.seconds })
  const wallSeconds = (performance.now() - started) / 1000
  const machineAfter = machineBusySeconds()
  const memsvcAfter = sumCpu(pids)
  const nginxAfter = nginx?.cpuSeconds()
  const postgres = backendCpuBetween(postgresBefore, await backendCpuSeconds(sql))
  const perRequest = (seconds: number) =>
    result.requests > 0 ? (seconds * US_PER_SECOND) / result.requests : Number.NaN
  const notes: string[] = []
  if (postgres.connected > 0) notes.push(`${postgres.connected} backends connected during the run (counted from zero)`)
  if (postgres.disconnected > 0)
    notes.push(`${postgres.disconnected} backends left during the run (their CPU is missed)`)
  return {
    ...setup,
    load: { ...result, cpuUsPerRequest: perRequest(memsvcAfter - memsvcBefore) },
    memsvcCpuUs: perRequest(memsvcAfter - memsvcBefore),
    postgresCpuUs: perRequest(postgres.seconds),
    nginxCpuUs:
      nginxBefore === undefined || nginxAfter === undefined ? undefined : perRequest(nginxAfter - nginxBefore),
    machineBusyCores: (machineAfter - machineBefore) / wallSeconds,
    backends: postgres.backends,
    backendNote: notes.length > 0 ? notes.join('; ') : undefined,
  }
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits)
const rate = (value: number | undefined) => (value === undefined ? '–' : Math.round(value).toLocaleString('en-US'))

function reportOf(results: SetupResult[], options: BenchOptions): ModeReport {
  const direct = results.find((result) => !result.viaNginx)
  const single = results.find((result) => result.viaNginx && result.processes === 1)
  const rows: ReportRow[] = results.map((result) => {
    // The direct run is the 1-process nginx run's base (nginx's cost); that run is the base of the others.
    const base = !result.viaNginx ? undefined : result.processes === 1 ? direct : single
    const notes = [
      `CPU µs per request: memsvc ${fixed(result.memsvcCpuUs, 0)} (all processes), PostgreSQL backends ${fixed(result.postgresCpuUs, 0)}${result.nginxCpuUs === undefined ? '' : `, nginx ${fixed(result.nginxCpuUs, 0)}`}; machine busy ${fixed(result.machineBusyCores, 2)} cores`,
      ...(result.backendNote ? [result.backendNote] : []),
      ...(result.load.errors > 0
        ? [`${result.load.errors} failed requests ${JSON.stringify(result.load.errorKinds ?? {})}`]
        : []),
    ]
    if (base && result.processes > 1)
      notes.push(
        `per added process ${rate((result.load.rate - base.load.rate) / (result.processes - 1))}/s; scaling efficiency ${fixed(result.load.rate / (result.processes * base.load.rate), 3)}`,
      )
    return {
      id: result.id,
      measure: `GET /v1/apikeys (${READER_KEYS} keys), ${result.measure}`,
      value: result.load.rate,
      unit: '/s',
      floor: base === undefined ? undefined : base === direct ? '1 process, direct' : '1 process behind nginx',
      floorValue: base?.load.rate,
      ratio: base ? result.load.rate / base.load.rate : undefined,
      p50Ms: result.load.p50Ms,
      p99Ms: result.load.p99Ms,
      cpuUs: result.memsvcCpuUs,
      notes,
    }
  })
  const table = [
    `**Processes** — wrk -c${READ_CONNECTIONS} for ${options.seconds} s, best of ${options.rounds}. "÷ 1 behind nginx": rate over the 1-process nginx run; "per added process": (rate − that) ÷ (processes − 1); efficiency: rate ÷ (processes × that), 1.0 being linear. CPU µs per request from /proc: every memsvc process together, the bench database's PostgreSQL backends, nginx's master and worker; "machine busy": every core's busy time during the run over its wall time (everyone's work, wrk's too; ${os.availableParallelism()} cores).`,
    '',
    '| setup | req/s | ÷ 1 behind nginx | per added process | efficiency | p50 / p99 ms | CPU µs/req memsvc | PostgreSQL | nginx | total | machine busy (cores) | backends |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((result) => {
      const scaled = result.viaNginx && single && result.processes > 1
      const total = result.memsvcCpuUs + result.postgresCpuUs + (result.nginxCpuUs ?? 0)
      return `| ${result.measure} | ${rate(result.load.rate)} | ${single && result.viaNginx ? fixed(result.load.rate / single.load.rate, 3) : '–'} | ${scaled ? rate((result.load.rate - single.load.rate) / (result.processes - 1)) : '–'} | ${scaled ? fixed(result.load.rate / (result.processes * single.load.rate), 3) : '–'} | ${fixed(result.load.p50Ms, 2)} / ${fixed(result.load.p99Ms, 2)} | ${fixed(result.memsvcCpuUs, 0)} | ${fixed(result.postgresCpuUs, 0)} | ${fixed(result.nginxCpuUs, 0)} | ${fixed(total, 0)} | ${fixed(result.machineBusyCores, 2)} | ${result.backends} |`
    }),
    ...(direct && single
      ? [
          '',
          `nginx's cost: 1 process behind nginx ran at ${fixed(single.load.rate / direct.load.rate, 3)} of the direct rate; nginx itself used ${fixed(single.nginxCpuUs, 0)} µs of CPU per request.`,
        ]
      : []),
  ].join('\n')
  return { rows, extra: [table] }
}
