import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import type { Logger } from '../observability/logger.js'
import { readAsset } from '../runtime/assets.js'

export interface EmbeddedPostgres {
  dataDir: string
  socketPath: string
  activeConnections(): number
  stop(): Promise<void>
}

/** Unix socket paths are limited to 108 bytes (sun_path); leave room for the terminator. */
const MAX_SOCKET_PATH = 100
/** Migrations and the health check may hold a connection beside the pools. */
const SPARE_CONNECTIONS = 2

export class DataDirInUseError extends Error {}

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
      // pgvector, for memories: the migrations run CREATE EXTENSION vector.
      extensions: { vector: vectorExtensionFile(dataDir) },
    })
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: poolConnections + SPARE_CONNECTIONS })
    await server.start()
    fs.chmodSync(socketPath, 0o600)
    return {
      dataDir: pgDataDir,
      socketPath,
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
