import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import type { Logger } from '../observability/logger.js'
import { readAsset } from '../runtime/assets.js'
import { makeOwnerOnly } from '../runtime/data-dir.js'

export interface EmbeddedPostgres {
  dataDir: string
  socketPath: string
  /** Throws a disk_full error (53100) when the data directory's file system is nearly full. */
  requireFreeSpace(): void
  activeConnections(): number
  stop(): Promise<void>
}

/** Unix socket paths are limited to 108 bytes (sun_path); leave room for the terminator. */
const MAX_SOCKET_PATH = 100
/** Migrations and the health check may hold a connection beside the pools. */
const SPARE_CONNECTIONS = 2

/**
 * Below this the embedded database cannot count on starting a WAL segment (16 MiB) or
 * extending a table: writes start failing, reads still work.
 */
const MIN_FREE_BYTES = 16 * 1024 * 1024

export class DataDirInUseError extends Error {}

/** Carries PostgreSQL's disk_full code, so that it maps like the database's own error. */
export class DiskFullError extends Error {
  readonly code = '53100'
}

function requireFreeSpace(dir: string): void {
  const stats = fs.statfsSync(dir)
  const free = stats.bavail * stats.bsize
  if (free < MIN_FREE_BYTES) throw new DiskFullError(`${free} bytes free on the file system of ${dir}; the embedded database needs at least ${MIN_FREE_BYTES}`)
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

/** PGlite is single-process: a second server on the same files would corrupt them. */
function acquireDataDirLock(dataDir: string): () => void {
  const lockFile = path.join(dataDir, 'memsvc.pid')
  const key = path.resolve(dataDir)
  if (heldByThisProcess.has(key)) {
    throw new DataDirInUseError(`data directory ${dataDir} is in use by another memsvc server in this process (pid ${process.pid})`)
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
      const holder = Number(fs.readFileSync(lockFile, 'utf8'))
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new DataDirInUseError(`data directory ${dataDir} is in use by another memsvc process (pid ${holder})`)
      }
      fs.unlinkSync(lockFile) // stale lock from a process that died
    }
  }
}

/**
 * Runs PostgreSQL (PGlite, in WASM) in-process and serves it on a private Unix socket,
 * so the same postgres.js code and SQL run in embedded mode and against PostgreSQL.
 */
export async function startEmbeddedPostgres(dataDir: string, poolConnections: number, log: Logger): Promise<EmbeddedPostgres> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const releaseLock = acquireDataDirLock(dataDir)
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
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(readAsset('pglite.wasm')),
      WebAssembly.compile(readAsset('initdb.wasm')),
    ])
    const db = await PGlite.create({
      dataDir: pgDataDir,
      pgliteWasmModule,
      initdbWasmModule,
      fsBundle: new Blob([readAsset('pglite.data')]),
    })
    // initdb chmods its files 0666 whatever the umask; the 0700 data directory kept
    // others out of them meanwhile.
    const opened = makeOwnerOnly(pgDataDir)
    if (opened > 0 && !firstStart) log.info('made database files private to their owner', { dir: pgDataDir, filesChanged: opened })
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: poolConnections + SPARE_CONNECTIONS })
    await server.start()
    fs.chmodSync(socketPath, 0o600)
    return {
      dataDir: pgDataDir,
      socketPath,
      requireFreeSpace: () => requireFreeSpace(pgDataDir),
      activeConnections: () => server.getStats().activeConnections,
      async stop() {
        await server.stop()
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
