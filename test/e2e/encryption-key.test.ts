// The server key with the built executable (run "npm run build" first): a restart with
// another key, or a replica with its own, exits 2 with one clear line instead of starting.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../support/databases.js'
import { createSandbox, killAllProcesses, runCli, type Sandbox, ServerProcess } from '../support/executable.js'

const EXIT_CONFIG_ERROR = 2
const START_TIMEOUT_MS = 60_000

let sandbox: Sandbox
let database: TestDatabase | undefined

beforeAll(() => {
  sandbox = createSandbox()
})
afterEach(() => killAllProcesses())
afterAll(async () => {
  killAllProcesses()
  sandbox?.remove()
  await database?.drop()
})

const baseFlags = (dataDir: string) => [
  '--rest-port',
  '0',
  '--grpc-port',
  '0',
  '--bind-address',
  '127.0.0.1',
  '--tls-disabled',
  '--data-dir',
  dataDir,
]

function writeKey(name: string): string {
  const file = path.join(sandbox.makeDir('keys'), name)
  fs.writeFileSync(file, `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600 })
  return file
}

async function expectRefused(server: ServerProcess, pattern: RegExp): Promise<string> {
  const { code } = await server.exited
  expect(code).toBe(EXIT_CONFIG_ERROR)
  const line = server.logs.find((entry) => / ERROR cannot start /.test(entry))
  expect(line, server.logs.join('\n')).toMatch(pattern)
  expect(server.hasLogged(/\bready\b state=READY/)).toBe(false)
  return line!
}

describe('encryption key', () => {
  it(
    'a restart on the same data directory with a different --encryption-key-file exits 2; the original key starts again',
    async () => {
      const dataDir = sandbox.makeDir('embedded-data')
      const original = writeKey('original.key')
      const first = ServerProcess.start(sandbox, [...baseFlags(dataDir), '--encryption-key-file', original])
      await first.waitForReady(START_TIMEOUT_MS)
      expect((await first.stop()).code).toBe(0)

      const other = writeKey('other.key')
      const line = await expectRefused(
        ServerProcess.start(sandbox, [...baseFlags(dataDir), '--encryption-key-file', other]),
        /encryption key mismatch: .*other\.key holds key [0-9a-f]{12} but this database's secrets are encrypted with key [0-9a-f]{12}/,
      )
      for (const file of [original, other]) expect(line).not.toContain(fs.readFileSync(file, 'utf8').trim())

      // The environment variable works as well as the flag.
      const again = ServerProcess.start(sandbox, baseFlags(dataDir), { SERVICE_ENCRYPTION_KEY_FILE: original })
      await again.waitForReady(START_TIMEOUT_MS)
      expect((await again.stop()).code).toBe(0)
    },
    START_TIMEOUT_MS * 3,
  )

  it(
    "a second server on the same PostgreSQL database with its own generated key exits 2; with the first one's key file it starts",
    async () => {
      database = await createTestDatabase()
      const firstDir = sandbox.makeDir('pg-first')
      const first = ServerProcess.start(sandbox, [...baseFlags(firstDir), '--db-url', database.jdbcUrl])
      await first.waitForReady(START_TIMEOUT_MS)
      expect(
        first.hasLogged(
          /WARN .*created a new encryption key.*every server sharing this database must use the same key/,
        ),
      ).toBe(true)
      const sharedKey = path.join(firstDir, 'encryption.key')
      expect(fs.statSync(sharedKey).mode & 0o777).toBe(0o600)

      await expectRefused(
        ServerProcess.start(sandbox, [...baseFlags(sandbox.makeDir('pg-second')), '--db-url', database.jdbcUrl]),
        /encryption key mismatch/,
      )
      const replica = ServerProcess.start(sandbox, [
        ...baseFlags(sandbox.makeDir('pg-third')),
        '--db-url',
        database.jdbcUrl,
        '--encryption-key-file',
        sharedKey,
      ])
      await replica.waitForReady(START_TIMEOUT_MS)
      expect((await replica.stop()).code).toBe(0)
      expect((await first.stop()).code).toBe(0)
    },
    START_TIMEOUT_MS * 3,
  )

  it(
    'a key file that holds no key exits 2; an unreadable one exits 2 with one line naming the flag',
    async () => {
      const malformed = path.join(sandbox.makeDir('keys'), 'malformed.key')
      fs.writeFileSync(malformed, 'not a key\n', { mode: 0o600 })
      await expectRefused(
        ServerProcess.start(sandbox, [
          ...baseFlags(sandbox.makeDir('bad-key-data')),
          '--encryption-key-file',
          malformed,
        ]),
        /must hold 32 bytes/,
      )

      const missing = await runCli(sandbox, [
        'serve',
        ...baseFlags(sandbox.makeDir('missing-key-data')),
        '--encryption-key-file',
        path.join(sandbox.dir, 'nope.key'),
      ])
      expect(missing.code).toBe(EXIT_CONFIG_ERROR)
      expect(missing.stderr.trim()).toMatch(/^memsvc: --encryption-key-file: cannot read \S+nope\.key: ENOENT$/)
    },
    START_TIMEOUT_MS * 2,
  )
})
