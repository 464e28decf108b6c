import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ConfigError, resolveServerConfig } from '../../src/config/server-config.js'
import { secretContext } from '../../src/domain/registry.js'
import { EncryptionKeyError, parseEncryptionKey } from '../../src/secrets/encryption-key.js'
import { encryptionKeyId, SecretBox } from '../../src/secrets/secret-box.js'
import { ApiClient } from '../support/api-client.js'
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/databases.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { EMBEDDER } from './registry-cases.js'

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-keys-'))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

function keyFile(name: string, content: string | Buffer = `${crypto.randomBytes(32).toString('hex')}\n`): string {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, content, { mode: 0o600 })
  return file
}

describe('the key file', () => {
  it('holds 32 bytes raw, as 64 hex digits or in base64; anything else is refused with one line', () => {
    const key = crypto.randomBytes(32)
    expect(parseEncryptionKey(key, 'k')).toEqual(key)
    expect(parseEncryptionKey(Buffer.from(`  ${key.toString('hex')}\n`), 'k')).toEqual(key)
    expect(parseEncryptionKey(Buffer.from(`${key.toString('base64')}\n`), 'k')).toEqual(key)
    for (const bad of [
      '',
      'short',
      key.toString('hex').slice(2),
      `${key.toString('hex')}00`,
      crypto.randomBytes(31).toString('base64'),
    ]) {
      expect(() => parseEncryptionKey(Buffer.from(bad), '/etc/memsvc/key')).toThrow(EncryptionKeyError)
    }
    try {
      parseEncryptionKey(Buffer.from('nope'), '/etc/memsvc/key')
    } catch (error) {
      expect((error as Error).message).toContain('/etc/memsvc/key')
      expect((error as Error).message).not.toContain('\n')
    }
  })

  it('--encryption-key-file and SERVICE_ENCRYPTION_KEY_FILE: flag beats environment; an unreadable file stops start-up naming the flag', () => {
    const fromFlag = keyFile('flag.key')
    const fromEnv = keyFile('env.key')
    expect(
      resolveServerConfig({ 'encryption-key-file': fromFlag }, { SERVICE_ENCRYPTION_KEY_FILE: fromEnv })
        .encryptionKeyFile,
    ).toBe(fromFlag)
    expect(resolveServerConfig({}, { SERVICE_ENCRYPTION_KEY_FILE: fromEnv }).encryptionKeyFile).toBe(fromEnv)
    expect(resolveServerConfig({}, {}).encryptionKeyFile).toBeUndefined()
    expect(() => resolveServerConfig({ 'encryption-key-file': path.join(tmp, 'missing.key') }, {})).toThrow(ConfigError)
    expect(() => resolveServerConfig({ 'encryption-key-file': path.join(tmp, 'missing.key') }, {})).toThrow(
      /^--encryption-key-file: cannot read /,
    )
  })

  it('seals with AES-256-GCM: fresh IV each time, bound to its row, useless under another key', () => {
    const key = crypto.randomBytes(32)
    const box = new SecretBox(key)
    const first = box.seal('sk-value', 'embedders/1/credential')
    const second = box.seal('sk-value', 'embedders/1/credential')
    expect(first.equals(second)).toBe(false)
    expect(first.includes(Buffer.from('sk-value'))).toBe(false)
    expect(box.open(first, 'embedders/1/credential')).toBe('sk-value')
    expect(() => box.open(first, 'embedders/2/credential')).toThrow()
    expect(() => new SecretBox(crypto.randomBytes(32)).open(first, 'embedders/1/credential')).toThrow()
    const tampered = Buffer.from(first)
    tampered[tampered.length - 1]! ^= 1
    expect(() => box.open(tampered, 'embedders/1/credential')).toThrow()
    // The key id and the fingerprints reveal nothing of the key or the secret.
    expect(box.keyId).toBe(encryptionKeyId(key))
    expect(box.keyId).not.toContain(key.toString('hex'))
    expect(box.keyId).not.toBe(crypto.createHash('sha256').update(key).digest('hex'))
    expect(box.shortFingerprint('sk-value')).toMatch(/^[0-9a-f]{8}$/)
    expect(box.shortFingerprint('sk-value')).toBe(box.shortFingerprint('sk-value'))
    expect(new SecretBox(crypto.randomBytes(32)).shortFingerprint('sk-value')).not.toBe(
      box.shortFingerprint('sk-value'),
    )
  })
})

describe.each(ENGINES)('the server key across restarts (%s)', (engine) => {
  const servers: TestServer[] = []
  const databases: TestDatabase[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop().catch(() => {})
  })
  afterAll(async () => {
    for (const database of databases) await database.drop()
  })

  /** One database (PostgreSQL) or one data directory (embedded), shared by every start in a test. */
  async function store(): Promise<{ database?: TestDatabase; dataDir: string }> {
    const dataDir = fs.mkdtempSync(path.join(tmp, 'data-'))
    if (engine !== 'postgresql') return { dataDir }
    const database = await createTestDatabase()
    databases.push(database)
    return { database, dataDir }
  }

  async function start(
    target: { database?: TestDatabase; dataDir: string },
    flags: Record<string, unknown>,
    options: { env?: NodeJS.ProcessEnv; waitForReady?: boolean } = {},
  ): Promise<TestServer> {
    const server = await startTestServer({
      engine,
      database: target.database,
      dataDir: target.dataDir,
      flags,
      env: options.env,
      waitForReady: options.waitForReady,
    })
    servers.push(server)
    return server
  }

  async function stop(server: TestServer): Promise<void> {
    servers.splice(servers.indexOf(server), 1)
    await server.server.shutdown('test restart')
  }

  it('a restart with a different key refuses to start with EncryptionKeyError; the original key starts again and still opens its secrets', async () => {
    const target = await store()
    const original = keyFile(`original-${engine}.key`)
    const first = await start(target, { 'encryption-key-file': original })
    const client = new ApiClient({ restUrl: first.restUrl, grpcAddress: first.grpcAddress })
    const init = await client.call('rest', 'initializeSystem')
    const created = await client.call(
      'rest',
      'createEmbedder',
      EMBEDDER.input({ credentials: { kind: 'API_KEY', apiKey: { inlineSecret: 'sk-kept-across-restarts' } } }),
      init.body.rootApiKey,
    )
    expect(created.status).toBe('OK')
    client.close()
    await stop(first)

    const other = keyFile(`other-${engine}.key`)
    const refused = await start(target, { 'encryption-key-file': other }, { waitForReady: false })
    const error = await refused.server.ready.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).toBeInstanceOf(EncryptionKeyError)
    const message = (error as Error).message
    expect(message).toMatch(/^encryption key mismatch: /)
    expect(message).toContain(other)
    expect(message).not.toContain('\n')
    expect(message).toContain(new SecretBox(parseEncryptionKey(fs.readFileSync(original), original)).keyId.slice(0, 12))
    for (const file of [original, other]) expect(message).not.toContain(fs.readFileSync(file, 'utf8').trim())
    expect(refused.server.lifecycle.state).not.toBe('READY')
    await stop(refused)

    const again = await start(target, { 'encryption-key-file': original })
    const [row] = await again.server.context.sql`select id, credential_secret from embedders`
    expect(
      again.server.context.secrets.open(
        row!.credential_secret as Buffer,
        secretContext('embedders', row!.id as string),
      ),
    ).toBe('sk-kept-across-restarts')
    await stop(again)
  })

  it('without a key file the server creates <data-dir>/encryption.key (0600), says replicas must share it, and reuses it', async () => {
    const target = await store()
    const first = await start(target, { 'encryption-key-file': undefined })
    const created = path.join(target.dataDir, 'encryption.key')
    expect(fs.statSync(created).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(created, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/)
    expect(
      first.logs.some((line) =>
        / WARN .*created a new encryption key.*every server sharing this database must use the same key/.test(line),
      ),
    ).toBe(true)
    const keyHex = fs.readFileSync(created, 'utf8').trim()
    for (const line of first.logs) expect(line).not.toContain(keyHex)
    await stop(first)

    const second = await start(target, { 'encryption-key-file': undefined })
    expect(fs.readFileSync(created, 'utf8').trim()).toBe(keyHex)
    expect(second.logs.some((line) => /created a new encryption key/.test(line))).toBe(false)
    expect(second.server.lifecycle.state).toBe('READY')
    await stop(second)

    // The same key through the environment variable is accepted too.
    const third = await start(
      target,
      { 'encryption-key-file': undefined },
      { env: { SERVICE_ENCRYPTION_KEY_FILE: created } },
    )
    expect(third.config.encryptionKeyFile).toBe(created)
    await stop(third)
  })

  it('a key file that does not hold a key fails start-up with EncryptionKeyError', async () => {
    const target = await store()
    const server = await start(
      target,
      { 'encryption-key-file': keyFile(`bad-${engine}.key`, 'not a key') },
      { waitForReady: false },
    )
    const error = await server.server.ready.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).toBeInstanceOf(EncryptionKeyError)
    expect((error as Error).message).toMatch(/must hold 32 bytes/)
  })
})
