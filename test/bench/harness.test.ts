// Smoke test of the benchmark harness (bench/run.ts): every scenario runs for about a
// second (--quick) and the report must have every row, with numbers. It never looks at
// the numbers themselves: timings and ratios are what `npm run bench` is for, on a quiet
// machine, not what a test suite running beside other suites can judge.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const EXECUTABLE = path.join(REPO_ROOT, 'dist', 'memsvc')
/** The harness stops itself long before this (quick mode takes about 50 s on two busy cores). */
const RUN_TIMEOUT_MS = 150_000

/** What each row divided by a floor must carry, beside its value. */
const COMPARISON_ROWS: Record<string, ReadonlyArray<'floorValue' | 'ratio' | 'target' | 'p50Ms' | 'p99Ms'>> = {
  ...Object.fromEntries(
    ['rest-list', 'rest-me', 'grpc-list', 'rest-create'].map((id) => [
      id,
      ['floorValue', 'ratio', 'target', 'p50Ms', 'p99Ms'] as const,
    ]),
  ),
  // Each soak's lowest interval against its first (reported, not judged).
  ...Object.fromEntries(
    ['soak', 'soak-floor-patched', 'soak-floor-unpatched'].map((id) => [
      id,
      ['floorValue', 'ratio', 'p50Ms', 'p99Ms'] as const,
    ]),
  ),
  // Reported beside grpc-list's ratio, without a target of its own.
  'grpc-list-fixed': ['floorValue', 'ratio', 'p50Ms', 'p99Ms'],
  // Each soak's CPU per request, worst interval against the first (reported, not judged).
  ...Object.fromEntries(
    ['soak-cpu', 'soak-floor-patched-cpu', 'soak-floor-unpatched-cpu'].map((id) => [
      id,
      ['floorValue', 'ratio'] as const,
    ]),
  ),
  // Each soak's trends: CPU per request and RSS by least squares; memsvc's JS heap by its lowest samples.
  ...Object.fromEntries(
    ['soak', 'soak-floor-patched', 'soak-floor-unpatched'].flatMap((id) =>
      [`${id}-cpu-trend`, `${id}-rss-trend`].map((trend) => [trend, ['ratio', 'target'] as const]),
    ),
  ),
  'soak-heap-trend': ['floorValue', 'ratio'],
  // Idle after the load against idle before it.
  'rss-after': ['floorValue', 'ratio', 'target'],
}
const OTHER_ROWS = [
  'rss-idle',
  'rss-load',
  'ready-external-fresh',
  'ready-external-existing',
  'ready-embedded-existing',
  'ready-embedded-first',
  'rss-embedded-first',
  'rss-embedded-idle',
  'rss-embedded-load',
  'rss-embedded-after',
]

const hasCommand = (command: string) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0

function skipReason(): string | undefined {
  const missing = ['wrk', 'h2load'].filter((tool) => !hasCommand(tool))
  if (missing.length > 0) return `${missing.join(' and ')} not installed (apt-get install wrk nghttp2-client)`
  if (!fs.existsSync(EXECUTABLE)) return 'dist/memsvc is not built (npm run build)'
  if (hasCommand('pg_isready') && spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status !== 0) {
    return 'PostgreSQL is not answering on 127.0.0.1:5432'
  }
  return undefined
}

const reason = skipReason()
if (reason) console.warn(`bench harness smoke test skipped: ${reason}`)

interface Row {
  id: string
  measure: string
  value: number
  floorValue?: number
  ratio?: number
  target?: number
  p50Ms?: number
  p99Ms?: number
}

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-smoke-'))
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }))

function runHarness(extraArgs: string[] = ['--unpatched-soak']): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // --no-build: npm test has just built dist/memsvc; rebuilding here would race the other suites using it.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', '--quick', ...extraArgs, '--no-build', '--out', outDir],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    // SIGINT makes the harness stop its children and drop its database before exiting.
    const timer = setTimeout(() => child.kill('SIGINT'), RUN_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

describe.skipIf(reason !== undefined)('bench harness (npm run bench -- --quick)', () => {
  it(
    'runs every scenario and reports every row with numbers',
    async () => {
      const { code, output } = await runHarness()
      expect(code, output.slice(-4000)).toBe(0)

      const report = JSON.parse(fs.readFileSync(path.join(outDir, 'latest.json'), 'utf8')) as {
        complete: boolean
        rows: Row[]
        machine: { before: { uptime: string }; after: { uptime: string } }
      }
      expect(report.complete).toBe(true)
      expect(report.machine.before.uptime).toMatch(/load average/)
      expect(report.machine.after.uptime).toMatch(/load average/)
      expect(report.rows.map((row) => row.id).sort()).toEqual([...Object.keys(COMPARISON_ROWS), ...OTHER_ROWS].sort())
      const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
      for (const row of report.rows) {
        expect(isNumber(row.value), `${row.id}: value ${row.value}`).toBe(true)
        for (const field of COMPARISON_ROWS[row.id] ?? []) {
          expect(isNumber(row[field]), `${row.id}: ${field} ${row[field]}`).toBe(true)
        }
      }

      const markdown = fs.readFileSync(path.join(outDir, 'latest.md'), 'utf8')
      for (const row of report.rows) expect(markdown).toContain(row.measure)
    },
    RUN_TIMEOUT_MS + 30_000,
  )
})

const MEMORY_ROWS = [
  'memory-ingest',
  'memory-ingest-flatness',
  'memory-create-latency',
  'memory-retrieve-vector',
  'memory-retrieve-vector-1-client',
  'memory-vector-p50',
  'memory-recall',
]
/**
 * Reported without a target: HYBRID beside VECTOR, the floor written in batches, recall at
 * each efSearch of the sweep, the index build and size, and the memory of memsvc and PostgreSQL.
 */
const MEMORY_OTHER_ROWS = [
  'memory-retrieve-hybrid',
  'memory-retrieve-hybrid-1-client',
  'memory-ingest-floor-batched',
  'memory-recall-ef-40',
  'memory-recall-ef-100',
  'memory-recall-ef-200',
  'memory-recall-ef-400',
  'memory-hnsw-build',
  'memory-hnsw-size',
  'memory-rss-memsvc',
  'memory-rss-postgres',
]

describe.skipIf(reason !== undefined)('memory bench (npm run bench -- --memory --quick)', () => {
  it(
    'ingests, measures creates and retrieval, computes recall, and reports every row with numbers',
    async () => {
      const { code, output } = await runHarness(['--memory'])
      expect(code, output.slice(-4000)).toBe(0)

      const report = JSON.parse(fs.readFileSync(path.join(outDir, 'memory-latest.json'), 'utf8')) as {
        complete: boolean
        rows: Row[]
      }
      expect(report.complete).toBe(true)
      expect(report.rows.map((row) => row.id).sort()).toEqual([...MEMORY_ROWS, ...MEMORY_OTHER_ROWS].sort())
      const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
      for (const row of report.rows) {
        expect(isNumber(row.value), `${row.id}: value ${row.value}`).toBe(true)
        expect(
          isNumber(row.p50Ms) ||
            !['memory-create-latency', 'memory-retrieve-vector', 'memory-retrieve-hybrid'].includes(row.id),
          `${row.id}: p50Ms`,
        ).toBe(true)
        if (!MEMORY_ROWS.includes(row.id)) continue
        for (const field of ['floorValue', 'ratio', 'target'] as const)
          expect(isNumber(row[field]), `${row.id}: ${field} ${row[field]}`).toBe(true)
      }
      // Recall is a fraction of the exact top 10, whatever the machine's speed.
      const recall = report.rows.find((row) => row.id === 'memory-recall')!.value
      expect(recall).toBeGreaterThan(0)
      expect(recall).toBeLessThanOrEqual(1)

      const markdown = fs.readFileSync(path.join(outDir, 'memory-latest.md'), 'utf8')
      for (const row of report.rows) expect(markdown).toContain(row.measure)
    },
    RUN_TIMEOUT_MS + 30_000,
  )
})

const SCALE_ROWS = ['scale-list', 'scale-me', 'scale-create']
const SCALE_OTHER_ROWS = ['scale-auth-lookup', 'scale-database-size']

describe.skipIf(reason !== undefined)('scale bench (npm run bench -- --scale --quick)', () => {
  it(
    'loads the keys at each size and reports every route at the largest size against the smallest, with sizes and plans',
    async () => {
      const { code, output } = await runHarness(['--scale'])
      expect(code, output.slice(-4000)).toBe(0)

      const report = JSON.parse(fs.readFileSync(path.join(outDir, 'scale-latest.json'), 'utf8')) as {
        complete: boolean
        rows: Row[]
        extra: string[]
      }
      expect(report.complete).toBe(true)
      expect(report.rows.map((row) => row.id).sort()).toEqual([...SCALE_ROWS, ...SCALE_OTHER_ROWS].sort())
      const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
      for (const row of report.rows) {
        expect(isNumber(row.value), `${row.id}: value ${row.value}`).toBe(true)
        if (!SCALE_ROWS.includes(row.id)) continue
        for (const field of ['floorValue', 'ratio', 'target', 'p50Ms', 'p99Ms'] as const)
          expect(isNumber(row[field]), `${row.id}: ${field} ${row[field]}`).toBe(true)
        // --quick grows the table to 10k keys and compares with 1k.
        expect(row.measure).toContain('at 10k keys')
      }
      const markdown = fs.readFileSync(path.join(outDir, 'scale-latest.md'), 'utf8')
      for (const row of report.rows) expect(markdown).toContain(row.measure)
      expect(markdown).toContain('api_keys_key_hash_key')
      // Each size starts from exactly its row count.
      expect(markdown).toContain('| 10,000 |')
    },
    RUN_TIMEOUT_MS + 30_000,
  )
})

const PROCESS_ROWS = ['processes-direct-1', 'processes-nginx-1', 'processes-nginx-2']

describe.skipIf(reason !== undefined || !fs.existsSync('/usr/sbin/nginx'))(
  'processes bench (npm run bench -- --processes --quick)',
  () => {
    it(
      'measures one process directly and one and two behind nginx, and stops nginx',
      async () => {
        const { code, output } = await runHarness(['--processes'])
        expect(code, output.slice(-4000)).toBe(0)

        const report = JSON.parse(fs.readFileSync(path.join(outDir, 'processes-latest.json'), 'utf8')) as {
          complete: boolean
          rows: Row[]
        }
        expect(report.complete).toBe(true)
        expect(report.rows.map((row) => row.id)).toEqual(PROCESS_ROWS)
        const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
        for (const row of report.rows) {
          for (const field of ['value', 'p50Ms', 'p99Ms'] as const)
            expect(isNumber(row[field]), `${row.id}: ${field} ${row[field]}`).toBe(true)
        }
        for (const row of report.rows.slice(1)) expect(isNumber(row.ratio), `${row.id}: ratio ${row.ratio}`).toBe(true)
        const markdown = fs.readFileSync(path.join(outDir, 'processes-latest.md'), 'utf8')
        expect(markdown).toContain("nginx's cost")
        const nginxPids = [...output.matchAll(/nginx pid (\d+)/g)].map((match) => match[1])
        expect(nginxPids.length).toBe(2)
        for (const pid of nginxPids) expect(fs.existsSync(`/proc/${pid}`), `nginx ${pid} still running`).toBe(false)
      },
      RUN_TIMEOUT_MS + 30_000,
    )
  },
)

const LOCAL_ROWS = ['local-embedder-throughput', 'local-keyword-retrieve', 'local-me-p99-during-ingest']
const LOCAL_OTHER_ROWS = ['local-binary-size', 'local-rss']

describe.skipIf(reason !== undefined)('local bench (npm run bench -- --local --quick)', () => {
  it(
    'measures the LOCAL embedder against onnxruntime-node alone, /users/me during its ingest and keyword-only retrieval',
    async () => {
      const { code, output } = await runHarness(['--local'])
      expect(code, output.slice(-4000)).toBe(0)

      const report = JSON.parse(fs.readFileSync(path.join(outDir, 'local-latest.json'), 'utf8')) as {
        complete: boolean
        rows: Row[]
      }
      expect(report.complete).toBe(true)
      expect(report.rows.map((row) => row.id).sort()).toEqual([...LOCAL_ROWS, ...LOCAL_OTHER_ROWS].sort())
      const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
      for (const row of report.rows) {
        expect(isNumber(row.value), `${row.id}: value ${row.value}`).toBe(true)
        if (!LOCAL_ROWS.includes(row.id)) continue
        for (const field of ['floorValue', 'ratio', 'target'] as const)
          expect(isNumber(row[field]), `${row.id}: ${field} ${row[field]}`).toBe(true)
      }
      const markdown = fs.readFileSync(path.join(outDir, 'local-latest.md'), 'utf8')
      for (const row of report.rows) expect(markdown).toContain(row.measure)
    },
    RUN_TIMEOUT_MS + 30_000,
  )
})

const DOCUMENT_ROWS = [
  'documents-pdf-text',
  'documents-ocr-scanned-pdf',
  'documents-ocr-images',
  'documents-large-pdf-rss',
]
/** Upload → COMPLETED, divided by the same pdfjs floor, reported without a target of its own. */
const DOCUMENT_OTHER_ROWS = ['documents-pdf-text-end-to-end']

describe.skipIf(reason !== undefined)('documents bench (npm run bench -- --documents --quick)', () => {
  it(
    'extracts a text PDF, OCRs scans as a PDF and as images against pdfjs-dist and tesseract.js alone, and bounds the RSS of a large PDF',
    async () => {
      const { code, output } = await runHarness(['--documents'])
      expect(code, output.slice(-4000)).toBe(0)

      const report = JSON.parse(fs.readFileSync(path.join(outDir, 'documents-latest.json'), 'utf8')) as {
        complete: boolean
        rows: Row[]
      }
      expect(report.complete).toBe(true)
      expect(report.rows.map((row) => row.id).sort()).toEqual([...DOCUMENT_ROWS, ...DOCUMENT_OTHER_ROWS].sort())
      const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
      for (const row of report.rows) {
        for (const field of ['value', 'floorValue', 'ratio'] as const)
          expect(isNumber(row[field]), `${row.id}: ${field} ${row[field]}`).toBe(true)
        if (DOCUMENT_ROWS.includes(row.id)) expect(isNumber(row.target), `${row.id}: target ${row.target}`).toBe(true)
      }
      const markdown = fs.readFileSync(path.join(outDir, 'documents-latest.md'), 'utf8')
      for (const row of report.rows) expect(markdown).toContain(row.measure)
    },
    RUN_TIMEOUT_MS + 30_000,
  )
})
