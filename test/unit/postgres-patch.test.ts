import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
// The same script `npm install` runs (postinstall) and the build checks.
import { patchPostgres, postgresPatchStatus } from '../../scripts/patch-postgres.mjs'

interface Queue<T> {
  readonly length: number
  readonly capacity: number
  push(x: T): T
  shift(): T | undefined
  remove(x: T): T | null
}
type QueueFactory = <T>(initial?: T[]) => Queue<T>

const require = createRequire(import.meta.url)
/** The package's exports map hides package.json and src/: find the directory from its CommonJS entry. */
const PACKAGE_DIR = path.resolve(path.dirname(require.resolve('postgres')), '..', '..')

const VARIANTS: Array<[string, () => Promise<QueueFactory>]> = [
  [
    'src/queue.js (ESM, what the server imports)',
    async () => (await import(pathToFileURL(path.join(PACKAGE_DIR, 'src/queue.js')).href)).default,
  ],
  [
    'cf/src/queue.js (workerd)',
    async () => (await import(pathToFileURL(path.join(PACKAGE_DIR, 'cf/src/queue.js')).href)).default,
  ],
  ['cjs/src/queue.js (CommonJS)', async () => require(path.join(PACKAGE_DIR, 'cjs/src/queue.js')) as QueueFactory],
]

const CYCLES = 100_000

beforeAll(() => {
  // Idempotent: patches what is not patched yet, refuses unknown file contents.
  patchPostgres()
})

describe('postgres 3.4.9 patches', () => {
  it('are applied to every copy of the queue and of the connection', () => {
    const status = postgresPatchStatus()
    expect(status.version).toBe('3.4.9')
    expect(
      status.files.map((file: { file: string; fix: string; patched: boolean }) => [file.file, file.fix, file.patched]),
    ).toEqual([
      ['src/queue.js', 'queue', true],
      ['cf/src/queue.js', 'queue', true],
      ['cjs/src/queue.js', 'queue', true],
      ['src/connection.js', 'type fetch', true],
      ['cf/src/connection.js', 'type fetch', true],
      ['cjs/src/connection.js', 'type fetch', true],
      ['src/connection.js', 'write batching', true],
      ['cf/src/connection.js', 'write batching', true],
      ['cjs/src/connection.js', 'write batching', true],
    ])
  })

  it('the connection no longer drops the promise of its array-type fetch', () => {
    for (const file of postgresPatchStatus().files.filter((entry: { fix: string }) => entry.fix === 'type fetch')) {
      expect(file.text).not.toMatch(/return fetchArrayTypes\(\)\s*\n/)
      expect(file.text).toContain('return fetchArrayTypes().catch(')
    }
  })

  it('the connection gathers the messages of one turn, up to 64 KiB, into one write', () => {
    for (const file of postgresPatchStatus().files.filter((entry: { fix: string }) => entry.fix === 'write batching')) {
      expect(file.text).not.toContain('chunk.length >= 1024')
      expect(file.text).toContain('gathered >= WRITE_BATCH_BYTES')
    }
  })

  it('running the patch again changes nothing', () => {
    expect(patchPostgres()).toBe(0)
  })
})

describe.each(VARIANTS)('patched queue: %s', (_, load) => {
  let Queue: QueueFactory
  beforeAll(async () => {
    Queue = await load()
  })

  it(`capacity stays bounded over ${CYCLES} push/shift cycles on a queue that never drains`, () => {
    const queue = Queue<number>()
    const backlog = 10
    for (let i = 0; i < backlog; i++) queue.push(i)
    let maxCapacity = 0
    let next = backlog
    let expected = 0
    let outOfOrder = 0
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      queue.push(next++)
      // FIFO order survives every compaction.
      if (queue.shift() !== expected++) outOfOrder++
      maxCapacity = Math.max(maxCapacity, queue.capacity)
    }
    expect(outOfOrder).toBe(0)
    expect(queue.length).toBe(backlog)
    // Unpatched, capacity would be CYCLES + backlog: every shift left a hole.
    expect(maxCapacity).toBeLessThan(200)
    expect(queue.capacity).toBeLessThan(200)
  })

  it('capacity stays bounded with a larger backlog too (holes reclaimed at half)', () => {
    const queue = Queue<number>()
    const backlog = 1_000
    for (let i = 0; i < backlog; i++) queue.push(i)
    let maxCapacity = 0
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      queue.push(cycle)
      queue.shift()
      maxCapacity = Math.max(maxCapacity, queue.capacity)
    }
    expect(queue.length).toBe(backlog)
    expect(maxCapacity).toBeLessThanOrEqual(2 * backlog + 2)
  })

  it('remove() takes out a queued entry, and only a queued one', () => {
    const a = { id: 'a' }
    const b = { id: 'b' }
    const c = { id: 'c' }
    const queue = Queue<object>()
    queue.push(a)
    queue.push(b)
    queue.push(c)
    expect(queue.shift()).toBe(a)
    expect(queue.remove(a)).toBeNull() // already shifted: not in the live part
    expect(queue.remove(c)).toBe(c)
    expect(queue.remove(c)).toBeNull()
    expect(queue.length).toBe(1)
    expect(queue.shift()).toBe(b)
    expect(queue.length).toBe(0)
    expect(queue.shift()).toBeUndefined()
  })

  it('remove() still works after many compactions', () => {
    const queue = Queue<{ n: number }>()
    const live: Array<{ n: number }> = []
    for (let i = 0; i < 5; i++) live.push(queue.push({ n: i }))
    let outOfOrder = 0
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      live.push(queue.push({ n: 5 + cycle }))
      if (queue.shift() !== live.shift()) outOfOrder++
    }
    expect(outOfOrder).toBe(0)
    const middle = live[2]!
    expect(queue.remove(middle)).toBe(middle)
    expect(queue.length).toBe(4)
    const drained: Array<{ n: number }> = []
    while (queue.length > 0) drained.push(queue.shift()!)
    expect(drained).toEqual(live.filter((entry) => entry !== middle))
    expect(queue.capacity).toBe(0) // fully drained: storage reset
  })

  it('an initial array is copied, not shared', () => {
    const initial = [1, 2, 3]
    const queue = Queue(initial)
    queue.shift()
    queue.push(4)
    expect(initial).toEqual([1, 2, 3])
    expect(queue.length).toBe(3)
  })
})
