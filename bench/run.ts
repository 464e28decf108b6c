// npm run bench [-- options]: builds dist/memsvc if it is stale, starts it on a fresh
// PostgreSQL database, and measures in one run both memsvc and the floors it is divided
// by; prints one table and writes bench/results/latest.md plus JSON. See --help.
//
// Loopback only, every run bounded in time; every process it starts is stopped at the
// end, on error and on SIGINT, and the database is dropped.
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ensureBuilt } from './lib/build.js'
import { type BenchDatabase, createBenchDatabase } from './lib/database.js'
import { createFixtures } from './lib/fixtures.js'
import { REPO_ROOT } from './lib/floors.js'
import { cpuModel, type MachineLoad, machineLoad, rssMiB } from './lib/machine.js'
import { createSandbox, type RunningServer, type Sandbox, startMemsvc } from './lib/memsvc.js'
import { type BenchOptions, memoryReportPrefix, parseOptions, type ScenarioId } from './lib/options.js'
import {
  canPin,
  cleanUp,
  hasCommand,
  installExitHandlers,
  LOAD_CORE,
  onCleanup,
  SERVER_CORE,
  sleep,
  wasInterrupted,
} from './lib/processes.js'
import {
  type BenchReport,
  comparisonRow,
  type MemoryAroundLoad,
  type ReportRow,
  renderTable,
  soakRows,
  writeReport,
} from './lib/report.js'
import { type MemorySnapshot, RssSampler, readMemory } from './lib/rss-sampler.js'
import {
  DIMENSIONS,
  type MemoryBenchDetails,
  memoryBench,
  memoryServerLifetimeMs,
  writeEncryptionKeyFile,
} from './scenarios/memory.js'
import { hasRestRetrieve, restRetriever } from './scenarios/memory-retriever.js'
import { restCreate } from './scenarios/rest-create.js'
import { restList } from './scenarios/rest-list.js'
import { restMe } from './scenarios/rest-me.js'
import { soakFloor, soakProduct } from './scenarios/soak.js'
import {
  embeddedRssRows,
  embeddedStartup,
  externalExistingStartup,
  parseStartupPhases,
  renderStartupPhases,
  type StartupCase,
  serverArgs,
  startsFor,
  startupRow,
} from './scenarios/startup.js'
import type { BenchContext, BenchMode, Comparison, ModeReport, SoakResult } from './scenarios/types.js'

const EXECUTABLE = path.join(REPO_ROOT, 'dist', 'memsvc')
/** The CommonJS bundle the build puts inside dist/memsvc. */
const BUNDLE = path.join(REPO_ROOT, 'dist', 'build', 'memsvc.cjs')
/** Before "RSS idle": let start-up garbage and the fixture requests settle (--quick: only a moment). */
const IDLE_SETTLE_MS = 2_000
const QUICK_IDLE_SETTLE_MS = 300
/**
 * "RSS idle after the load" is read this long after the last load ended, and also at the
 * first of these for comparison. memsvc gives its grown heap back once its event loop has
 * been idle for one of its 2 s checks (src/runtime/idle-memory.ts), so 2–4 s after the load;
 * 15 s leaves room for a busy machine. --quick reads once, at once.
 */
const AFTER_LOAD_SECONDS = [2, 15]
const QUICK_AFTER_LOAD_SECONDS = [0.3]
/** idle after the load ÷ idle before it (issue 36). */
const RSS_AFTER_LOAD_TARGET = 1.5
const MS_PER_SECOND = 1000

/** First line of `command args`, without the command's own name or a copyright notice. */
function toolVersion(command: string, args: string[]): string {
  let output: string
  try {
    output = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    // wrk -v exits 1 after printing its version; take the text either way.
    output = String((error as { stdout?: string }).stdout ?? '')
  }
  const line = output.trim().split('\n')[0] ?? ''
  return line.replace(new RegExp(`^${path.basename(command)}\\s+`), '').replace(/\s*Copyright.*$/, '') || 'unknown'
}

function requireTools(): void {
  const missing = ['wrk', 'h2load'].filter((tool) => !hasCommand(tool))
  if (missing.length > 0) throw new Error(`missing ${missing.join(' and ')}: apt-get install wrk nghttp2-client`)
}

function modeOf(options: BenchOptions): string {
  const pools = `PostgreSQL pools of ${options.poolMax} connections (memsvc --db-max-pool and floors)`
  if (options.quick) return `quick (smoke test; numbers are not measurements), ${pools}`
  return `${options.seconds} s per run after ${options.warmupSeconds} s warm-up, ${options.rounds} rounds, ${options.soakSeconds} s soak, ${pools}`
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), REPO_ROOT)
  installExitHandlers()
  if (options.memory) return runMemoryBench(options)
  if (options.scale) return runModeBench(options, (await import('./scenarios/scale.js')).scaleMode)
  if (options.processes) return runModeBench(options, (await import('./scenarios/processes.js')).processesMode)
  if (options.local) return runModeBench(options, (await import('./scenarios/local-memory.js')).localMode)
  if (options.documents) return runModeBench(options, (await import('./scenarios/documents.js')).documentsMode)
  if (options.lifecycle) return runModeBench(options, (await import('./scenarios/lifecycle.js')).lifecycleMode)
  requireTools()
  const wanted = (id: ScenarioId) => !options.only || options.only.includes(id)
  const startedAt = new Date().toISOString()
  const before = machineLoad()
  console.log(`memsvc benchmark: ${modeOf(options)}\nload before: ${before.uptime}`)

  const build = ensureBuilt(REPO_ROOT, EXECUTABLE, options.build)
  const { workDir, database, sandbox } = await runResources()

  const metricsSecret = crypto.randomBytes(16).toString('hex')
  // No local embedding model: system init would register the bundled one and load it (some 200 MiB), which the
  // API-key scenarios never use and which would hide their own memory in the RSS rows (bench --local measures it).
  const noModels = path.join(sandbox.dir, 'no-models')
  fs.mkdirSync(noModels, { recursive: true })
  const args = serverArgs([
    ...['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', String(options.poolMax)],
    ...['--metrics-scrape-secret', metricsSecret, '--models-dir', noModels],
  ])
  const profileDir = profileDirOf(options, startedAt)
  const server: RunningServer = await startMemsvc(launchOf(options, args, sandbox, profileDir))
  console.log(`memsvc pid ${server.pid} READY in ${server.readyMs.toFixed(0)} ms (fresh database)`)
  const fixtures = await createFixtures(server.restUrl)
  await sleep(options.quick ? QUICK_IDLE_SETTLE_MS : IDLE_SETTLE_MS)
  const metricsEndpoint = { restUrl: server.restUrl, secret: metricsSecret }
  const readServerMemory = () => readMemory(server.pid, metricsEndpoint)
  const memory: MemoryAroundLoad = { before: await readServerMemory().catch(() => undefined), after: [] }
  const rssIdle = memory.before?.rssMiB ?? rssMiB(server.pid)
  const rss = new RssSampler(server.pid, readServerMemory)
  const context: BenchContext = {
    options,
    server,
    metricsSecret,
    fixtures,
    database,
    workDir,
    rss,
    floorProfileDir: options.cpuProf ? path.join(profileDir, 'floors') : undefined,
    profileDir: options.cpuProf ? profileDir : undefined,
  }

  const comparisons: Comparison[] = []
  const soaks: SoakResult[] = []
  const rows: ReportRow[] = []
  let complete = false
  let startupPhases: string | undefined
  const report = (): BenchReport => ({
    startedAt,
    finishedAt: new Date().toISOString(),
    complete,
    mode: modeOf(options),
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    machine: {
      before,
      after: machineLoad(),
      cpus: os.availableParallelism(),
      cpuModel: cpuModel(),
      pinned: canPin
        ? `load generator on core ${LOAD_CORE}, server on core ${SERVER_CORE} (taskset), PostgreSQL unpinned`
        : 'not pinned (needs 2 cores and taskset)',
    },
    versions: {
      memsvc: toolVersion(EXECUTABLE, ['--version']) + (build === 'up to date' ? '' : ` (${build})`),
      node: process.version,
      postgresql: database.serverVersion,
      wrk: toolVersion('wrk', ['-v']),
      h2load: toolVersion('h2load', ['--version']),
    },
    rows,
    comparisons,
    soaks,
    memory: memory.after.length > 0 ? { ...memory, peak: rss.peakSnapshot } : undefined,
    extra: startupPhases ? [startupPhases] : undefined,
  })

  try {
    const scenarios: Array<[ScenarioId, (context: BenchContext) => Promise<Comparison | Comparison[]>]> = [
      ['rest-list', restList],
      ['rest-me', restMe],
      // Imported only now: it encodes its request with src/generated, which the build writes.
      ['grpc-list', async (scenarioContext) => (await import('./scenarios/grpc-list.js')).grpcList(scenarioContext)],
      ['rest-create', restCreate],
    ]
    for (const [id, scenario] of scenarios) {
      if (!wanted(id)) continue
      console.log(`${id}…`)
      for (const comparison of [await scenario(context)].flat()) {
        comparisons.push(comparison)
        rows.push(comparisonRow(comparison))
      }
    }
    if (wanted('soak')) {
      if (wanted('rest-create')) {
        // rest-create leaves some 10^5 new rows; without this, autovacuum works through
        // them on the same two cores during the soak's first minute (seen as a dip there).
        // The CHECKPOINT then writes the pages the load and the VACUUM dirtied, which the
        // checkpointer would otherwise be writing during the soak's first interval, the
        // one every later interval is divided by.
        console.log('vacuum analyze and checkpoint after rest-create…')
        await database.settle()
      }
      console.log('soak…')
      const soak = await soakProduct(context)
      soaks.push(soak)
      rows.push(...soakRows(soak))
      if (options.unpatchedSoak) {
        for (const variant of ['patched', 'unpatched'] as const) {
          console.log(`soak of the auth-lookup floor, ${variant} queue…`)
          const floorSoak = await soakFloor(context, variant)
          soaks.push(floorSoak)
          rows.push(...soakRows(floorSoak))
        }
      }
    }
    const loadEnded = performance.now()
    for (const seconds of options.quick ? QUICK_AFTER_LOAD_SECONDS : AFTER_LOAD_SECONDS) {
      await sleep(Math.max(0, loadEnded + seconds * MS_PER_SECOND - performance.now()))
      const snapshot: MemorySnapshot | undefined = await readServerMemory().catch(() => ({
        rssMiB: rssMiB(server.pid),
      }))
      memory.after.push({ seconds, snapshot })
    }
    const after = memory.after.at(-1)!
    const rssAfter = after.snapshot?.rssMiB
    rows.push({
      id: 'rss-idle',
      measure: 'RSS idle (after start-up and fixtures)',
      value: rssIdle ?? Number.NaN,
      unit: 'MiB',
    })
    if (comparisons.length + soaks.length > 0) {
      rows.push({
        id: 'rss-load',
        measure: 'RSS under load (peak while memsvc was measured)',
        value: rss.peakMiB,
        unit: 'MiB',
      })
      const afterRatio = (rssAfter ?? Number.NaN) / (rssIdle ?? Number.NaN)
      rows.push({
        id: 'rss-after',
        measure: `RSS idle ${after.seconds} s after the load`,
        value: rssAfter ?? Number.NaN,
        unit: 'MiB',
        floor: 'own RSS idle before the load',
        floorValue: rssIdle ?? Number.NaN,
        ratio: afterRatio,
        target: RSS_AFTER_LOAD_TARGET,
        targetIsMaximum: true,
        pass: afterRatio <= RSS_AFTER_LOAD_TARGET,
        notes: memory.after
          .slice(0, -1)
          .map(({ seconds, snapshot }) => `RSS ${snapshot?.rssMiB?.toFixed(1) ?? '–'} MiB ${seconds} s after the load`),
      })
    }
    await server.stop()
    rows.push({
      id: 'ready-external-fresh',
      measure: 'spawn → READY, external PostgreSQL, fresh database (migrations)',
      value: server.readyMs,
      unit: 'ms',
    })
    if (wanted('startup')) {
      console.log('start-up times…')
      const freshCase: StartupCase = {
        id: 'ready-external-fresh',
        measure: 'spawn → READY, external PostgreSQL, fresh database (migrations)',
        readyMs: [server.readyMs],
        phases: [parseStartupPhases(server.log())].filter((phases) => phases !== undefined),
      }
      const existing = await externalExistingStartup(EXECUTABLE, args, sandbox, startsFor(options))
      rows.push(startupRow(existing))
      console.log('embedded start-up and RSS…')
      const embedded = await embeddedStartup(EXECUTABLE, options, startsFor(options))
      rows.push(startupRow(embedded.existing), startupRow(embedded.first), ...embeddedRssRows(embedded, options))
      startupPhases = renderStartupPhases([freshCase, existing, embedded.existing, embedded.first])
    }
    complete = true
  } finally {
    const final = report()
    const written = writeReport(final, options.outDir)
    console.log(`\n${renderTable(final.rows)}\n\nload after: ${final.machine.after.uptime}`)
    if (options.cpuProf)
      console.log(`CPU profile of memsvc (run from ${path.relative(REPO_ROOT, BUNDLE)}): ${profileDir}`)
    console.log(
      `wrote ${path.relative(process.cwd(), written.markdown)} and ${path.relative(process.cwd(), written.json)}`,
    )
  }
}

/** A scratch directory, a fresh database and a private HOME for the run; all removed when it ends. */
async function runResources(): Promise<{ workDir: string; database: BenchDatabase; sandbox: Sandbox }> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-work-'))
  onCleanup(async () => fs.rmSync(workDir, { recursive: true, force: true }))
  const database = await createBenchDatabase()
  onCleanup(() => database.drop())
  const sandbox = createSandbox()
  onCleanup(async () => sandbox.remove())
  return { workDir, database, sandbox }
}

const commandLine = () =>
  ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')

const profileDirOf = (options: BenchOptions, startedAt: string) =>
  path.join(options.outDir, 'profiles', startedAt.replace(/[:.]/g, '-'))

/**
 * With --cpu-prof, the executable's own bundle (the same code) runs under this node (the
 * pinned Node 24 that npm scripts use), where --cpu-prof-dir puts the profile.
 */
function launchOf(options: BenchOptions, args: string[], sandbox: Sandbox, profileDir: string) {
  return options.cpuProf
    ? {
        executable: process.execPath,
        // The inspector lets the soak profile its first and last window besides the whole run.
        executableArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--inspect=127.0.0.1:0', BUNDLE],
        args,
        sandbox,
      }
    : { executable: EXECUTABLE, args, sandbox }
}

/** --memory: the memory core's anchors (bench/scenarios/memory.ts) into results/memory-latest.md. */
async function runMemoryBench(options: BenchOptions): Promise<void> {
  const startedAt = new Date().toISOString()
  const before = machineLoad()
  const mode = `${options.quick ? 'quick (smoke test; numbers are not measurements), ' : ''}memory, ${options.memoryChunks} chunks of ${DIMENSIONS} dimensions, retrieval ${options.seconds} s per run × ${options.rounds} rounds, PostgreSQL pools of ${options.poolMax} connections`
  console.log(`memsvc memory benchmark: ${mode}\nload before: ${before.uptime}`)
  const build = ensureBuilt(REPO_ROOT, EXECUTABLE, options.build)
  const { workDir, database, sandbox } = await runResources()
  const encryptionKeyFile = writeEncryptionKeyFile(workDir)
  const args = serverArgs([
    '--db-url',
    database.jdbcUrl,
    '--db-user',
    database.user,
    '--db-max-pool',
    String(options.poolMax),
    '--encryption-key-file',
    encryptionKeyFile,
  ])
  const profileDir = profileDirOf(options, startedAt)
  const server = await startMemsvc({
    ...launchOf(options, args, sandbox, profileDir),
    lifetimeMs: memoryServerLifetimeMs(options.memoryChunks),
  })
  onCleanup(() => server.stop())
  if (options.cpuProf)
    console.log(`CPU profile of memsvc (run from ${path.relative(REPO_ROOT, BUNDLE)}), once it stops: ${profileDir}`)
  console.log(`memsvc pid ${server.pid} READY in ${server.readyMs.toFixed(0)} ms (fresh database)`)
  const user = await memoryUser(server.restUrl)
  const rows: ReportRow[] = []
  let details: MemoryBenchDetails | undefined
  let complete = false
  try {
    const result = await memoryBench(
      {
        options,
        server,
        database,
        userKey: user.key,
        userId: user.userId,
        profileDir: options.cpuProf ? profileDir : undefined,
        retriever: async ({ spaceId }) =>
          (await hasRestRetrieve(server.restUrl, user.key))
            ? restRetriever(server.restUrl, user.key, spaceId, server.pid)
            : (await import('./scenarios/memory-domain-retriever.js')).domainRetriever({
                jdbcUrl: database.jdbcUrl,
                dbUser: database.user,
                encryptionKeyFile,
                poolMax: options.poolMax,
                key: user.key,
                spaceId,
              }),
      },
      options.memoryChunks,
      (line) => console.log(line),
    )
    rows.push(...result.rows)
    details = result.details
    complete = true
  } finally {
    finishSeparateReport({
      startedAt,
      before,
      complete,
      mode,
      pinned: `memsvc on core ${SERVER_CORE} (taskset) when possible; this process (load, embedder, floors) and PostgreSQL unpinned`,
      build,
      database,
      rows,
      extra: memoryReportNotes(details),
      printExtra: false,
      prefix: memoryReportPrefix(options),
      outDir: options.outDir,
    })
  }
}

/**
 * --scale and --processes: each starts its own memsvc processes on a fresh database and
 * writes results/<prefix>latest.md.
 */
async function runModeBench(options: BenchOptions, mode: BenchMode): Promise<void> {
  if (mode.usesWrk) requireTools()
  const startedAt = new Date().toISOString()
  const before = machineLoad()
  const description = mode.describe(options)
  console.log(`memsvc benchmark: ${description}\nload before: ${before.uptime}`)
  const build = ensureBuilt(REPO_ROOT, EXECUTABLE, options.build)
  const { workDir, database, sandbox } = await runResources()
  const result: ModeReport = { rows: [], extra: [] }
  let complete = false
  try {
    await mode.run(
      { options, executable: EXECUTABLE, database, sandbox, workDir, log: (line) => console.log(line) },
      result,
    )
    complete = true
  } finally {
    finishSeparateReport({
      startedAt,
      before,
      complete,
      mode: description,
      pinned: mode.pinning,
      build,
      database,
      rows: result.rows,
      extra: result.extra,
      printExtra: true,
      versions: mode.usesWrk ? { wrk: toolVersion('wrk', ['-v']) } : {},
      prefix: mode.prefix,
      outDir: options.outDir,
    })
  }
}

/** The report of a run outside the default scenarios (memory, scale, processes): written, and its table printed. */
function finishSeparateReport(run: {
  startedAt: string
  before: MachineLoad
  complete: boolean
  mode: string
  pinned: string
  build: string
  database: BenchDatabase
  rows: ReportRow[]
  extra: string[]
  /** Print the extra sections under the table too (the memory notes are in the file only). */
  printExtra: boolean
  versions?: Record<string, string>
  prefix: string
  outDir: string
}): void {
  const report: BenchReport = {
    startedAt: run.startedAt,
    finishedAt: new Date().toISOString(),
    complete: run.complete,
    mode: run.mode,
    command: commandLine(),
    machine: {
      before: run.before,
      after: machineLoad(),
      cpus: os.availableParallelism(),
      cpuModel: cpuModel(),
      pinned: run.pinned,
    },
    versions: {
      memsvc: toolVersion(EXECUTABLE, ['--version']) + (run.build === 'up to date' ? '' : ` (${run.build})`),
      node: process.version,
      postgresql: run.database.serverVersion,
      ...run.versions,
    },
    rows: run.rows,
    comparisons: [],
    soaks: [],
    extra: run.extra,
  }
  const written = writeReport(report, run.outDir, run.prefix)
  const extra = run.printExtra ? `\n\n${run.extra.join('\n\n')}` : ''
  console.log(`\n${renderTable(run.rows)}${extra}\n\nload after: ${report.machine.after.uptime}`)
  console.log(
    `wrote ${path.relative(process.cwd(), written.markdown)} and ${path.relative(process.cwd(), written.json)}`,
  )
}

/** A USER-role account of its own owns the benchmark's embedders and spaces. */
async function memoryUser(restUrl: string): Promise<{ userId: string; key: string }> {
  const post = async <T>(urlPath: string, key: string | undefined, body?: unknown): Promise<T> => {
    const response = await fetch(`${restUrl}${urlPath}`, {
      method: 'POST',
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`POST ${urlPath}: ${response.status} ${text}`)
    return JSON.parse(text) as T
  }
  const { rootApiKey } = await post<{ rootApiKey: string }>('/v1/system/init', undefined)
  const { userId } = await post<{ userId: string }>('/v1/users', rootApiKey, { username: 'bench-memory', role: 'USER' })
  const { rawApiKey } = await post<{ rawApiKey: string }>('/v1/apikeys', rootApiKey, { ownerId: userId })
  return { userId, key: rawApiKey }
}

function memoryReportNotes(details: MemoryBenchDetails | undefined): string[] {
  if (!details) return []
  const notes = details.notes.map((note) => `- ${note}`)
  return [
    `Recall@10 over ${details.recall.queries} queries: memsvc ${details.recall.vector.toFixed(3)}, the floor's SQL ${details.recall.floorSql.toFixed(3)}.`,
    ...(notes.length > 0 ? [`Run notes:\n\n${notes.join('\n')}`] : []),
  ]
}

main()
  .then(async () => {
    await cleanUp()
    process.exit(0)
  })
  .catch(async (error: unknown) => {
    // After SIGINT the scenario that was running fails because its processes were stopped: not news.
    if (!wasInterrupted()) console.error(`bench failed: ${(error as Error).stack ?? String(error)}`)
    await cleanUp()
    process.exit(wasInterrupted() ? 130 : 1)
  })
