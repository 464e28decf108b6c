// `npm run bench -- --lifecycle`: space export and import (issue 35), each against a floor
// measured in the same run (bench/README.md, "The lifecycle benchmark").
//
//   1. Seeding: the memory benchmark's corpus (lib/memory-corpus.ts, one ~300-character chunk
//      per memory) ingested by memsvc through REST batch create into a space whose embedder is
//      the local fake embedding server (384 dimensions), as --memory does (productIngest).
//   2. Export: `GET /v1/spaces/{id}:export` (NDJSON with vectors), MB/s from the request to the
//      last byte, against `COPY (…) TO STDOUT` of the same rows through postgres.js (memories'
//      columns, chunks' text and offsets, vectors as pgvector text), bytes counted, the two
//      alternating for --rounds rounds after one untimed export saved to a file.
//   3. Import: that file posted to `POST /v1/spaces:import` into a new space whose embedder has
//      the export's fingerprint (so vectors are kept, nothing is embedded), chunks/s to
//      COMPLETED, against the memory benchmark's ingestion floor (postgres.js writing the same
//      memory, chunk and vector rows, one memory per transaction, 4 at once) on the same
//      chunks. Beside it without a target: the floor in transactions of 16 memories.
//
// The import's space, each floor's space and the source each have an embedder of their own
// with the same fingerprint (provider, model, dimensionality) at a different URL path: each
// writes into an HNSW index (one per embedder) that starts empty, as an import into another
// server's database does, and none pays for the graph another side built.
import path from 'node:path'
import postgres from 'postgres'
import { INGEST_BATCH_LIMIT } from '../../src/jobs/handlers/memory-ingest.js'
import { type FakeEmbedder, startFakeEmbedder } from '../../test/support/fake-embedder.js'
import type { BackendMeter } from '../lib/database.js'
import { REPO_ROOT } from '../lib/floors.js'
import { cpuSeconds } from '../lib/machine.js'
import { memoryCorpus } from '../lib/memory-corpus.js'
import { type RunningServer, startMemsvc } from '../lib/memsvc.js'
import { inspectorUrl, startProfiler } from '../lib/profile-window.js'
import {
  copyOut,
  type ExportContents,
  exportCopyStatement,
  exportSpace,
  type ImportRun,
  importSpace,
  readExport,
  type Transfer,
} from '../lib/space-transfer.js'
import { batchedFloorIngest, call, DIMENSIONS, FLOOR_WRITERS, floorIngest, productIngest } from './memory.js'
import { serverArgs } from './startup.js'
import type { BenchMode, ModeContext, ModeReport } from './types.js'

/** The issue's targets. */
const EXPORT_TARGET = 0.5
const IMPORT_TARGET = 0.8
/** Every embedder of the run has this fingerprint (with DIMENSIONS and the TEI protocol). */
const FINGERPRINT_MODEL = 'hashed-bow-lifecycle'
const PROVIDER_TYPE = 'TEI'
/** The issue's MB: 10^6 bytes. */
const BYTES_PER_MB = 1_000_000
const BYTES_PER_MIB = 1024 * 1024
const US_PER_SECOND = 1_000_000
/** The bundle inside dist/memsvc: what --cpu-prof runs under node, since a SEA cannot take the flag. */
const BUNDLE = path.join(REPO_ROOT, 'dist', 'build', 'memsvc.cjs')

/** CPU seconds each process spent over one measured step. */
interface CpuUse {
  memsvc: number
  postgres: number
  harness: number
}

interface Measured<T> {
  value: T
  cpu: CpuUse
}

/** Runs `step` and reads the CPU time memsvc, this database's backends and this process used meanwhile. */
async function measured<T>(server: RunningServer, meter: BackendMeter, step: () => Promise<T>): Promise<Measured<T>> {
  const memsvcBefore = cpuSeconds(server.pid) ?? Number.NaN
  await meter.sample()
  const harnessBefore = process.cpuUsage()
  const value = await step()
  const harness = process.cpuUsage(harnessBefore)
  const postgresSeconds = await meter.sample()
  const memsvcAfter = cpuSeconds(server.pid) ?? Number.NaN
  return {
    value,
    cpu: {
      memsvc: memsvcAfter - memsvcBefore,
      postgres: postgresSeconds,
      harness: (harness.user + harness.system) / US_PER_SECOND,
    },
  }
}

const cpuText = (cpu: CpuUse, withMemsvc = true) =>
  `${withMemsvc ? `memsvc ${cpu.memsvc.toFixed(1)} s, ` : ''}PostgreSQL ${cpu.postgres.toFixed(1)} s, ` +
  `the harness ${cpu.harness.toFixed(1)} s`
const mb = (bytes: number) => bytes / BYTES_PER_MB
const mbPerSecond = (transfer: Transfer) => mb(transfer.bytes) / transfer.seconds

/** With --cpu-prof: memsvc's bundle under node, with an inspector for the export's and the import's windows. */
function launch(context: ModeContext, profileDir: string | undefined) {
  const { options, database } = context
  const args = serverArgs([
    ...['--db-url', database.jdbcUrl, '--db-user', database.user, '--db-max-pool', String(options.poolMax)],
  ])
  return profileDir
    ? {
        executable: process.execPath,
        executableArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--inspect=127.0.0.1:0', BUNDLE],
        args,
        sandbox: context.sandbox,
      }
    : { executable: context.executable, args, sandbox: context.sandbox }
}

/** Profiles memsvc over `step` when the run has an inspector (--cpu-prof), into `file`. */
async function profiled<T>(server: RunningServer, file: string | undefined, step: () => Promise<T>): Promise<T> {
  const url = file ? inspectorUrl(server.log()) : undefined
  if (!url || !file) return step()
  const profiler = await startProfiler(url)
  try {
    return await step()
  } finally {
    await profiler.stop(file)
  }
}

async function benchUser(restUrl: string): Promise<{ userId: string; key: string }> {
  const { rootApiKey } = await call<{ rootApiKey: string }>(restUrl, 'POST', '/v1/system/init', '')
  const { userId } = await call<{ userId: string }>(restUrl, 'POST', '/v1/users', rootApiKey, {
    username: 'bench-lifecycle',
    role: 'USER',
  })
  const { rawApiKey } = await call<{ rawApiKey: string }>(restUrl, 'POST', '/v1/apikeys', rootApiKey, {
    ownerId: userId,
  })
  return { userId, key: rawApiKey }
}

/**
 * One embedder of the run's fingerprint. Registrations are unique by URL among other things,
 * so each role gets its own path on the same fake embedding server.
 */
async function registerEmbedder(restUrl: string, key: string, embedder: FakeEmbedder, role: string): Promise<string> {
  const { embedderId } = await call<{ embedderId: string }>(restUrl, 'POST', '/v1/embedders', key, {
    displayName: `bench lifecycle ${role}`,
    providerType: PROVIDER_TYPE,
    endpointUrl: `${embedder.url}/${role}`,
    modelIdentifier: FINGERPRINT_MODEL,
    dimensionality: DIMENSIONS,
  })
  return embedderId
}

async function createSpace(restUrl: string, key: string, name: string, embedderId: string): Promise<string> {
  const { spaceId } = await call<{ spaceId: string }>(restUrl, 'POST', '/v1/spaces', key, {
    name,
    spaceEmbedders: [{ embedderId, defaultRetrievalWeight: 1 }],
  })
  return spaceId
}

async function storedCounts(
  sql: postgres.Sql,
  spaceId: string,
  embedderId: string,
): Promise<{ memories: number; chunks: number; vectors: number }> {
  const [counts] = await sql<Array<{ memories: number; chunks: number; vectors: number }>>`
    select
      (select count(*)::int from memories where space_id = ${spaceId}) as memories,
      (select count(*)::int from chunks where space_id = ${spaceId}) as chunks,
      (select count(*)::int from chunk_vectors where space_id = ${spaceId} and embedder_id = ${embedderId}) as vectors`
  return counts!
}

/** The untimed first export, saved for the import and checked against the source space. */
function checkExport(contents: ExportContents, chunks: number): string[] {
  const problems: string[] = []
  const [embedder] = contents.embedders
  if (
    contents.embedders.length !== 1 ||
    embedder!.providerType !== PROVIDER_TYPE ||
    embedder!.modelIdentifier !== FINGERPRINT_MODEL ||
    embedder!.dimensionality !== DIMENSIONS
  )
    problems.push(`the header's embedders are not the source's fingerprint: ${JSON.stringify(contents.embedders)}`)
  if (contents.memories !== chunks || contents.chunks !== chunks || contents.vectors !== chunks)
    problems.push(
      `expected ${chunks} memories, chunks and vectors; the export holds ${contents.memories}, ${contents.chunks} and ${contents.vectors}`,
    )
  if (contents.wrongDimension > 0) problems.push(`${contents.wrongDimension} vectors of the wrong dimension`)
  if (contents.end?.memoryCount !== contents.memories || contents.end?.chunkCount !== contents.chunks)
    problems.push(`the trailer says ${JSON.stringify(contents.end)}`)
  return problems
}

interface ExportRounds {
  exports: Array<Measured<Transfer>>
  copies: Array<Measured<Transfer>>
}

/** Floor and export alternate (the floor first in odd rounds); each side's best run counts. */
async function exportRounds(
  context: ModeContext,
  server: RunningServer,
  run: { sql: postgres.Sql; meter: BackendMeter; key: string; spaceId: string; embedderId: string },
  profileFile: string | undefined,
): Promise<ExportRounds> {
  const statement = exportCopyStatement(run.spaceId, run.embedderId)
  const rounds: ExportRounds = { exports: [], copies: [] }
  for (let round = 0; round < context.options.rounds; round++) {
    const sides = [
      async () => rounds.copies.push(await measured(server, run.meter, () => copyOut(run.sql, statement))),
      async () =>
        rounds.exports.push(
          await measured(server, run.meter, () =>
            profiled(server, round === 0 ? profileFile : undefined, () =>
              exportSpace(server.restUrl, run.key, run.spaceId),
            ),
          ),
        ),
    ]
    if (round % 2 === 1) sides.reverse()
    for (const side of sides) await side()
    const copy = rounds.copies.at(-1)!.value
    const exported = rounds.exports.at(-1)!.value
    context.log(
      `  export round ${round + 1}: memsvc ${mb(exported.bytes).toFixed(1)} MB in ${exported.seconds.toFixed(2)} s ` +
        `(${mbPerSecond(exported).toFixed(1)} MB/s), COPY ${mb(copy.bytes).toFixed(1)} MB in ${copy.seconds.toFixed(2)} s ` +
        `(${mbPerSecond(copy).toFixed(1)} MB/s)`,
    )
  }
  return rounds
}

function exportRows(report: ModeReport, chunks: number, rounds: ExportRounds, file: Transfer): void {
  const best = (list: Array<Measured<Transfer>>) =>
    list.reduce((a, b) => (mbPerSecond(b.value) > mbPerSecond(a.value) ? b : a))
  const exported = best(rounds.exports)
  const copy = best(rounds.copies)
  const perRound = rounds.exports
    .map((run, index) => `${run.value.seconds.toFixed(2)}/${rounds.copies[index]!.value.seconds.toFixed(2)}`)
    .join(', ')
  const floorName = 'COPY (select the same memory, chunk and vector rows) TO STDOUT through postgres.js, bytes counted'
  const ratio = mbPerSecond(exported.value) / mbPerSecond(copy.value)
  report.rows.push({
    id: 'lifecycle-export',
    measure: `Space export, MB/s of NDJSON (GET /v1/spaces/{id}:export, ${chunks} chunks with ${DIMENSIONS}-dimension vectors)`,
    value: mbPerSecond(exported.value),
    unit: 'MB/s',
    floor: floorName,
    floorValue: mbPerSecond(copy.value),
    ratio,
    target: EXPORT_TARGET,
    pass: ratio >= EXPORT_TARGET,
    notes: [
      `bytes: the export ${exported.value.bytes} (${(exported.value.bytes / chunks).toFixed(0)} a chunk), COPY ${copy.value.bytes} ` +
        `(${(copy.value.bytes / chunks).toFixed(0)} a chunk)`,
      `rounds (memsvc / COPY, s): ${perRound}; the untimed first export (saved to a file) took ${file.seconds.toFixed(2)} s`,
      `CPU over the best export: ${cpuText(exported.cpu)}; over the best COPY: ${cpuText(copy.cpu, false)}`,
    ],
  })
  const exportChunkRate = chunks / exported.value.seconds
  const copyChunkRate = chunks / copy.value.seconds
  report.rows.push({
    id: 'lifecycle-export-chunks',
    measure: `Space export, chunks/s (the same runs: the ratio without the bytes each side writes a chunk as)`,
    value: exportChunkRate,
    unit: '/s',
    floor: 'the same COPY, chunks/s',
    floorValue: copyChunkRate,
    ratio: exportChunkRate / copyChunkRate,
  })
}

interface ImportSide {
  run: ImportRun
  cpu: CpuUse
  embeddedInputs: number
  stored: { memories: number; chunks: number; vectors: number }
}

function importRows(
  report: ModeReport,
  chunks: number,
  imported: ImportSide,
  floor: Measured<number>,
  batchedFloor: Measured<number>,
): void {
  const rate = chunks / imported.run.seconds
  const { result } = imported.run
  const counted = result.memoriesImported === chunks && result.vectorsImported === chunks
  const stored =
    imported.stored.memories === chunks && imported.stored.chunks === chunks && imported.stored.vectors === chunks
  const noEmbedding = result.memoriesReembedding === 0 && imported.embeddedInputs === 0
  const ratio = rate / floor.value
  report.rows.push({
    id: 'lifecycle-import',
    measure: `Space import with matching fingerprints, chunks/s (POST /v1/spaces:import of the export, first byte → COMPLETED, ${chunks} chunks)`,
    value: rate,
    unit: '/s',
    floor: `the ingestion floor: postgres.js writing the same memory, chunk and vector rows, one memory per transaction, ${FLOOR_WRITERS} at once`,
    floorValue: floor.value,
    ratio,
    target: IMPORT_TARGET,
    pass: ratio >= IMPORT_TARGET && counted && stored && noEmbedding,
    notes: [
      `${imported.run.bytes} bytes (${(mb(imported.run.bytes) / imported.run.seconds).toFixed(1)} MB/s) in ` +
        `${imported.run.seconds.toFixed(2)} s; the POST answered after ${imported.run.answerSeconds.toFixed(2)} s`,
      `the import says: ${result.memoriesImported} memories imported, ${result.memoriesSkipped} skipped, ` +
        `${result.memoriesReembedding} re-embedding, ${result.chunksImported} chunks, ${result.vectorsImported} vectors, ` +
        `${result.linesApplied} lines`,
      `stored in the new space: ${imported.stored.memories} memories, ${imported.stored.chunks} chunks, ` +
        `${imported.stored.vectors} vectors; texts sent to the embedder during the import: ${imported.embeddedInputs}`,
      `CPU over the import: ${cpuText(imported.cpu)}; over the floor: ${cpuText(floor.cpu, false)}`,
    ],
  })
  report.rows.push({
    id: 'lifecycle-import-floor-batched',
    measure: `The ingestion floor written ${INGEST_BATCH_LIMIT} memories per transaction, ${chunks} chunks, vs one memory per transaction`,
    value: batchedFloor.value,
    unit: '/s',
    floor: 'the ingestion floor, one memory per transaction',
    floorValue: floor.value,
    ratio: batchedFloor.value / floor.value,
    notes: [
      `the import divided by this floor: ${(rate / batchedFloor.value).toFixed(3)}`,
      `CPU: ${cpuText(batchedFloor.cpu, false)}`,
    ],
  })
}

export const lifecycleMode: BenchMode = {
  prefix: 'lifecycle-',
  describe: (options) =>
    `${options.quick ? 'quick (smoke test; numbers are not measurements), ' : ''}lifecycle: export and import of a ` +
    `space of ${options.lifecycleChunks} chunks with ${DIMENSIONS}-dimension vectors, export ${options.rounds} rounds ` +
    `against COPY TO STDOUT, import against the ingestion floor; PostgreSQL pools of ${options.poolMax} connections`,
  usesWrk: false,
  pinning: 'memsvc on core 1 (taskset) when possible; this process (clients, embedder, floors) and PostgreSQL unpinned',
  async run(context, report) {
    const { options, database, log } = context
    const chunks = options.lifecycleChunks
    const profileDir = options.cpuProf
      ? path.join(options.outDir, 'profiles', new Date().toISOString().replace(/[:.]/g, '-'))
      : undefined
    const corpus = memoryCorpus()
    const embedder = await startFakeEmbedder({ dimensions: DIMENSIONS })
    const sql = postgres(database.url, { max: options.poolMax, onnotice: () => {} })
    const meter = await database.openBackendMeter()
    const server = await startMemsvc(launch(context, profileDir))
    log(`memsvc pid ${server.pid} READY in ${server.readyMs.toFixed(0)} ms (fresh database)`)
    if (profileDir) log(`CPU profiles of memsvc: ${profileDir}`)
    try {
      const user = await benchUser(server.restUrl)
      const { restUrl } = server
      const sourceEmbedder = await registerEmbedder(restUrl, user.key, embedder, 'source')
      const importEmbedder = await registerEmbedder(restUrl, user.key, embedder, 'import')
      const floorEmbedder = await registerEmbedder(restUrl, user.key, embedder, 'floor')
      const batchedFloorEmbedder = await registerEmbedder(restUrl, user.key, embedder, 'floor-batched')
      const sourceSpace = await createSpace(restUrl, user.key, 'bench lifecycle source', sourceEmbedder)

      log(`lifecycle: memsvc ingests ${chunks} chunks through REST batch create (seeding)…`)
      const seeding = await productIngest({ server, userKey: user.key }, sql, corpus, sourceSpace, chunks)
      const source = await storedCounts(sql, sourceSpace, sourceEmbedder)
      if (seeding.failed > 0 || source.chunks !== chunks || source.vectors !== chunks)
        throw new Error(`seeding: ${seeding.failed} memories FAILED; stored ${JSON.stringify(source)}`)
      report.rows.push({
        id: 'lifecycle-seeding',
        measure: `Seeding: memsvc's ingest of the ${chunks} chunks (REST batch create, jobs, embedder), chunks/s`,
        value: seeding.rate,
        unit: '/s',
      })
      log('lifecycle: vacuum analyze and checkpoint after the seeding…')
      await database.settle()

      const file = path.join(context.workDir, 'space-export.ndjson')
      log('lifecycle: first export, saved to a file and checked (untimed)…')
      const saved = await exportSpace(restUrl, user.key, sourceSpace, file)
      const contents = await readExport(file)
      const problems = checkExport(contents, chunks)
      if (problems.length > 0) throw new Error(`the export is not the source space: ${problems.join('; ')}`)
      log(`  ${mb(saved.bytes).toFixed(1)} MB, ${contents.memories} memories, ${contents.vectors} vectors`)
      report.rows.push({
        id: 'lifecycle-export-size',
        measure: `Export file of ${chunks} chunks with vectors`,
        value: saved.bytes / BYTES_PER_MIB,
        unit: 'MiB',
      })

      log(`lifecycle: export against COPY TO STDOUT, ${options.rounds} rounds…`)
      const rounds = await exportRounds(
        context,
        server,
        { sql, meter, key: user.key, spaceId: sourceSpace, embedderId: sourceEmbedder },
        profileDir && path.join(profileDir, 'lifecycle-export.cpuprofile'),
      )
      exportRows(report, chunks, rounds, saved)

      const floorSpace = await createSpace(restUrl, user.key, 'bench lifecycle floor', floorEmbedder)
      const batchedFloorSpace = await createSpace(
        restUrl,
        user.key,
        'bench lifecycle floor batched',
        batchedFloorEmbedder,
      )
      await database.settle()
      log(`lifecycle: ingestion floor, ${chunks} chunks through postgres.js, one memory per transaction…`)
      const floor = await measured(server, meter, () =>
        floorIngest(sql, corpus, { spaceId: floorSpace, embedderId: floorEmbedder, userId: user.userId }, chunks),
      )
      log(`  ${floor.value.toFixed(0)} chunks/s`)
      await database.settle()

      log('lifecycle: import of the export into a new space (embedder of the same fingerprint)…')
      const inputsBefore = embedder.requests.reduce((total, seen) => total + seen.inputs.length, 0)
      const imported = await measured(server, meter, () =>
        profiled(server, profileDir && path.join(profileDir, 'lifecycle-import.cpuprofile'), () =>
          importSpace(restUrl, user.key, file, {
            newSpaceName: 'bench lifecycle import',
            embedderIds: importEmbedder,
          }),
        ),
      )
      const embeddedInputs = embedder.requests.reduce((total, seen) => total + seen.inputs.length, 0) - inputsBefore
      const stored = await storedCounts(sql, imported.value.result.spaceId, importEmbedder)
      log(`  ${(chunks / imported.value.seconds).toFixed(0)} chunks/s; stored ${JSON.stringify(stored)}`)
      await database.settle()

      log(`lifecycle: ingestion floor in transactions of ${INGEST_BATCH_LIMIT} memories, ${chunks} chunks…`)
      const batchedFloor = await measured(server, meter, () =>
        batchedFloorIngest(
          sql,
          corpus,
          { spaceId: batchedFloorSpace, embedderId: batchedFloorEmbedder, userId: user.userId },
          chunks,
        ),
      )
      log(`  ${batchedFloor.value.toFixed(0)} chunks/s`)
      importRows(
        report,
        chunks,
        { run: imported.value, cpu: imported.cpu, embeddedInputs, stored },
        floor,
        batchedFloor,
      )
      report.extra.push(
        'Each side writes into an HNSW index of its own that starts empty (one embedder each, all of the same ' +
          'fingerprint), as an import into another database does. The export floor copies the rows without ORDER BY ' +
          '(the cheapest way PostgreSQL hands them out); the export streams them memory by memory. The corpus is the ' +
          "memory benchmark's: its hashed bag-of-words vectors have about 40 non-zero values of 384, so each vector " +
          'is shorter as text than a dense embedding would be, on both sides.',
      )
    } catch (error) {
      log(`memsvc's log, last lines:\n${server.log().slice(-4000)}`)
      throw error
    } finally {
      await server.stop()
      await meter.close()
      await sql.end({ timeout: 5 })
      await embedder.close()
    }
  },
}
