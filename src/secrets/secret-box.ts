import crypto from 'node:crypto'

/** The server key is 32 bytes: AES-256. */
export const ENCRYPTION_KEY_BYTES = 32

const IV_BYTES = 12
const TAG_BYTES = 16
/** First byte of every sealed value, so that a later scheme can be told apart. */
const FORMAT_VERSION = 1
const SHORT_FINGERPRINT_HEX = 8

/** Sub-keys are derived per purpose, so the raw server key is used for nothing else. */
function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), `memsvc ${purpose}`, ENCRYPTION_KEY_BYTES))
}

/**
 * Identifies a server key without revealing it: SHA-256 over a fixed label and the key.
 * The database records it; a server started with another key refuses to start.
 */
export function encryptionKeyId(master: Buffer): string {
  return crypto.createHash('sha256').update('memsvc encryption key id v1\0').update(master).digest('hex')
}

/**
 * Everything the service does with provider secrets under the server key:
 * AES-256-GCM sealing at rest and keyed fingerprints. Never logs, never exposes the key.
 */
export class SecretBox {
  readonly #encryptionKey: Buffer
  readonly #fingerprintKey: Buffer
  /** See encryptionKeyId. */
  readonly keyId: string

  constructor(master: Buffer) {
    if (master.length !== ENCRYPTION_KEY_BYTES)
      throw new Error(`the encryption key must be ${ENCRYPTION_KEY_BYTES} bytes`)
    this.#encryptionKey = deriveKey(master, 'secret encryption v1')
    this.#fingerprintKey = deriveKey(master, 'secret fingerprint v1')
    this.keyId = encryptionKeyId(master)
  }

  /**
   * Seals `plaintext` as version ‖ IV ‖ tag ‖ ciphertext. `context` (e.g. the row's
   * table and id) is authenticated too, so a sealed value moved to another row fails to open.
   */
  seal(plaintext: string, context: string): Buffer {
    const iv = crypto.randomBytes(IV_BYTES)
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#encryptionKey, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return Buffer.concat([Buffer.from([FORMAT_VERSION]), iv, cipher.getAuthTag(), ciphertext])
  }

  /** Opens a value sealed by `seal` with the same context; throws if it was altered, moved or sealed under another key. */
  open(sealed: Buffer, context: string): string {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== FORMAT_VERSION) throw new Error('not a sealed secret')
    const iv = sealed.subarray(1, 1 + IV_BYTES)
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES)
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.#encryptionKey, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    )
  }

  /** HMAC-SHA256 of the secret under a key derived from the server key, in hex: equal secrets, equal values. */
  fingerprint(secret: string): string {
    return crypto.createHmac('sha256', this.#fingerprintKey).update(secret, 'utf8').digest('hex')
  }

  /** What responses show: enough to tell two secrets apart, useless for guessing one offline. */
  shortFingerprint(secret: string): string {
    return this.fingerprint(secret).slice(0, SHORT_FINGERPRINT_HEX)
  }
}
