// Two fixes to postgres 3.4.9, applied to node_modules as the package's postinstall and
// again from build.ts, which refuses to build an unpatched tree. Each touches only files
// whose content is exactly the known 3.4.9 file (checked by SHA-256), so an upgrade of the
// package fails loudly here instead of silently shipping without the fix.
//
// 1. Queue (docs/architecture.md, "The patched database client"). The connection queue degrades under sustained load: shift()
//    leaves a hole in its array and only resets when the queue drains completely, and
//    remove() scans the whole array with indexOf. On a server whose queue never fully
//    drains, the array grows without bound and each operation gets slower (13.0k -> 6.6k
//    req/s over 40 s, measured here; upstream porsager/postgres#747). The queue is
//    rewritten to compact itself once more than half of it is holes, and to search only
//    the live part.
//
// 2. Type fetch. On a new connection, postgres.js fetches the array types with
//    `return fetchArrayTypes()` from a protocol handler that drops the promise. When the
//    connection dies during that query (the database restarts, a proxy resets it), the
//    connection's own error path already fails the pending queries and reconnects, but the
//    dropped promise rejects with nobody listening: an unhandled rejection, which ends a
//    Node process. Seen here as ECONNRESET while a test cut the database off.
//
// 3. Write batching. A connection gathers the messages of the statements sent in one turn
//    of the event loop and writes them at its end, one system call for all of them, but it
//    writes at once as soon as 1 KiB has gathered. A statement carrying a vector as text
//    (384 dimensions are about 8 KiB) went out alone, and the statements after it (the
//    COMMIT of its transaction, the next chunk's insert) in a second write. Each write to
//    the database socket costs the sender tens of microseconds here and wakes the backend:
//    socket writes were half of memsvc's CPU time while it ingested or retrieved. The
//    threshold is 64 KiB, and the pieces are joined once, at the write, instead of copied
//    into a growing buffer at every message.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const PACKAGE_DIR = path.join(ROOT, 'node_modules', 'postgres')

const QUEUE_MARKER = 'memsvc: compacting queue'
const TYPE_FETCH_MARKER = 'memsvc: type fetch failure handled'
const WRITE_BATCH_MARKER = 'memsvc: writes batched up to WRITE_BATCH_BYTES'

const queueBody = `// ${QUEUE_MARKER} (see scripts/patch-postgres.mjs)
// Holes are only reclaimed in batches: compacting on every shift would be O(n) each time.
const COMPACT_AT_LEAST = 64

function Queue(initial = []) {
  let xs = initial.slice()
  let index = 0

  return {
    get length() {
      return xs.length - index
    },
    get capacity() {
      return xs.length
    },
    remove: (x) => {
      const at = xs.indexOf(x, index)
      return at === -1
        ? null
        : (xs.splice(at, 1), x)
    },
    push: (x) => (xs.push(x), x),
    shift: () => {
      const out = xs[index++]

      if (index === xs.length) {
        index = 0
        xs = []
      } else {
        xs[index - 1] = undefined
        if (index >= COMPACT_AT_LEAST && index * 2 >= xs.length) {
          xs = xs.slice(index)
          index = 0
        }
      }

      return out
    }
  }
}
`

const TYPE_FETCH_CALL = 'return fetchArrayTypes()'
// The connection's error path (errored/queryError) has already rejected the queries that
// were waiting and the close handler reconnects; the rejection carries nothing more.
const TYPE_FETCH_HANDLED = `return fetchArrayTypes().catch(() => { /* ${TYPE_FETCH_MARKER} (see scripts/patch-postgres.mjs) */ })`

function patchTypeFetch(text) {
  const at = text.indexOf(TYPE_FETCH_CALL)
  if (at === -1 || text.indexOf(TYPE_FETCH_CALL, at + 1) !== -1)
    throw new Error('expected exactly one fetchArrayTypes() call')
  return text.replace(TYPE_FETCH_CALL, TYPE_FETCH_HANDLED)
}

const WRITE_ORIGINAL = `  function write(x, fn) {
    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)
    if (fn || chunk.length >= 1024)
      return nextWrite(fn)
    nextWriteTimer === null && (nextWriteTimer = setImmediate(nextWrite))
    return true
  }

  function nextWrite(fn) {
    const x = socket.write(chunk, fn)
    nextWriteTimer !== null && clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    return x
  }`
const WRITE_BATCHED = `  // ${WRITE_BATCH_MARKER} (see scripts/patch-postgres.mjs)
  // var without initialisers: the connection writes before control reaches these lines.
  var WRITE_BATCH_BYTES, pieces, gathered

  function write(x, fn) {
    pieces || (pieces = [], gathered = 0, WRITE_BATCH_BYTES = 64 * 1024)
    pieces.push(x)
    gathered += x.length
    if (fn || gathered >= WRITE_BATCH_BYTES)
      return nextWrite(fn)
    nextWriteTimer === null && (nextWriteTimer = setImmediate(nextWrite))
    return true
  }

  function nextWrite(fn) {
    chunk = pieces.length === 1 ? Buffer.from(pieces[0]) : Buffer.concat(pieces, gathered)
    pieces = []
    gathered = 0
    const x = socket.write(chunk, fn)
    nextWriteTimer !== null && clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    return x
  }`

function patchWriteBatching(text) {
  const at = text.indexOf(WRITE_ORIGINAL)
  if (at === -1 || text.indexOf(WRITE_ORIGINAL, at + 1) !== -1)
    throw new Error('expected exactly one write/nextWrite pair')
  return text.replace(WRITE_ORIGINAL, WRITE_BATCHED)
}

/** Each file we change: the digest of the 3.4.9 original, the marker of our version, and how to make it. */
const PATCHED_FILES = [
  {
    file: 'src/queue.js',
    fix: 'queue',
    original: '15e6345adb6708bf3b99ad39fc2231c2fb61de5f6cba4b7a7a6be881482a4ec3',
    marker: QUEUE_MARKER,
    patch: () => `export default Queue\n\n${queueBody}`,
  },
  {
    file: 'cf/src/queue.js',
    fix: 'queue',
    original: '15e6345adb6708bf3b99ad39fc2231c2fb61de5f6cba4b7a7a6be881482a4ec3',
    marker: QUEUE_MARKER,
    patch: () => `export default Queue\n\n${queueBody}`,
  },
  {
    file: 'cjs/src/queue.js',
    fix: 'queue',
    original: '7d20fa53a3930be070609d7912ecd14c347df3526805bca2f6cb7eb35d2e62cf',
    marker: QUEUE_MARKER,
    patch: () => `module.exports = Queue\n\n${queueBody}`,
  },
  {
    file: 'src/connection.js',
    fix: 'type fetch',
    original: 'ee3a218d9aa6a6f2887c1a19da50009335fe84c11a5431d5cab72d6bc528632f',
    marker: TYPE_FETCH_MARKER,
    patch: patchTypeFetch,
  },
  {
    file: 'cf/src/connection.js',
    fix: 'type fetch',
    original: '3efad812b825f76708f2e62e8dd00088900206e04afed2dc4b75b9aecd435fa9',
    marker: TYPE_FETCH_MARKER,
    patch: patchTypeFetch,
  },
  {
    file: 'cjs/src/connection.js',
    fix: 'type fetch',
    original: 'ce6d375809baad79963ef9b3773e6ac757bcf6da2362d4d85482bb14c2c751be',
    marker: TYPE_FETCH_MARKER,
    patch: patchTypeFetch,
  },
  ...['src/connection.js', 'cf/src/connection.js', 'cjs/src/connection.js'].map((file) => ({
    file,
    fix: 'write batching',
    marker: WRITE_BATCH_MARKER,
    patch: patchWriteBatching,
  })),
]

export function postgresPatchStatus() {
  const version = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')).version
  const files = PATCHED_FILES.map(({ file, fix, marker }) => {
    const text = fs.readFileSync(path.join(PACKAGE_DIR, file), 'utf8')
    return { file, fix, text, patched: text.includes(marker) }
  })
  return { version, files }
}

/**
 * Applies what is not applied yet; returns how many files changed. A file none of whose
 * fixes is applied must be the known 3.4.9 original; one that has some of them gets the
 * rest (each fix finds exactly the code it replaces, or fails).
 */
export function patchPostgres() {
  const { version } = postgresPatchStatus()
  if (version !== '3.4.9') {
    throw new Error(
      `postgres ${version} is installed; scripts/patch-postgres.mjs is written for 3.4.9 — review it before upgrading`,
    )
  }
  let changed = 0
  for (const file of new Set(PATCHED_FILES.map((entry) => entry.file))) {
    const fixes = PATCHED_FILES.filter((entry) => entry.file === file)
    const original = fs.readFileSync(path.join(PACKAGE_DIR, file), 'utf8')
    const missing = fixes.filter((entry) => !original.includes(entry.marker))
    if (missing.length === 0) continue
    if (missing.length === fixes.length) {
      const digest = crypto.createHash('sha256').update(original).digest('hex')
      const known = fixes.find((entry) => entry.original)?.original
      if (digest !== known)
        throw new Error(`node_modules/postgres/${file} is not the known 3.4.9 file (sha256 ${digest})`)
    }
    fs.writeFileSync(
      path.join(PACKAGE_DIR, file),
      missing.reduce((text, entry) => entry.patch(text), original),
    )
    changed++
  }
  return changed
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const changed = patchPostgres()
  console.log(changed ? `patched postgres (${changed} files)` : 'postgres already patched')
}
