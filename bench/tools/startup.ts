// Start-up alone, without the rest of the bench: spawn → READY of one or more executables,
// several starts per case, with the phases memsvc logs on READY and embedded mode's RSS.
// Executables are taken in turn for each start, so a machine that gets busier part-way
// slows all of them alike.
//
//   node --import tsx bench/tools/startup.ts [--starts 5] [--seconds 5] dist/memsvc [old/memsvc …]
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createBenchDatabase } from '../lib/database.js'
import { createSandbox } from '../lib/memsvc.js'
import type { BenchOptions } from '../lib/options.js'
import { cleanUp, installExitHandlers, onCleanup } from '../lib/processes.js'
import { renderTable } from '../lib/report.js'
import {
  embeddedRssRows,
  embeddedStartup,
  externalExistingStartup,
  renderStartupPhases,
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
  const executables = positionals.length > 0 ? positionals : ['dist/memsvc']
  const starts = Number(values.starts ?? DEFAULT_STARTS)
  const seconds = Number(values.seconds ?? DEFAULT_LOAD_SECONDS)
  installExitHandlers()
  // Only what the startup scenario reads: how long the embedded load runs, and idle settling.
  const options = { quick: false, seconds, warmupSeconds: 0 } as BenchOptions
  const database = await createBenchDatabase()
  onCleanup(() => database.drop())
  const sandbox = createSandbox()
  onCleanup(async () => sandbox.remove())
  const args = serverArgs(['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', '5'])
  for (const executable of executables) {
    const resolved = path.resolve(executable)
    console.log(`\n## ${executable}`)
    // The first start migrates the fresh database (and is not counted); later executables find it migrated.
    await externalExistingStartup(resolved, args, sandbox, 1)
    const timed = await externalExistingStartup(resolved, args, sandbox, starts)
    const cases = [timed]
    const rows = [startupRow(timed)]
    if (!values['no-embedded']) {
      const embedded = await embeddedStartup(resolved, options, starts)
      cases.push(embedded.existing, embedded.first)
      rows.push(startupRow(embedded.existing), startupRow(embedded.first), ...embeddedRssRows(embedded, options))
    }
    console.log(renderTable(rows))
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
