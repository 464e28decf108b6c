import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import v8 from 'node:v8'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import type { ListenAddress } from '../config/server-config.js'
import { StartupTimeline } from '../lifecycle/startup-timeline.js'
import type { Logger } from '../observability/logger.js'
import { readAsset } from '../runtime/assets.js'
import { makeOwnerOnly } from '../runtime/data-dir.js'
import { isStandalone } from '../runtime/environment.js'
import { databaseJoinsEventLoop } from './paced-writes.js'

export interface EmbeddedPostgres {
  dataDir: string
  socketPath: string
  /** "host:port" of the debug listener (--debug-db-listen), once bound. */
  debugListen?: string
  /** Throws a disk_full error (53100) when the data directory's file system is nearly full. */
  requireFreeSpace(): void
  activeConnections(): number
  /**
   * Resolves when PGlite next finishes a protocol message, of any connection. On the one
   * shared connection a ping waits behind a long transaction (an ingest writing thousands
   * of chunks): PGlite still answering that transaction's statements is alive, not down.
   */
  nextAnswer(): Promise<void>
  stop(): Promise<void>
}

/** Unix socket paths are limited to 108 bytes (sun_path); leave room for the terminator. */
const MAX_SOCKET_PATH = 100
/** Migrations and the health check may hold a connection beside the pools. */
const SPARE_CONNECTIONS = 2
/** psql sessions an operator may hold open on the debug listener beside the pools. */
const DEBUG_CONNECTIONS = 4

/** The part of PGLiteSocketServer that is not in its type declarations (see listenForDebugging). */
interface ConnectionAcceptor {
  handleConnection(socket: net.Socket): Promise<void>
}

/**
 * Debug installs: the PostgreSQL protocol on TCP for psql. The connections go into the
 * same socket server as the pools' (its handleConnection), because that server's query
 * queue is what keeps one client's transaction from interleaving with another's; a
 * second PGLiteSocketServer on the same database would have a queue of its own.
 */
async function listenForDebugging(server: PGLiteSocketServer, address: ListenAddress): Promise<net.Server> {
  const acceptor = server as unknown as ConnectionAcceptor
  const listener = net.createServer((socket) => void acceptor.handleConnection(socket))
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject)
    listener.listen(address.port, address.host, () => resolve())
  })
  return listener
}

/** Calls `onAnswer` each time PGlite finishes a protocol message the socket server sent it. */
function observeAnswers(db: PGlite, onAnswer: () => void): void {
  const execute = db.execProtocolRawStream.bind(db)
  db.execProtocolRawStream = async (...args: Parameters<PGlite['execProtocolRawStream']>) => {
    try {
      return await execute(...args)
    } finally {
      onAnswer()
    }
  }
}

function describeAddress(listener: net.Server): string {
  const bound = listener.address() as net.AddressInfo
  return bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`
}

/**
 * PostgreSQL's buffer cache inside PGlite's WebAssembly memory, which never shrinks. Its
 * initdb default (128 MB) was touched whole at every start and made up most of the idle
 * process; the data files are read through the operating system's page cache anyway, so a
 * small cache costs a read call rather than a disk read. 16 MB left the idle process at
 * 197–198 MiB, 8 MB at 189–192 MiB (the target is 200). HNSW index builds are limited by
 * maintenance_work_mem (64 MB, PostgreSQL's default), which is left as it is.
 */
const SHARED_BUFFERS = '8MB'

/**
 * How much a WebAssembly function must run before V8 recompiles it with its optimising
 * compiler (V8's default is 13,000,000, "bytes executed"). At the default, PGlite's start
 * triggered optimising compiles, one of them of a single 100 kB function that took over
 * 600 MB for a second or two: RSS peaked near 900 MB after a start, and the compiles
 * competed with the start for the CPU. At the highest budget only a function that stays hot
 * under sustained load is optimised; starting and idling run on the baseline compiler.
 */
const WASM_TIERING_BUDGET = 2_000_000_000

/**
 * Below this the embedded database cannot count on starting a WAL segment (16 MiB) or
 * extending a table: writes start failing, reads still work.
 */
const MIN_FREE_BYTES = 16 * 1024 * 1024

/** What the child that creates the database may print (its errors) before it is cut off. */
const CHILD_OUTPUT_LIMIT_BYTES = 1024 * 1024
/** A first start takes 3–5 s here; a host a hundred times slower still finishes. */
const CHILD_TIMEOUT_MS = 10 * 60_000

export class DataDirInUseError extends Error {}

/** Carries PostgreSQL's disk_full code, so that it maps like the database's own error. */
export class DiskFullError extends Error {
  readonly code = '53100'
}

function requireFreeSpace(dir: string): void {
  const stats = fs.statfsSync(dir)
  const free = stats.bavail * stats.bsize
  if (free < MIN_FREE_BYTES)
    throw new DiskFullError(
      `${free} bytes free on the file system of ${dir}; the embedded database needs at least ${MIN_FREE_BYTES}`,
    )
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Data directories held by servers in this process. The lock file alone cannot tell a
 * second server in this process from a stale lock left by an earlier process that had
 * the same pid (a container restart), so the process remembers what it holds.
 */
const heldByThisProcess = new Set<string>()

/** The file naming the process that holds a data directory. */
const lockFileOf = (dataDir: string) => path.join(dataDir, 'memsvc.pid')

/** The pid a lock file names, or undefined when there is none. */
function lockHolder(lockFile: string): number | undefined {
  try {
    return Number(fs.readFileSync(lockFile, 'utf8'))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** PGlite is single-process: a second server on the same files would corrupt them. */
function acquireDataDirLock(dataDir: string): () => void {
  const lockFile = lockFileOf(dataDir)
  const key = path.resolve(dataDir)
  if (heldByThisProcess.has(key)) {
    throw new DataDirInUseError(
      `data directory ${dataDir} is in use by another memsvc server in this process (pid ${process.pid})`,
    )
  }
  for (;;) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx', mode: 0o600 })
      heldByThisProcess.add(key)
      return () => {
        heldByThisProcess.delete(key)
        try {
          if (fs.readFileSync(lockFile, 'utf8') === String(process.pid)) fs.unlinkSync(lockFile)
        } catch {
          // Already gone: nothing to release.
        }
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = lockHolder(lockFile)
      if (
        holder !== undefined &&
        Number.isInteger(holder) &&
        holder > 0 &&
        holder !== process.pid &&
        processAlive(holder)
      ) {
        throw new DataDirInUseError(`data directory ${dataDir} is in use by another memsvc process (pid ${holder})`)
      }
      fs.rmSync(lockFile, { force: true }) // stale lock from a process that died (or gone meanwhile)
    }
  }
}

/**
 * PGlite loads an extension from a file (a gzipped tar), and an executable's assets are
 * not files: the bundle is written once per content hash under the data directory.
 */
function vectorExtensionFile(dataDir: string): URL {
  const bundle = readAsset('pglite-vector.tar.gz')
  const digest = crypto.createHash('sha256').update(bundle).digest('hex').slice(0, 16)
  const target = path.join(dataDir, 'extensions', `vector-${digest}.tar.gz`)
  if (!fs.existsSync(target)) {
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
    // A private temp name and a rename: a concurrent reader never sees a partial file.
    const partial = `${target}.${process.pid}.tmp`
    fs.writeFileSync(partial, bundle, { mode: 0o600 })
    fs.renameSync(partial, target)
  }
  return pathToFileURL(target)
}

interface PGliteModules {
  pgliteWasmModule: WebAssembly.Module
  initdbWasmModule: WebAssembly.Module
}

async function compileModules(): Promise<PGliteModules> {
  // Read when a module is instantiated; set before the first one is.
  v8.setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`)
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
    WebAssembly.compile(readAsset('pglite.wasm')),
    WebAssembly.compile(readAsset('initdb.wasm')),
  ])
  return { pgliteWasmModule, initdbWasmModule }
}

/** Opens (and on an empty directory, first creates) the database in `<dataDir>/pgdata`. */
function openPGlite(dataDir: string, modules: PGliteModules): Promise<PGlite> {
  return PGlite.create({
    dataDir: path.join(dataDir, 'pgdata'),
    ...modules,
    fsBundle: new Blob([readAsset('pglite.data')]),
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
    // pgvector, for memories: the migrations run CREATE EXTENSION vector.
    extensions: { vector: vectorExtensionFile(dataDir) },
  })
}

/** The executable's hidden command that creates an embedded database and exits (src/db/create-embedded-database.ts). */
export const CREATE_EMBEDDED_DATABASE_COMMAND = '__create-embedded-database'

/**
 * The child works on the data directory under its parent's lock, so it must not outlive the
 * parent: it is killed when the parent exits (SIGTERM during a first start included), and
 * when it runs far longer than a first start takes (seconds).
 */
function createInChildProcess(dataDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [CREATE_EMBEDDED_DATABASE_COMMAND, dataDir],
      { maxBuffer: CHILD_OUTPUT_LIMIT_BYTES, timeout: CHILD_TIMEOUT_MS, killSignal: 'SIGKILL' },
      (error, _stdout, stderr) => {
        process.removeListener('exit', killChild)
        if (!error) return resolve()
        const why = error.killed ? `no answer after ${CHILD_TIMEOUT_MS / 1000} s` : stderr.trim() || error.message
        reject(new Error(`creating the embedded database in ${dataDir} failed: ${why}`))
      },
    )
    const killChild = () => child.kill('SIGKILL')
    process.once('exit', killChild)
  })
}

/** The child runs only under the lock its parent holds (createInChildProcess), not beside another server. */
function requireParentHoldsLock(dataDir: string): void {
  if (lockHolder(lockFileOf(dataDir)) !== process.ppid)
    throw new DataDirInUseError(
      `${CREATE_EMBEDDED_DATABASE_COMMAND} is run by memsvc serve on a first start, ` +
        `under its lock on ${dataDir}; it does not run on its own`,
    )
}

/**
 * Runs PostgreSQL (PGlite, in WASM) in-process and serves it on a private Unix socket,
 * so the same postgres.js code and SQL run in embedded mode and against PostgreSQL.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  poolConnections: number,
  log: Logger,
  debugListen?: ListenAddress,
  startup = new StartupTimeline(),
  /** The child of createInChildProcess: its parent holds the data directory's lock. */
  { forParent = false }: { forParent?: boolean } = {},
): Promise<EmbeddedPostgres> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  if (forParent) requireParentHoldsLock(dataDir)
  const releaseLock = forParent ? () => {} : acquireDataDirLock(dataDir)
  const pgDataDir = path.join(dataDir, 'pgdata')
  const firstStart = !fs.existsSync(path.join(pgDataDir, 'PG_VERSION'))
  if (firstStart) log.info('creating the embedded database (first start takes a few seconds)', { dir: pgDataDir })
  let socketDir = dataDir
  let privateSocketDir: string | undefined
  if (path.join(dataDir, '.s.memsvc').length > MAX_SOCKET_PATH) {
    privateSocketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-'))
    socketDir = privateSocketDir
  }
  const socketPath = path.join(socketDir, '.s.memsvc')
  fs.rmSync(socketPath, { force: true })

  try {
    // initdb runs in a second PGlite beside the first, and in this process their memory stayed
    // for good, mostly in the C heap that V8 and PGlite's file buffers share: 238–251 MiB idle
    // after a first start (also when the database was closed, collected and opened again)
    // against 198 MiB after any other. The executable creates the database, and applies the
    // migrations, in a child process of its own; from source (the tests) all of it happens here.
    const createdApart = firstStart && isStandalone && !forParent
    if (createdApart) await startup.time('pglite-initdb', () => createInChildProcess(dataDir))
    const modules = await startup.time('pglite-compile', compileModules)
    const db = await startup.time(firstStart && !createdApart ? 'pglite-initdb' : 'pglite-boot', () =>
      openPGlite(dataDir, modules),
    )
    // initdb chmods its files 0666 whatever the umask; the 0700 data directory kept
    // others out of them meanwhile.
    const opened = makeOwnerOnly(pgDataDir)
    if (opened > 0 && !firstStart)
      log.info('made database files private to their owner', { dir: pgDataDir, filesChanged: opened })
    let answerWaiters: Array<() => void> = []
    observeAnswers(db, () => {
      const waiting = answerWaiters
      answerWaiters = []
      for (const resolve of waiting) resolve()
    })
    const maxConnections = poolConnections + SPARE_CONNECTIONS + (debugListen ? DEBUG_CONNECTIONS : 0)
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections })
    await server.start()
    fs.chmodSync(socketPath, 0o600)
    const debugListener = debugListen
      ? await listenForDebugging(server, debugListen).catch(async (error: unknown) => {
          await server.stop()
          await db.close()
          const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message
          throw new Error(`--debug-db-listen ${debugListen.host}:${debugListen.port}: ${reason}`)
        })
      : undefined
    if (debugListener) {
      log.warn(
        'DEBUG INSTALL: the embedded database accepts PostgreSQL connections WITHOUT A PASSWORD; ' +
          'never enable this on a shared or production host',
        {
          listen: describeAddress(debugListener),
          user: 'postgres',
          database: 'postgres',
        },
      )
    }
    // From here on its work runs on this event loop: writes of many rows are paced for it.
    const leaveEventLoop = databaseJoinsEventLoop()
    return {
      dataDir: pgDataDir,
      socketPath,
      debugListen: debugListener ? describeAddress(debugListener) : undefined,
      requireFreeSpace: () => requireFreeSpace(pgDataDir),
      activeConnections: () => server.getStats().activeConnections,
      nextAnswer: () => new Promise<void>((resolve) => answerWaiters.push(resolve)),
      async stop() {
        leaveEventLoop()
        // close() waits for open psql sessions, which server.stop() ends: start it first, await it after.
        const debugClosed = debugListener ? new Promise((resolve) => debugListener.close(resolve)) : undefined
        await server.stop()
        await debugClosed
        await db.close()
        fs.rmSync(socketPath, { force: true })
        if (privateSocketDir) fs.rmSync(privateSocketDir, { recursive: true, force: true })
        releaseLock()
      },
    }
  } catch (error) {
    releaseLock()
    throw error
  }
}
