// Floor for `POST /v1/apikeys`: how fast postgres.js alone inserts single api_keys
// rows, CONCURRENCY at a time — the same table, columns, indexes and foreign key, and
// the same dynamic-insert helper memsvc's insertApiKey uses. A client, not a server: it
// runs for the given time and prints one BENCH_RESULT line.
//   --db-url postgres://…  --user-id UUID  --seconds N  --warmup-seconds N  --concurrency N  --pool-max N
import crypto from 'node:crypto'
import postgres from 'postgres'
import { latencySummary } from '../lib/stats.js'
import { floorArgs } from './floor-common.js'

const KEY_HASH_BYTES = 32
const NS_PER_US = 1000n
const MS_PER_SECOND = 1000

const options = floorArgs(['db-url', 'user-id', 'seconds', 'warmup-seconds', 'concurrency', 'pool-max'])
const concurrency = Number(options.concurrency)
// One connection per insert in flight, as memsvc would open for 16 concurrent POSTs, within the run's pool limit.
const sql = postgres(options['db-url']!, {
  max: Math.min(concurrency, Number(options['pool-max'])),
  onnotice: () => {},
  transform: { undefined: null },
})
const userId = options['user-id']!

function row() {
  const now = new Date()
  return {
    id: crypto.randomUUID(),
    user_id: userId,
    key_prefix: `msk_${crypto.randomBytes(6).toString('hex').slice(0, 8)}`,
    status: 'ACTIVE',
    labels: sql.json({ bench: 'post' }),
    expires_at: null,
    last_used_at: null,
    created_at: now,
    updated_at: now,
    created_by: userId,
    updated_by: userId,
    key_hash: crypto.randomBytes(KEY_HASH_BYTES),
  }
}

async function insertLoop(until: number, latenciesUs: number[] | undefined): Promise<number> {
  let done = 0
  while (Date.now() < until) {
    const started = process.hrtime.bigint()
    await sql`insert into api_keys ${sql(row() as never)}`
    latenciesUs?.push(Number((process.hrtime.bigint() - started) / NS_PER_US))
    done++
  }
  return done
}

async function phase(seconds: number, latenciesUs?: number[]): Promise<{ inserts: number; seconds: number }> {
  const started = performance.now()
  const until = Date.now() + seconds * MS_PER_SECOND
  const counts = await Promise.all(Array.from({ length: concurrency }, () => insertLoop(until, latenciesUs)))
  return {
    inserts: counts.reduce((sum, count) => sum + count, 0),
    seconds: (performance.now() - started) / MS_PER_SECOND,
  }
}

await phase(Number(options['warmup-seconds']))
const latenciesUs: number[] = []
const cpuBefore = process.cpuUsage()
const measured = await phase(Number(options.seconds), latenciesUs)
const cpu = process.cpuUsage(cpuBefore)
await sql.end({ timeout: 5 })
const cpuUsPerRequest = measured.inserts > 0 ? (cpu.user + cpu.system) / measured.inserts : undefined
process.stdout.write(
  `BENCH_RESULT ${JSON.stringify({ requests: measured.inserts, seconds: measured.seconds, cpuUsPerRequest, ...latencySummary(latenciesUs) })}\n`,
)
