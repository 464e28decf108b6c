// Instructions per gRPC ListApiKeys call, counted by callgrind, for the gRPC floor and for
// one or more memsvc executables. On these shared machines a rate moves by ±15 % from run
// to run, too much to see a change of a few per cent; an instruction count hardly moves
// with the machine's load (runs of one build within 1.2 %), so it compares two builds of
// memsvc (or memsvc and its floor), one code change at a time.
//
// Counts are not time. Under callgrind a server runs ~50× slower, so it always has many
// calls queued and batches its socket reads and writes far more than in a real run: the
// cost of I/O events (the database round trip above all) is under-counted here. Read the
// main thread's count as the work in the code itself; the bench's ratio stays the result.
//
// Usage: node --import tsx bench/tools/instructions.ts [--calls N] [--warmup N] [--no-floor] [EXECUTABLE ...]
//   (default executable: dist/memsvc; needs valgrind and h2load)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { GENERATED_CODE } from '../lib/build.js'
import { createBenchDatabase } from '../lib/database.js'
import { createFixtures, READER_KEYS } from '../lib/fixtures.js'
import { REPO_ROOT } from '../lib/floors.js'
import { createSandbox, startMemsvc } from '../lib/memsvc.js'
import {
  cleanUp,
  hasCommand,
  installExitHandlers,
  onCleanup,
  runToCompletion,
  sleep,
  spawnTracked,
  stopProcess,
} from '../lib/processes.js'
import { serverArgs } from '../scenarios/startup.js'

const DEFAULT_CALLS = 3_000
/** Enough calls for V8 to have optimised the hot path before counting starts. */
const DEFAULT_WARMUP_CALLS = 10_000
/** memsvc starts in about a minute under callgrind; leave room for a loaded machine. */
const START_TIMEOUT_MS = 10 * 60 * 1000
const START_POLL_MS = 500
/** A bound on one h2load run of a server ~50× slower than usual. */
const LOAD_TIMEOUT_MS = 20 * 60 * 1000
const SERVER_LIFETIME_MS = 60 * 60 * 1000
/** The same concurrency as the bench's grpc-list scenario. */
const CONNECTIONS = 16
const STREAMS_PER_CONNECTION = 4
/** callgrind numbers threads from 1, the main thread, in its per-thread file names. */
const MAIN_THREAD_SUFFIX = '-01'

const MEMSVC_LISTENING = /listening rest=\S+ grpc=(\S*:\d+)/
const FLOOR_LISTENING = /^BENCH_FLOOR_LISTENING port=(\d+)$/m

interface Counted {
  name: string
  mainThread: number
  otherThreads: number
}

function options() {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      calls: { type: 'string' },
      warmup: { type: 'string' },
      'no-floor': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(
      'usage: node --import tsx bench/tools/instructions.ts [--calls N] [--warmup N] [--no-floor] [EXECUTABLE ...]',
    )
    process.exit(0)
  }
  const count = (name: string, text: string | undefined, fallback: number) => {
    const value = text === undefined ? fallback : Number(text)
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number of calls, got ${text}`)
    return value
  }
  return {
    calls: count('calls', values.calls, DEFAULT_CALLS),
    warmup: count('warmup', values.warmup, DEFAULT_WARMUP_CALLS),
    floor: !values['no-floor'],
    executables: (positionals.length > 0 ? positionals : [path.join(REPO_ROOT, 'dist', 'memsvc')]).map((file) =>
      path.resolve(file),
    ),
  }
}

/** Total instructions in the dump files callgrind wrote for `outFile`'s first client dump, split by thread. */
function readDump(outFile: string): { mainThread: number; otherThreads: number } {
  const prefix = `${path.basename(outFile)}.1`
  const dumps = fs.readdirSync(path.dirname(outFile)).filter((file) => file.startsWith(prefix))
  if (dumps.length === 0) throw new Error(`callgrind wrote no dump for ${outFile}`)
  let mainThread = 0
  let otherThreads = 0
  for (const file of dumps) {
    const text = fs.readFileSync(path.join(path.dirname(outFile), file), 'utf8')
    const total = /^(?:summary|totals): (\d+)/m.exec(text)
    if (!total) throw new Error(`no instruction total in ${file}`)
    if (file.endsWith(MAIN_THREAD_SUFFIX)) mainThread += Number(total[1])
    else otherThreads += Number(total[1])
  }
  return { mainThread, otherThreads }
}

async function main(): Promise<void> {
  const { calls, warmup, floor, executables } = options()
  const missing = ['valgrind', 'callgrind_control', 'h2load'].filter((tool) => !hasCommand(tool))
  if (missing.length > 0) throw new Error(`missing ${missing.join(', ')}: apt-get install valgrind nghttp2-client`)
  if (!fs.existsSync(path.join(REPO_ROOT, GENERATED_CODE)))
    throw new Error(`${GENERATED_CODE} is missing: run "npm run build" first`)
  // Imported only now: it encodes the request with the generated code checked for above.
  const { LIST_API_KEYS_PATH, preflightListApiKeys, writeListApiKeysFrame } = await import('../lib/grpc-frame.js')
  installExitHandlers()
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-instructions-'))
  onCleanup(async () => fs.rmSync(workDir, { recursive: true, force: true }))
  const database = await createBenchDatabase()
  onCleanup(() => database.drop())
  // One sandbox for every executable: they share the database, so they need its encryption key.
  const sandbox = createSandbox()
  onCleanup(async () => sandbox.remove())
  const args = serverArgs(['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', '5'])

  console.log(`fixtures (${path.basename(executables[0]!)}, outside callgrind)…`)
  const first = await startMemsvc({ executable: executables[0]!, args, sandbox })
  const fixtures = await createFixtures(first.restUrl)
  await first.stop()
  const frameFile = path.join(workDir, 'list-api-keys.grpc')
  const frame = writeListApiKeysFrame(frameFile)
  const responseFile = path.join(workDir, 'list-api-keys.json')
  fs.writeFileSync(responseFile, fixtures.listBody)
  const authorization = `Bearer ${fixtures.reader.key}`

  const targets = [
    ...(floor
      ? [
          {
            name: 'grpc-js unary floor',
            command: [
              process.execPath,
              '--import',
              'tsx',
              path.join(REPO_ROOT, 'bench', 'floors', 'grpc-unary.ts'),
              '--response-file',
              responseFile,
            ],
            isFloor: true,
          },
        ]
      : []),
    ...executables.map((executable) => ({ name: executable, command: [executable, 'serve', ...args], isFloor: false })),
  ]
  const counted: Counted[] = []
  for (const [index, target] of targets.entries()) {
    console.log(`${target.name}: starting under callgrind…`)
    const outFile = path.join(workDir, `target-${index}.callgrind`)
    const child = spawnTracked(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        '--separate-threads=yes',
        `--callgrind-out-file=${outFile}`,
        ...target.command,
      ],
      {
        env: target.isFloor ? { ...process.env, NODE_OPTIONS: '' } : sandbox.env,
        cwd: target.isFloor ? REPO_ROOT : sandbox.dir,
        timeoutMs: SERVER_LIFETIME_MS,
      },
    )
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const deadline = Date.now() + START_TIMEOUT_MS
    const listeningLine = target.isFloor ? FLOOR_LISTENING : MEMSVC_LISTENING
    let listening = listeningLine.exec(output)
    while (!listening) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`${target.name} did not start under callgrind:\n${output.slice(-4000)}`)
      await sleep(START_POLL_MS)
      listening = listeningLine.exec(output)
    }
    const address = target.isFloor ? `127.0.0.1:${listening[1]}` : listening[1]!
    // Counted calls must be the ones under test: ten keys and gRPC status 0.
    for (;;) {
      try {
        const listed = await preflightListApiKeys(address, frame, target.isFloor ? undefined : authorization)
        if (listed.keys.length !== READER_KEYS)
          throw new Error(`${target.name} listed ${listed.keys.length} keys, expected ${READER_KEYS}`)
        break
      } catch (error) {
        // memsvc logs its ports before it is READY; it answers UNAVAILABLE until then.
        if (Date.now() > deadline) throw error
        await sleep(START_POLL_MS)
      }
    }
    const load = async (count: number) => {
      const result = await runToCompletion(
        'h2load',
        [
          ...['-c', String(CONNECTIONS), '-m', String(STREAMS_PER_CONNECTION), '-n', String(count), '-d', frameFile],
          ...['-H', 'content-type: application/grpc', '-H', 'te: trailers', '-H', `authorization: ${authorization}`],
          `http://${address}${LIST_API_KEYS_PATH}`,
        ],
        { timeoutMs: LOAD_TIMEOUT_MS },
      )
      const succeeded = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded/.exec(result.stdout)
      if (result.code !== 0 || Number(succeeded?.[1]) !== count)
        throw new Error(
          `h2load against ${target.name} did not complete ${count} calls:\n${result.stdout}${result.stderr}`,
        )
    }
    console.log(`${target.name}: ${warmup} warm-up calls, then ${calls} counted…`)
    await load(warmup)
    const control = (command: string) =>
      runToCompletion('callgrind_control', [command, String(child.pid)], { timeoutMs: LOAD_TIMEOUT_MS })
    await control('--instr=on')
    await load(calls)
    await control('--dump')
    await control('--instr=off')
    await stopProcess(child)
    const { mainThread, otherThreads } = readDump(outFile)
    counted.push({ name: target.name, mainThread: mainThread / calls, otherThreads: otherThreads / calls })
  }

  console.log(
    `\nInstructions per ListApiKeys call (${calls} calls counted after ${warmup} warm-up; 16 connections × 4 streams)\n`,
  )
  console.log('| Server | Main thread | Other threads (GC, compiler) |')
  console.log('|---|---:|---:|')
  for (const row of counted)
    console.log(
      `| ${row.name} | ${Math.round(row.mainThread).toLocaleString('en-US')} | ${Math.round(row.otherThreads).toLocaleString('en-US')} |`,
    )
}

main()
  .catch((error: unknown) => {
    console.error(`instructions: ${(error as Error).message}`)
    process.exitCode = 1
  })
  .finally(() => cleanUp())
