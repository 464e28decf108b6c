// Start-up alone, without the rest of the bench: spawn → READY of one or more executables,
// several starts per case, with the phases memsvc logs on READY and embedded mode's RSS.
// Executables take turns start by start, so a machine that gets busier part-way slows
// all of them alike.
//
//   node --import tsx bench/tools/startup.ts [--starts 5] [--seconds 5] [--no-embedded] dist/memsvc [old/memsvc …]
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createBenchDatabase } from '../lib/database.js'
import { createSandbox } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import { cleanUp, installExitHandlers, onCleanup } from '../lib/processes.js'
import { renderTable } from '../lib/report.js'
import {
  EmbeddedStartupRun,
  embeddedRssRows,
  externalExistingStartup,
  renderStartupPhases,
  type StartupCase,
  serverArgs,
  startupRow,
} from '../scenarios/startup.js'

const DEFAULT_STARTS = 5
const DEFAULT_LOAD_SECONDS = 5

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { starts: { type: 'string' }, seconds: { type: 'string' }, 'no-embedded': { type: 'boolean' } },
  })
  const executables = (positionals.length > 0 ? positionals : ['dist/memsvc']).map((file) => path.resolve(file))
  const starts = Number(values.starts ?? DEFAULT_STARTS)
  const embedded = !values['no-embedded']
  installExitHandlers()
  // Only what the startup scenario reads: how long the embedded load runs, and idle settling.
  const options = {
    quick: false,
    seconds: Number(values.seconds ?? DEFAULT_LOAD_SECONDS),
    warmupSeconds: 0,
  } as BenchOptions
  const database = await createBenchDatabase()
  onCleanup(() => database.drop())
  const sandbox = createSandbox()
  onCleanup(async () => sandbox.remove())
  const args = serverArgs(['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', '5'])

  // The first start migrates the fresh database and is not counted.
  await externalExistingStartup(executables[0]!, args, sandbox, 1)
  const external = new Map<string, StartupCase>()
  const runs = new Map(executables.map((executable) => [executable, new EmbeddedStartupRun(executable, options)]))
  onCleanup(async () => {
    for (const run of runs.values()) run.remove()
  })
  if (embedded) for (const run of runs.values()) await run.firstStart()
  for (let index = 0; index < starts; index++) {
    for (const executable of executables) {
      const timed = await externalExistingStartup(executable, args, sandbox, 1)
      const merged = external.get(executable)
      if (merged) {
        merged.readyMs.push(...timed.readyMs)
        merged.phases.push(...timed.phases)
      } else external.set(executable, timed)
      if (!embedded) continue
      const run = runs.get(executable)!
      await (index === starts - 1 ? run.restartUnderLoad() : run.restart())
    }
  }

  for (const executable of executables) {
    console.log(`\n## ${path.relative(process.cwd(), executable)}\n`)
    const cases = [external.get(executable)!]
    const rows = [startupRow(cases[0]!)]
    if (embedded) {
      const { result } = runs.get(executable)!
      cases.push(result.existing, result.first)
      rows.push(startupRow(result.existing), startupRow(result.first), ...embeddedRssRows(result, options))
    }
    console.log(renderTable(rows).split('\n\n').at(-1))
    for (const row of rows) for (const note of row.notes ?? []) console.log(`- ${row.id}: ${note}`)
    console.log(`\n${renderStartupPhases(cases) ?? '(no start-up phases logged)'}`)
  }
}

main().then(
  async () => {
    await cleanUp()
    process.exit(0)
  },
  async (error: unknown) => {
    console.error(error)
    await cleanUp()
    process.exit(1)
  },
)
