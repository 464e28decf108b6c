// --scale: does a request cost more when api_keys holds more rows? One database that grows
// (1k → 10k → 100k → 1M keys by default, dealt over 1k users, written with COPY); at each
// size, after VACUUM ANALYZE and a checkpoint, a fresh memsvc process, and wrk measures
// authenticated GET /v1/apikeys (the caller owns 10 keys), GET /v1/users/me and
// POST /v1/apikeys, and each is divided by the same route at the smallest size.
//
// Those requests authenticate with one key each, which the authenticator's cache answers
// after the first request, as it does for any client that keeps calling. The lookup a new
// or evicted key costs (the authenticator's own query by key hash) is timed in the database
// with EXPLAIN ANALYZE over keys sampled from the whole table, beside the list query's plan:
// pages touched per lookup say how the indexes grow, whatever else runs on the machine.
import fs from 'node:fs'
import path from 'node:path'
import postgres from 'postgres'
import type { Queryable } from '../../src/db/database.js'
import { findCredentialByHash, listApiKeysJson } from '../../src/db/sql/api-keys.js'
import { hashApiKey } from '../../src/domain/api-key-format.js'
import { pageSizeOrDefault } from '../../src/domain/paging.js'
import { LoadedKeyHashes, loadApiKeys, loadUsers } from '../lib/bulk-api-keys.js'
import { createFixtures, READER_KEYS } from '../lib/fixtures.js'
import type { LoadResult } from '../lib/load-result.js'
import { startMemsvc } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import { backendCpuBetween, backendCpuSeconds } from '../lib/postgres-cpu.js'
import { canPin, LOAD_CORE, SERVER_CORE, sleep } from '../lib/processes.js'
import type { ReportRow } from '../lib/report.js'
import type { HttpLoad } from '../lib/wrk.js'
import { bearer, READ_CONNECTIONS, warmAndRunWrk } from './http-load.js'
import { IN_FLIGHT } from './rest-create.js'
import { serverArgs } from './startup.js'
import type { BenchMode, ModeContext, ModeReport } from './types.js'

/** Rate at the largest size over the rate at the smallest: the cost may grow by 20 % at most. */
export const TARGET = 0.8
/** The CPU time per request may grow by as much: at the largest size ÷ at the smallest, at most this. */
export const CPU_COST_TARGET = 1.2
/** The bulk keys are dealt over this many users (the issue's "spread over 1k users"). */
const OWNERS = 1_000
/** Uncached auth lookups timed per size (distinct random keys of the table), and list queries. */
const LOOKUP_SAMPLES = 200
const LIST_SAMPLES = 50
const QUICK_LOOKUP_SAMPLES = 20
const QUICK_LIST_SAMPLES = 5
const CREATE_BODY = { labels: { bench: 'scale-create' } }
const MIB = 1024 * 1024
const US_PER_MS = 1000
const US_PER_SECOND = 1e6
/** After a wrk run of POSTs, the inserts still in flight in memsvc finish well within this. */
const IN_FLIGHT_SETTLE_MS = 1_000

type RouteId = 'list' | 'me' | 'create'

/** One measured run, with the CPU time the database's backends spent per request during it. */
interface RouteResult extends LoadResult {
  postgresCpuUs: number
}

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  'Relation Name'?: string
  'Shared Hit Blocks'?: number
  'Shared Read Blocks'?: number
  Plans?: PlanNode[]
}

/** One statement's EXPLAIN ANALYZE over its samples. */
interface QueryTiming {
  /** Median execution time in the database (EXPLAIN ANALYZE's Execution Time), ms. */
  medianMs: number
  /** Shared buffers touched per execution, averaged (hit + read): how deep the indexes are. */
  buffers: number
  /** The plan's nodes, outermost first, e.g. "Nested Loop > Index Scan (api_keys_key_hash_key) > …". */
  plan: string
}

interface SizeStep {
  /** api_keys rows when this size's measurements started. */
  rows: number
  loadSeconds: number
  /** VACUUM ANALYZE + CHECKPOINT after the load. */
  settleSeconds: number
  databaseBytes: number
  tableBytes: number
  indexBytes: Record<string, number>
  authLookup: QueryTiming
  listQuery: QueryTiming
  routes: Partial<Record<RouteId, RouteResult>>
  /** Keys POST /v1/apikeys added during this size's runs (deleted before the next size). */
  created: number
}

const ROUTES: Array<{ id: RouteId; measure: string }> = [
  { id: 'list', measure: `GET /v1/apikeys (${READER_KEYS} keys)` },
  { id: 'me', measure: 'GET /v1/users/me' },
  { id: 'create', measure: 'POST /v1/apikeys' },
]

/** 1000 → "1k", 1000000 → "1M". */
export function sizeLabel(rows: number): string {
  if (rows >= 1e6 && rows % 1e5 === 0) return `${rows / 1e6}M`
  if (rows >= 1e3 && rows % 100 === 0) return `${rows / 1e3}k`
  return String(rows)
}

export const scaleMode: BenchMode = {
  prefix: 'scale-',
  describe: (options: BenchOptions) =>
    `${options.quick ? 'quick (smoke test; numbers are not measurements), ' : ''}scale, api_keys at ${options.scaleSizes.map(sizeLabel).join(' → ')} rows over ${OWNERS} users; ${options.seconds} s per run after ${options.warmupSeconds} s warm-up, best of ${options.rounds} rounds; PostgreSQL pool of ${options.poolMax} connections`,
  usesWrk: true,
  pinning: canPin
    ? `wrk on core ${LOAD_CORE}, memsvc on core ${SERVER_CORE} (taskset), PostgreSQL unpinned`
    : 'not pinned (needs 2 cores and taskset)',
  run: runScale,
}

async function runScale(context: ModeContext, report: ModeReport): Promise<void> {
  const { options, database, sandbox, workDir, log } = context
  const args = serverArgs([
    ...['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', String(options.poolMax)],
  ])
  let server = await startMemsvc({ executable: context.executable, args, sandbox })
  log(`memsvc pid ${server.pid} READY in ${server.readyMs.toFixed(0)} ms (fresh database)`)
  const fixtures = await createFixtures(server.restUrl)
  const bodyFile = path.join(workDir, 'scale-create-body.json')
  fs.writeFileSync(bodyFile, JSON.stringify(CREATE_BODY))
  const sql = postgres(database.url, { max: 1, onnotice: () => {}, connect_timeout: 5 })
  try {
    const [root] = await sql<Array<{ id: string }>>`select root_user_id as id from system_state`
    const owners = await loadUsers(sql, 'bench-scale-owner', OWNERS)
    const hashes = new LoadedKeyHashes()
    const writerHash = hashApiKey(fixtures.writer.key)
    const steps: SizeStep[] = []
    for (const size of options.scaleSizes) {
      const present = await countKeys(sql)
      const loadStarted = performance.now()
      if (present < size)
        await loadApiKeys(sql, { count: size - present, ownerIds: owners, creatorId: root!.id, hashes })
      const loadSeconds = (performance.now() - loadStarted) / 1000
      const settleStarted = performance.now()
      await database.settle()
      const settleSeconds = (performance.now() - settleStarted) / 1000
      const sizes = await relationSizes(sql)
      if (steps.length > 0) {
        // A fresh process at each size: memsvc's CPU per request has been seen to grow with the
        // requests a process has served (the soak's subject); here only the table may differ.
        await server.stop()
        server = await startMemsvc({ executable: context.executable, args, sandbox })
      }
      log(
        `${sizeLabel(size)} keys: memsvc pid ${server.pid}, ${sizes.rows} rows, loaded in ${loadSeconds.toFixed(1)} s, vacuum analyze + checkpoint ${settleSeconds.toFixed(1)} s, database ${(sizes.databaseBytes / MIB).toFixed(0)} MiB`,
      )
      const authLookup = await timeQuery(sql, options.quick ? QUICK_LOOKUP_SAMPLES : LOOKUP_SAMPLES, (queryable) =>
        findCredentialByHash(queryable, hashes.sample(1)[0] ?? writerHash),
      )
      const listQuery = await timeQuery(sql, options.quick ? QUICK_LIST_SAMPLES : LIST_SAMPLES, (queryable) =>
        listApiKeysJson(queryable, { ownerId: fixtures.reader.userId, pageSize: pageSizeOrDefault(undefined) }),
      )
      const step: SizeStep = {
        ...sizes,
        loadSeconds,
        settleSeconds,
        authLookup,
        listQuery,
        routes: {},
        created: 0,
      }
      steps.push(step)
      for (const route of ROUTES) {
        const load =
          route.id === 'create'
            ? {
                url: `${server.restUrl}/v1/apikeys`,
                connections: IN_FLIGHT,
                method: 'POST' as const,
                bodyFile,
                headers: bearer(fixtures.writer.key),
              }
            : {
                url: `${server.restUrl}${route.id === 'list' ? '/v1/apikeys' : '/v1/users/me'}`,
                connections: READ_CONNECTIONS,
                headers: bearer(fixtures.reader.key),
              }
        const runs: RouteResult[] = []
        for (let round = 0; round < options.rounds; round++) {
          const result = await measureRoute(sql, options, server.pid, load)
          runs.push(result)
          log(
            `  ${sizeLabel(size)} ${route.measure} round ${round + 1}: ${Math.round(result.rate)}/s p50 ${result.p50Ms?.toFixed(2)} ms p99 ${result.p99Ms?.toFixed(2)} ms, CPU µs/req memsvc ${result.cpuUsPerRequest?.toFixed(0) ?? '?'} PostgreSQL ${result.postgresCpuUs.toFixed(0)}, errors ${result.errors}`,
          )
        }
        step.routes[route.id] = best(runs)
        Object.assign(report, reportOf(steps))
      }
      // The next size starts from exactly its own row count: what the creates added goes, once
      // the requests wrk left in flight when it stopped have been answered.
      await sleep(IN_FLIGHT_SETTLE_MS)
      const deleted = await sql`
        delete from api_keys where user_id = ${fixtures.writer.userId} and key_hash <> ${writerHash}`
      step.created = deleted.count
      Object.assign(report, reportOf(steps))
    }
    const largest = steps.at(-1)!
    report.extra.push(
      await explainText(sql, `The plans at ${sizeLabel(largest.rows)} keys (EXPLAIN ANALYZE, BUFFERS)`, [
        [
          'Auth lookup of a key the cache does not hold (findCredentialByHash)',
          (queryable) => findCredentialByHash(queryable, hashes.sample(1)[0] ?? writerHash),
        ],
        [
          `GET /v1/apikeys's page query (listApiKeysJson, the reader's ${READER_KEYS} keys)`,
          (queryable) =>
            listApiKeysJson(queryable, { ownerId: fixtures.reader.userId, pageSize: pageSizeOrDefault(undefined) }),
        ],
      ]),
    )
  } finally {
    await sql.end({ timeout: 5 })
    await server.stop()
  }
}

/** Each side's best run counts: other work on the machine only ever slows a run down. */
const best = (results: RouteResult[]) => results.reduce((top, result) => (result.rate > top.rate ? result : top))

/** Warm-up and one measured run, with memsvc's and the database backends' CPU time per request. */
async function measureRoute(
  sql: postgres.Sql,
  options: BenchOptions,
  serverPid: number,
  load: Omit<HttpLoad, 'seconds'>,
): Promise<RouteResult> {
  let backendsBefore = new Map<number, number>()
  const result = await warmAndRunWrk(options, serverPid, load, async () => {
    backendsBefore = await backendCpuSeconds(sql)
  })
  const backends = backendCpuBetween(backendsBefore, await backendCpuSeconds(sql))
  return { ...result, postgresCpuUs: (backends.seconds * US_PER_SECOND) / result.requests }
}

async function countKeys(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<Array<{ rows: number }>>`select count(*)::int as rows from api_keys`
  return row!.rows
}

async function relationSizes(sql: postgres.Sql) {
  const [sizes] = await sql<Array<{ database: string; table: string }>>`
    select pg_database_size(current_database())::text as database, pg_table_size('api_keys')::text as table`
  const indexes = await sql<Array<{ name: string; bytes: string }>>`
    select indexrelid::regclass::text as name, pg_relation_size(indexrelid)::text as bytes
    from pg_index where indrelid = 'api_keys'::regclass order by 1`
  return {
    rows: await countKeys(sql),
    databaseBytes: Number(sizes!.database),
    tableBytes: Number(sizes!.table),
    indexBytes: Object.fromEntries(indexes.map((index) => [index.name, Number(index.bytes)])),
  }
}

/**
 * A Queryable that hands the statement a server SQL function builds (its text and
 * parameters) to `send` instead of running it, so that what is explained below is the
 * server's own statement, text for text. The function sees no rows.
 */
function intercepting(send: (text: string, parameters: unknown[]) => Promise<unknown>): Queryable {
  const tagged = (strings: TemplateStringsArray, ...values: unknown[]) =>
    send(
      strings.reduce((text, part, index) => `${text}$${index}${part}`),
      values,
    ).then(() => [])
  const unsafe = (text: string, parameters: unknown[] = []) => send(text, parameters).then(() => [])
  return Object.assign(tagged, { unsafe }) as unknown as Queryable
}

/** EXPLAIN ANALYZE of the statement, its rows (one JSON document, or lines of text). */
async function explain(
  sql: postgres.Sql,
  format: 'json' | 'text',
  run: (queryable: Queryable) => Promise<unknown>,
): Promise<Array<Record<string, unknown>>> {
  let rows: Array<Record<string, unknown>> = []
  await run(
    intercepting(async (text, parameters) => {
      rows = await sql.unsafe(`explain (analyze, buffers, format ${format}) ${text}`, parameters as never[])
    }),
  )
  return rows
}

/** The statement's values as SQL literals (hashes, ids and numbers the benchmark made, nothing from outside). */
function literal(value: unknown): string {
  if (Buffer.isBuffer(value)) return `'\\x${value.toString('hex')}'`
  if (typeof value === 'number') return String(value)
  return `'${String(value).replaceAll("'", "''")}'`
}

/**
 * The generic plan a server's prepared statement may settle on after its first executions
 * (PostgreSQL 15 has no EXPLAIN (GENERIC_PLAN)): PREPARE, then EXPLAIN EXECUTE under
 * plan_cache_mode = force_generic_plan.
 */
async function explainGeneric(
  sql: postgres.Sql,
  run: (queryable: Queryable) => Promise<unknown>,
): Promise<Array<Record<string, unknown>>> {
  let rows: Array<Record<string, unknown>> = []
  await run(
    intercepting(async (text, parameters) => {
      await sql.unsafe(`prepare bench_scale_generic as ${text}`)
      try {
        await sql.unsafe('set plan_cache_mode = force_generic_plan')
        rows = await sql.unsafe(
          `explain (analyze, buffers) execute bench_scale_generic(${parameters.map(literal).join(', ')})`,
        )
      } finally {
        await sql.unsafe('reset plan_cache_mode')
        await sql.unsafe('deallocate bench_scale_generic')
      }
    }),
  )
  return rows
}

function planNodes(node: PlanNode): string[] {
  const name = node['Index Name'] ? `${node['Node Type']} (${node['Index Name']})` : node['Node Type']
  return [name, ...(node.Plans ?? []).flatMap(planNodes)]
}

async function timeQuery(
  sql: postgres.Sql,
  samples: number,
  run: (queryable: Queryable) => Promise<unknown>,
): Promise<QueryTiming> {
  const explained: Array<{ Plan: PlanNode; 'Execution Time': number }> = []
  for (let sample = 0; sample < samples; sample++) {
    const rows = await explain(sql, 'json', run)
    explained.push((rows[0]!['QUERY PLAN'] as Array<{ Plan: PlanNode; 'Execution Time': number }>)[0]!)
  }
  const times = explained.map((entry) => entry['Execution Time']).sort((a, b) => a - b)
  const buffers =
    explained.reduce(
      (sum, entry) => sum + (entry.Plan['Shared Hit Blocks'] ?? 0) + (entry.Plan['Shared Read Blocks'] ?? 0),
      0,
    ) / explained.length
  return {
    medianMs: times[Math.floor(times.length / 2)]!,
    buffers,
    plan: planNodes(explained[0]!.Plan).join(' > '),
  }
}

async function explainText(
  sql: postgres.Sql,
  title: string,
  statements: Array<[string, (queryable: Queryable) => Promise<unknown>]>,
): Promise<string> {
  const sections: string[] = []
  for (const [name, run] of statements) {
    for (const [label, rows] of [
      ['plan for these parameters', await explain(sql, 'text', run)],
      ["generic plan (the one a server's prepared statement may settle on)", await explainGeneric(sql, run)],
    ] as const) {
      const lines = rows.map((row) => String(row['QUERY PLAN']))
      sections.push(`${name}, ${label}:\n\n\`\`\`\n${lines.join('\n')}\n\`\`\``)
    }
  }
  return `**${title}**\n\n${sections.join('\n\n')}`
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits)
const rate = (value: number | undefined) => (value === undefined ? '–' : Math.round(value).toLocaleString('en-US'))
const mib = (bytes: number) => (bytes / MIB).toFixed(1)

/** The table rows (each route at the largest size ÷ at the smallest) and the per-size tables. */
function reportOf(steps: SizeStep[]): ModeReport {
  const first = steps[0]!
  const rows: ReportRow[] = []
  const last = steps.at(-1)!
  for (const route of ROUTES) {
    const base = first.routes[route.id]
    // The largest size that has this route measured (a run failing part-way reports what it has).
    const top = [...steps].reverse().find((step) => step.routes[route.id] !== undefined)
    const result = top?.routes[route.id]
    if (!base || !top || !result) continue
    const cpuCost =
      result.cpuUsPerRequest !== undefined && base.cpuUsPerRequest !== undefined
        ? result.cpuUsPerRequest / base.cpuUsPerRequest
        : undefined
    rows.push({
      id: `scale-${route.id}`,
      measure: `${route.measure} at ${sizeLabel(top.rows)} keys`,
      value: result.rate,
      unit: '/s',
      floor: `same at ${sizeLabel(first.rows)} keys`,
      floorValue: base.rate,
      ratio: result.rate / base.rate,
      target: TARGET,
      pass: result.rate / base.rate >= TARGET && result.errors === 0 && base.errors === 0,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      floorP50Ms: base.p50Ms,
      floorP99Ms: base.p99Ms,
      cpuUs: result.cpuUsPerRequest,
      floorCpuUs: base.cpuUsPerRequest,
      notes: [
        `CPU µs per request at ${sizeLabel(top.rows)} ÷ at ${sizeLabel(first.rows)}: ${fixed(cpuCost, 3)} (target ≤ ${CPU_COST_TARGET})`,
        ...(result.errors + base.errors > 0
          ? [`failed requests: ${result.errors} (largest), ${base.errors} (smallest)`]
          : []),
      ],
    })
  }
  rows.push(
    {
      id: 'scale-auth-lookup',
      measure: `Auth lookup of an uncached key in the database: median time at ${sizeLabel(last.rows)} keys ÷ at ${sizeLabel(first.rows)} (EXPLAIN ANALYZE)`,
      value: last.authLookup.medianMs / first.authLookup.medianMs,
      unit: 'ratio',
      notes: [
        `${fixed(first.authLookup.medianMs * US_PER_MS, 1)} µs and ${fixed(first.authLookup.buffers, 1)} buffers per lookup at ${sizeLabel(first.rows)}, ${fixed(last.authLookup.medianMs * US_PER_MS, 1)} µs and ${fixed(last.authLookup.buffers, 1)} buffers at ${sizeLabel(last.rows)}`,
      ],
    },
    {
      id: 'scale-database-size',
      measure: `Database size at ${sizeLabel(last.rows)} keys (pg_database_size)`,
      value: last.databaseBytes / MIB,
      unit: 'MiB',
    },
  )

  const indexNames = Object.keys(last.indexBytes)
  const sizeTable = [
    `**Sizes** — api_keys rows when the size's measurements started (bulk keys dealt over ${OWNERS} users, plus the fixtures' keys); load: COPY of the new rows (the table's triggers and foreign key included); settle: VACUUM ANALYZE and CHECKPOINT. Auth lookup and list query: EXPLAIN ANALYZE in the database of the server's own statements (findCredentialByHash over keys sampled from the whole table; listApiKeysJson for the reader), median execution time and shared buffers touched per execution.`,
    '',
    `| api_keys rows | load s | settle s | database MiB | api_keys table MiB | ${indexNames.map((name) => `${name} MiB`).join(' | ')} | auth lookup ms (buffers) | list query ms (buffers) |`,
    `|---:|---:|---:|---:|---:|${indexNames.map(() => '---:|').join('')}---:|---:|`,
    ...steps.map(
      (step) =>
        `| ${step.rows.toLocaleString('en-US')} | ${fixed(step.loadSeconds, 1)} | ${fixed(step.settleSeconds, 1)} | ${mib(step.databaseBytes)} | ${mib(step.tableBytes)} | ${indexNames.map((name) => mib(step.indexBytes[name] ?? 0)).join(' | ')} | ${fixed(step.authLookup.medianMs, 3)} (${fixed(step.authLookup.buffers, 1)}) | ${fixed(step.listQuery.medianMs, 3)} (${fixed(step.listQuery.buffers, 1)}) |`,
    ),
    '',
    `Plans at ${sizeLabel(last.rows)}: auth lookup ${last.authLookup.plan}; list query ${last.listQuery.plan}.`,
  ].join('\n')
  const loadTable = [
    `**Requests at each size** — rate ÷ the same route at ${sizeLabel(first.rows)} (target ≥ ${TARGET}); CPU µs per request of memsvc, and at this size ÷ at ${sizeLabel(first.rows)} (target ≤ ${CPU_COST_TARGET}; it moves much less than the rate with other work on the machine); and the CPU time the bench database's PostgreSQL backends spent per request (/proc). POST rows: keys created during the runs, deleted before the next size.`,
    '',
    '| api_keys rows | route | req/s | ÷ smallest | p50 / p99 ms | CPU µs/req | CPU ÷ smallest | PostgreSQL CPU µs/req | errors |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...steps.flatMap((step) =>
      ROUTES.flatMap((route) => {
        const result = step.routes[route.id]
        const base = first.routes[route.id]
        if (!result || !base) return []
        const created = route.id === 'create' && step.created > 0 ? ` (+${step.created.toLocaleString('en-US')})` : ''
        return [
          `| ${step.rows.toLocaleString('en-US')}${created} | ${route.measure} | ${rate(result.rate)} | ${fixed(result.rate / base.rate, 3)} | ${fixed(result.p50Ms, 2)} / ${fixed(result.p99Ms, 2)} | ${fixed(result.cpuUsPerRequest, 0)} | ${fixed((result.cpuUsPerRequest ?? Number.NaN) / (base.cpuUsPerRequest ?? Number.NaN), 3)} | ${fixed(result.postgresCpuUs, 0)} | ${result.errors} |`,
        ]
      }),
    ),
  ].join('\n')
  return { rows, extra: [loadTable, sizeTable] }
}
