import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Logger } from '../observability/logger.js'
import { ENCRYPTION_KEY_BYTES, SecretBox } from './secret-box.js'

/**
 * The server key cannot be used: malformed, unreadable, or not the key the database's
 * secrets were encrypted with. The serve command exits 2 with this one-line message.
 */
export class EncryptionKeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EncryptionKeyError'
  }
}

/** Name of the key file the server creates in the data directory when none is configured. */
export const DEFAULT_KEY_FILE_NAME = 'encryption.key'

const HEX_KEY = /^[0-9a-fA-F]{64}$/
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/
const SHORT_ID = 12

const shortId = (keyId: string) => keyId.slice(0, SHORT_ID)

/** A key file holds 32 raw bytes, or 64 hex digits, or 32 bytes in base64 (surrounding whitespace ignored). */
export function parseEncryptionKey(content: Buffer, file: string): Buffer {
  if (content.length === ENCRYPTION_KEY_BYTES) return Buffer.from(content)
  const text = content.toString('latin1').trim()
  if (HEX_KEY.test(text)) return Buffer.from(text, 'hex')
  if (BASE64_KEY.test(text)) return Buffer.from(text, 'base64')
  throw new EncryptionKeyError(
    `encryption key file ${file} must hold ${ENCRYPTION_KEY_BYTES} bytes: raw, as 64 hex digits or in base64 ` +
      `(e.g. "openssl rand -hex 32 > ${path.basename(file)}")`,
  )
}

function readKeyFile(file: string): Buffer {
  try {
    return fs.readFileSync(file)
  } catch (error) {
    throw new EncryptionKeyError(
      `cannot read encryption key file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
}

export interface LoadedKey {
  box: SecretBox
  /** Where the key came from, for messages. */
  file: string
}

/**
 * The server key: from --encryption-key-file / SERVICE_ENCRYPTION_KEY_FILE, else
 * `<dataDir>/encryption.key`, created (0600) on first start. Logs the key's id, never the key.
 */
export function loadEncryptionKey(configuredFile: string | undefined, dataDir: string, log: Logger): LoadedKey {
  const file = configuredFile ?? path.join(dataDir, DEFAULT_KEY_FILE_NAME)
  if (configuredFile === undefined && !fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    try {
      fs.writeFileSync(file, `${crypto.randomBytes(ENCRYPTION_KEY_BYTES).toString('hex')}\n`, {
        mode: 0o600,
        flag: 'wx',
      })
      log.warn(
        'created a new encryption key for stored provider secrets; every server sharing this database must use the same key ' +
          '(copy the file and pass --encryption-key-file or SERVICE_ENCRYPTION_KEY_FILE), ' +
          'and without it stored secrets cannot be recovered: back it up',
        { file },
      )
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new EncryptionKeyError(
          `cannot create encryption key file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        )
      }
    }
  }
  const box = new SecretBox(parseEncryptionKey(readKeyFile(file), file))
  try {
    if ((fs.statSync(file).mode & 0o077) !== 0)
      log.warn('the encryption key file is readable by other users; make it 0600', { file })
  } catch {
    // Checked only to warn.
  }
  log.info('encryption key loaded', { file, keyId: shortId(box.keyId) })
  return { box, file }
}

/**
 * The database records the id of the first key it sees (db/sql/encryption-key.ts); a
 * different key is refused, rather than writing secrets nobody can decrypt or failing to
 * read old ones.
 */
export function verifyEncryptionKey(key: LoadedKey, recordedKeyId: string): void {
  if (recordedKeyId !== key.box.keyId) {
    throw new EncryptionKeyError(
      `encryption key mismatch: ${key.file} holds key ${shortId(key.box.keyId)} ` +
        `but this database's secrets are encrypted with key ${shortId(recordedKeyId)}; ` +
        'start with the original key file (--encryption-key-file or SERVICE_ENCRYPTION_KEY_FILE) — ' +
        'every server sharing the database must use the same key',
    )
  }
}
