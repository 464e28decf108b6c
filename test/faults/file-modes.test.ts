// The embedded database once wrote ~970 files 0666 into a 0755 data
// directory. Every file memsvc writes must be owner-only, whatever already exists.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser, cleanUp, EXIT, type RunningServer, SERVER_START_TIMEOUT_MS, startServer } from '../support/cli.js'
import { createSandbox, type Sandbox, ServerProcess } from '../support/executable.js'

const GROUP_OR_OTHER_BITS = 0o077
const TEST_TIMEOUT_MS = SERVER_START_TIMEOUT_MS * 2

/** Every path under `root` (root included) that a user other than the owner can read, write or enter. */
function openToOthers(root: string): string[] {
  const found: string[] = []
  const visit = (file: string) => {
    const stat = fs.lstatSync(file)
    if (stat.isSymbolicLink()) return
    if (stat.mode & GROUP_OR_OTHER_BITS)
      found.push(`${path.relative(root, file) || '.'} ${(stat.mode & 0o777).toString(8)}`)
    if (stat.isDirectory()) for (const name of fs.readdirSync(file)) visit(path.join(file, name))
  }
  visit(root)
  return found
}

function countFiles(root: string): number {
  let count = 0
  for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true })) if (entry.isFile()) count++
  return count
}

let sandbox: Sandbox
let dataDir: string
let server: RunningServer | undefined

beforeAll(() => {
  sandbox = createSandbox()
  dataDir = sandbox.makeDir('data')
})

afterAll(() => cleanUp([server], sandbox), 30_000)

describe('file modes of everything memsvc writes', () => {
  it(
    'an existing 0755 data directory: the database, TLS material, encryption key, CLI config and addon cache are owner-only',
    async () => {
      fs.chmodSync(dataDir, 0o755)
      server = await startServer(sandbox, { tls: true, dataDir })
      const user = new CliUser(sandbox)
      await user.ok(['init', '--server', `127.0.0.1:${server.grpcPort}`])
      await user.ok(['apikey', 'create', '--label', 'purpose=modes'])
      const written = [dataDir, path.dirname(user.configFile), path.join(sandbox.env.XDG_CACHE_HOME!, 'memsvc')]
      // While running (the lock file and the database socket exist) and after a clean stop.
      expect(written.flatMap(openToOthers)).toEqual([])
      await server.process.stop('SIGTERM')
      server = undefined
      expect(countFiles(dataDir)).toBeGreaterThan(100)
      expect(fs.existsSync(path.join(dataDir, 'tls', 'server.key'))).toBe(true)
      expect(fs.existsSync(path.join(dataDir, 'encryption.key'))).toBe(true)
      expect(written.flatMap(openToOthers)).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'a data directory an earlier version left open (files 0666, directories 0777 under a 0755 root) is made owner-only at the next start',
    async () => {
      for (const entry of fs.readdirSync(dataDir, { withFileTypes: true, recursive: true })) {
        fs.chmodSync(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o777 : 0o666)
      }
      fs.chmodSync(dataDir, 0o755)
      expect(openToOthers(dataDir).length).toBeGreaterThan(100)
      server = await startServer(sandbox, { tls: true, dataDir })
      expect(server.process.hasLogged(/made the data directory private to its owner/)).toBe(true)
      expect(openToOthers(dataDir)).toEqual([])
      await server.process.stop('SIGTERM')
      server = undefined
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'a data directory other users can write: exit code 2 and one error line naming it and the fix, nothing written',
    async () => {
      const shared = sandbox.makeDir('shared-data')
      fs.chmodSync(shared, 0o777)
      const refused = ServerProcess.start(sandbox, [
        '--rest-port',
        '0',
        '--grpc-port',
        '0',
        '--bind-address',
        '127.0.0.1',
        '--tls-disabled',
        '--data-dir',
        shared,
      ])
      const exit = await refused.exited
      expect(exit.code, refused.logs.join('\n')).toBe(EXIT.BAD_INPUT)
      const errors = refused.logs.filter((line) => / ERROR /.test(line))
      expect(errors, refused.logs.join('\n')).toHaveLength(1)
      expect(errors[0]).toContain(`data directory ${shared} is writable by other users (mode 0777)`)
      expect(errors[0]).toContain(`chmod 700 ${shared}`)
      expect(fs.readdirSync(shared)).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )
})
