// The client's local state: which server, which API key, and the certificate pinned
// for it. It holds a credential, so it is written 0600 in a 0700 directory, and
// atomically (temp file + rename) so that a crash never leaves half a file behind.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { configDir } from '../runtime/paths.js'
import { badInput } from './exit-codes.js'

export interface ClientConfig {
  /** Normalised server address (see parseServerAddress) the rest of the file belongs to. */
  server?: string
  apiKey?: string
  userId?: string
  /** ISO 8601 time of the `memsvc init` that created the key. */
  initializedAt?: string
  /** SHA-256 of the server's DER certificate, AA:BB:… as openssl and node print it. */
  pinnedCertificateSha256?: string
}

const FIELDS = [
  'server',
  'apiKey',
  'userId',
  'initializedAt',
  'pinnedCertificateSha256',
] as const satisfies readonly (keyof ClientConfig)[]
const FILE_MODE = 0o600
const DIR_MODE = 0o700
const GROUP_OR_OTHER_BITS = 0o077

/** $XDG_CONFIG_HOME/memsvc/config.json, or ~/.config/memsvc/config.json. */
export function configFilePath(): string {
  return path.join(configDir(), 'config.json')
}

export interface LoadedConfig {
  path: string
  config: ClientConfig
  /** Set when the file is readable by other users; the caller warns once. */
  tooOpen?: string
}

/** A missing file is an empty config; a malformed one is an error naming the file. */
export function readConfig(file = configFilePath()): LoadedConfig {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path: file, config: {} }
    throw badInput(`cannot read ${file}: ${(error as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw badInput(`${file} is not valid JSON (${(error as Error).message}); fix or delete it`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw badInput(`${file} must hold a JSON object`)
  const config: ClientConfig = {}
  for (const field of FIELDS) {
    const value = (parsed as Record<string, unknown>)[field]
    if (value === undefined || value === null) continue
    if (typeof value !== 'string') throw badInput(`${file}: "${field}" must be a string`)
    config[field] = value
  }
  const mode = fs.statSync(file).mode
  const tooOpen =
    mode & GROUP_OR_OTHER_BITS
      ? `${file} is accessible by other users (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${file}`
      : undefined
  return { path: file, config, tooOpen }
}

/** Writes the whole file atomically with mode 0600, creating the directory 0700. */
export function writeConfig(config: ClientConfig, file = configFilePath()): void {
  const dir = path.dirname(file)
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE })
    fs.chmodSync(dir, DIR_MODE) // mkdir's mode is filtered by the umask
  }
  const ordered: ClientConfig = {}
  for (const field of FIELDS) if (config[field] !== undefined) ordered[field] = config[field]
  const temp = path.join(dir, `.config.json.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`)
  const handle = fs.openSync(temp, 'wx', FILE_MODE)
  try {
    fs.writeFileSync(handle, `${JSON.stringify(ordered, null, 2)}\n`)
    fs.fsyncSync(handle)
  } finally {
    fs.closeSync(handle)
  }
  try {
    fs.chmodSync(temp, FILE_MODE)
    fs.renameSync(temp, file)
  } catch (error) {
    fs.rmSync(temp, { force: true })
    throw error
  }
}

/** Keeps a copy of a config about to be replaced by one for another server, so its key is not lost. */
export function backUpConfig(file = configFilePath()): string | undefined {
  if (!fs.existsSync(file)) return undefined
  const backup = `${file}.previous`
  fs.copyFileSync(file, backup)
  fs.chmodSync(backup, FILE_MODE)
  return backup
}
