// Where `memsvc upgrade --from` reads the new executable and its checksum: a local
// file or an http(s) URL (redirects followed), streamed with a progress line.
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { badInput, CliError, EXIT_FAILED, unreachable } from '../exit-codes.js'
import { Progress } from './progress.js'

const MAX_REDIRECTS = 5
const IDLE_TIMEOUT_MS = 30_000
const MAX_CHECKSUM_FILE_BYTES = 64 * 1024

export type Source = { kind: 'file'; path: string } | { kind: 'url'; url: URL }

export function parseSource(text: string): Source {
  if (/^https?:\/\//i.test(text)) {
    try {
      return { kind: 'url', url: new URL(text) }
    } catch {
      throw badInput(`--from ${text}: not a valid URL`)
    }
  }
  if (/^file:\/\//i.test(text)) return { kind: 'file', path: fileURLToPath(text) }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw badInput(`--from ${text}: use a file path or an http(s) URL`)
  return { kind: 'file', path: path.resolve(text) }
}

export function describeSource(source: Source): string {
  return source.kind === 'file' ? source.path : source.url.href
}

/** A release bundle (npm run release) rather than a bare executable. */
export function isBundle(source: Source): boolean {
  return /\.(tar\.gz|tgz)$/i.test(source.kind === 'file' ? source.path : source.url.pathname)
}

/** The checksum file beside the source: SHA256SUMS for a release bundle, else <from>.sha256. */
export function checksumSourceFor(source: Source): Source {
  if (source.kind === 'file')
    return {
      kind: 'file',
      path: isBundle(source) ? path.join(path.dirname(source.path), 'SHA256SUMS') : `${source.path}.sha256`,
    }
  const url = new URL(source.url.href)
  url.pathname = isBundle(source)
    ? path.posix.join(path.posix.dirname(url.pathname), 'SHA256SUMS')
    : `${url.pathname}.sha256`
  return { kind: 'url', url }
}

class NotFound extends Error {}

interface Opened {
  stream: Readable
  size?: number
}

function get(url: URL, redirectsLeft: number): Promise<Opened> {
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const request = client.get(
      url,
      { timeout: IDLE_TIMEOUT_MS, headers: { 'user-agent': 'memsvc-upgrade' } },
      (response) => {
        const status = response.statusCode ?? 0
        if (status >= 300 && status < 400 && response.headers.location) {
          response.resume()
          if (redirectsLeft === 0) {
            reject(new CliError(`${url.href}: too many redirects`, EXIT_FAILED))
            return
          }
          get(new URL(response.headers.location, url), redirectsLeft - 1).then(resolve, reject)
          return
        }
        if (status === 404 || status === 410) {
          response.resume()
          reject(new NotFound(`${url.href}: HTTP ${status}`))
          return
        }
        if (status !== 200) {
          response.resume()
          reject(new CliError(`${url.href}: HTTP ${status} ${response.statusMessage ?? ''}`.trim(), EXIT_FAILED))
          return
        }
        const length = Number(response.headers['content-length'])
        resolve({ stream: response, size: Number.isFinite(length) && length > 0 ? length : undefined })
      },
    )
    request.on('timeout', () => request.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })))
    request.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error instanceof CliError ? error : unreachable(`cannot download ${url.href}: ${error.code ?? error.message}`),
      ),
    )
  })
}

async function open(source: Source): Promise<Opened> {
  if (source.kind === 'url') return get(source.url, MAX_REDIRECTS)
  try {
    const stat = fs.statSync(source.path)
    if (!stat.isFile()) throw new CliError(`${source.path} is not a file`, EXIT_FAILED)
    return { stream: fs.createReadStream(source.path), size: stat.size }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFound(`${source.path} does not exist`)
    if (error instanceof CliError) throw error
    throw new CliError(`cannot read ${source.path}: ${(error as Error).message}`, EXIT_FAILED)
  }
}

/** Copies the source into `file` (already created), hashing as it goes; returns the SHA-256 hex. */
export async function download(source: Source, file: string): Promise<{ sha256: string; bytes: number }> {
  let opened: Opened
  try {
    opened = await open(source)
  } catch (error) {
    if (error instanceof NotFound) throw new CliError(`cannot download: ${error.message}`, EXIT_FAILED)
    throw error
  }
  const hash = crypto.createHash('sha256')
  const progress = new Progress(describeSource(source), opened.size)
  let bytes = 0
  opened.stream.on('data', (chunk: Buffer) => {
    hash.update(chunk)
    bytes += chunk.length
    progress.update(bytes)
  })
  try {
    await pipeline(opened.stream, fs.createWriteStream(file))
  } catch (error) {
    progress.abort()
    throw new CliError(`download of ${describeSource(source)} failed: ${(error as Error).message}`, EXIT_FAILED)
  }
  if (opened.size !== undefined && bytes !== opened.size) {
    progress.abort()
    throw new CliError(
      `download of ${describeSource(source)} was cut short: ${bytes} of ${opened.size} bytes`,
      EXIT_FAILED,
    )
  }
  progress.done(bytes)
  return { sha256: hash.digest('hex'), bytes }
}

const SHA256_HEX = /^[0-9a-f]{64}$/i

export function normaliseSha256(text: string, what: string): string {
  const value = text.trim().toLowerCase()
  if (!SHA256_HEX.test(value)) throw badInput(`${what} "${text}" is not a SHA-256 (64 hex digits)`)
  return value
}

async function readSmall(source: Source): Promise<string> {
  const { stream } = await open(source)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += (chunk as Buffer).length
    if (size > MAX_CHECKSUM_FILE_BYTES)
      throw new CliError(`${describeSource(source)} is too large for a checksum file`, EXIT_FAILED)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The expected SHA-256: --sha256, else the checksum file beside the source in
 * `sha256sum` format ("HEX  name" lines; the line naming the file wins) or a bare hex.
 */
export async function expectedSha256(
  source: Source,
  flag: string | undefined,
): Promise<{ sha256: string; from: string }> {
  if (flag !== undefined) return { sha256: normaliseSha256(flag, '--sha256'), from: '--sha256' }
  const checksumSource = checksumSourceFor(source)
  let text: string
  try {
    text = await readSmall(checksumSource)
  } catch (error) {
    if (error instanceof NotFound) {
      throw badInput(
        `no checksum: ${describeSource(checksumSource)} does not exist; pass --sha256 HEX (never install an unverified executable)`,
      )
    }
    throw error
  }
  const name = source.kind === 'file' ? path.basename(source.path) : path.posix.basename(source.url.pathname)
  const entries = text
    .split('\n')
    .map((line) => line.trim().split(/\s+\*?/))
    .filter(([hex]) => hex !== undefined && SHA256_HEX.test(hex))
  const entry = entries.find(([, file]) => file !== undefined && path.basename(file) === name) ?? entries[0]
  if (!entry) throw new CliError(`${describeSource(checksumSource)} holds no SHA-256`, EXIT_FAILED)
  return { sha256: entry[0]!.toLowerCase(), from: describeSource(checksumSource) }
}
