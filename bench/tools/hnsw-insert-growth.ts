// PostgreSQL and pgvector alone, without memsvc: how an HNSW index's inserts slow down as it
// grows. A scratch database gets a table of the memory benchmark's vectors (384 dimensions,
// the same corpus and embedding) with the index memsvc makes (halfvec, cosine,
// ef_construction 200 unless given); `writers` connections insert `rows` rows, 16 per
// statement. Per tenth: rows/s, wall and backend CPU time per row, buffer hits and reads
// per row, and CPU per buffer hit. The database is dropped at the end.
//   node --import tsx bench/tools/hnsw-insert-growth.ts [rows=100000] [writers=1] [ef_construction=200] [m=16]
import fs from 'node:fs'
import postgres from 'postgres'
import { HNSW_EF_CONSTRUCTION, indexedVectorType } from '../../src/db/vector-storage.js'
import { hashedBagOfWords } from '../../test/support/fake-embedder.js'
import { memoryCorpus } from '../lib/memory-corpus.js'

const [rowsText = '100000', writersText = '1', efText = String(HNSW_EF_CONSTRUCTION), mText = '16'] =
  process.argv.slice(2)
const ROWS = Number(rowsText)
const WRITERS = Number(writersText)
const DIMENSIONS = 384
const ROWS_PER_STATEMENT = 16
const TENTHS = 10
/** A PostgreSQL 15 backend publishes its statistics at most once a second. */
const STATS_FLUSH_MS = 1_100
/** /proc/PID/stat counts CPU time in clock ticks of 10 ms on Linux. */
const MS_PER_TICK = 10
const ADMIN_URL = process.env.ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
const name = `hnsw_growth_${process.pid}`
await admin.unsafe(`create database ${name}`)
const target = new URL(ADMIN_URL)
target.pathname = `/${name}`
const sql = postgres(target.toString(), { max: WRITERS, onnotice: () => {} })
try {
  const type = indexedVectorType(DIMENSIONS)
  await sql.unsafe(
    `create extension vector; create table v (id bigint primary key, e vector not null);
     create index v_hnsw on v using hnsw ((e::${type}) halfvec_cosine_ops) with (ef_construction = ${Number(efText)}, m = ${Number(mText)})`,
  )
  const corpus = memoryCorpus()
  const connections = await Promise.all(Array.from({ length: WRITERS }, () => sql.reserve()))
  const backendPids: number[] = []
  for (const connection of connections)
    backendPids.push((await connection<Array<{ pid: number }>>`select pg_backend_pid() as pid`)[0]!.pid)
  // utime and stime: fields 14 and 15 of /proc/PID/stat, counted after the command name's ") ".
  const backendCpuMs = () =>
    backendPids.reduce((sum, pid) => {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return sum + (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK
    }, 0)
  const blocks = async () =>
    (
      await admin<Array<{ hit: number; read: number }>>`
        select blks_hit::float8 as hit, blks_read::float8 as read from pg_stat_database where datname = ${name}`
    )[0]!
  const perTenth = ROWS / TENTHS
  let next = 0
  console.log(`${ROWS} rows, ${WRITERS} writer(s), ef_construction ${efText}, m ${mText}`)
  for (let tenth = 1; tenth <= TENTHS; tenth++) {
    const [wallStart, cpuStart, blocksStart] = [performance.now(), backendCpuMs(), await blocks()]
    const end = tenth * perTenth
    await Promise.all(
      connections.map(async (connection) => {
        while (next < end) {
          const from = next
          next = Math.min(from + ROWS_PER_STATEMENT, end)
          const rows = []
          for (let id = from; id < next; id++)
            rows.push({ id, e: `[${hashedBagOfWords(corpus.chunk(id), DIMENSIONS).join(',')}]` })
          await connection`insert into v ${connection(rows)}`
        }
      }),
    )
    const wallMs = performance.now() - wallStart
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS))
    const cpuMs = backendCpuMs() - cpuStart
    const blocksEnd = await blocks()
    const hits = blocksEnd.hit - blocksStart.hit
    console.log(
      `tenth ${tenth}: ${Math.round((perTenth / wallMs) * 1000)} rows/s; per row: wall ${(wallMs / perTenth).toFixed(3)} ms, ` +
        `backend CPU ${(cpuMs / perTenth).toFixed(3)} ms, buffer hits ${Math.round(hits / perTenth)}, ` +
        `reads ${((blocksEnd.read - blocksStart.read) / perTenth).toFixed(2)}; CPU per hit ${((cpuMs * 1000) / hits).toFixed(3)} µs`,
    )
  }
  for (const connection of connections) connection.release()
  const [sizes] = await sql<Array<{ index: string; cache: string }>>`
    select pg_size_pretty(pg_relation_size('v_hnsw')) as index, current_setting('shared_buffers') as cache`
  console.log(`index ${sizes!.index}; shared_buffers ${sizes!.cache}`)
} finally {
  await sql.end()
  await admin.unsafe(`drop database ${name}`)
  await admin.end()
}
