// Where the server is and how to trust it: the system CAs by default, a CA given as PEM,
// a self-signed certificate pinned by its SHA-256 fingerprint (what `memsvc init` pins),
// or nothing at all (insecure: encrypted, unverified).
//
// Why the pin is not grpc-js `createSsl(…, {rejectUnauthorized: false, checkServerIdentity})`:
// Node calls checkServerIdentity only after the chain has verified, so with a self-signed
// certificate any certificate would be accepted. Instead the certificate the server presents
// is read first and checked against the pin, then becomes the only trust anchor, and
// checkServerIdentity compares fingerprints on the very connection the calls use.
import crypto from 'node:crypto'
import net from 'node:net'
import tls from 'node:tls'
import { type ChannelCredentials, credentials, status } from '@grpc/grpc-js'
import { clientError } from './errors.js'

const DEFAULT_PORT = 9090
const SHA256_BYTES = 32
const CERTIFICATE_FETCH_TIMEOUT_MS = 10_000

export interface TlsOptions {
  /** SHA-256 of the server's certificate (AA:BB:… or plain hex): trust exactly that certificate. */
  pinnedCertificateSha256?: string
  /** PEM of a CA (or of the self-signed certificate) to trust instead of the system CAs. */
  ca?: string | Buffer
  /** Encrypt but verify nothing. For trying things out only. */
  insecure?: boolean
}

export interface ServerAddress {
  host: string
  port: number
  tls: boolean
  /** grpc-js target: host:port, IPv6 in brackets. */
  target: string
}

/** https://host:port (TLS), http://host:port (plaintext) or host:port (TLS, the server's default). */
export function parseAddress(text: string): ServerAddress {
  const trimmed = text.trim()
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1]?.toLowerCase() ?? 'https'
  if (scheme !== 'http' && scheme !== 'https')
    throw clientError(
      status.INVALID_ARGUMENT,
      `address "${text}": use https://host:port, http://host:port or host:port`,
    )
  let url: URL
  try {
    url = new URL(trimmed.includes('://') ? trimmed : `https://${trimmed}`)
  } catch {
    throw clientError(
      status.INVALID_ARGUMENT,
      `address "${text}" is not host:port, https://host:port or http://host:port`,
    )
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  // URL drops a port that is the scheme's default (443/80); read it from the text then.
  const port = Number(url.port || /:(\d+)\/?$/.exec(trimmed)?.[1] || DEFAULT_PORT)
  return { host, port, tls: scheme === 'https', target: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}` }
}

/** Upper-case, colon-separated. */
export function normaliseFingerprint(text: string): string {
  const hex = text
    .replace(/^sha256:/i, '')
    .replaceAll(':', '')
    .trim()
    .toUpperCase()
  if (!/^[0-9A-F]+$/.test(hex) || hex.length !== SHA256_BYTES * 2) {
    throw clientError(
      status.INVALID_ARGUMENT,
      `pinnedCertificateSha256 "${text}" is not a SHA-256 fingerprint (64 hex digits, colons optional)`,
    )
  }
  return hex.match(/../g)!.join(':')
}

const sameFingerprint = (a: string, b: string) =>
  a.replaceAll(':', '').toUpperCase() === b.replaceAll(':', '').toUpperCase()

interface PresentedCertificate {
  fingerprint: string
  pem: string
  validFrom: Date
  validTo: Date
}

/** One TLS handshake that verifies nothing, only to read the certificate the server presents. */
function fetchCertificate(server: ServerAddress): Promise<PresentedCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: server.host,
      port: server.port,
      // SNI must not carry an IP address (RFC 6066).
      servername: net.isIP(server.host) ? undefined : server.host,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
      timeout: CERTIFICATE_FETCH_TIMEOUT_MS,
    })
    socket.once('secureConnect', () => {
      const peer = socket.getPeerCertificate()
      socket.destroy()
      if (!peer?.raw) {
        reject(clientError(status.UNAVAILABLE, `${server.target} presented no TLS certificate`))
        return
      }
      const x509 = new crypto.X509Certificate(peer.raw)
      resolve({
        fingerprint: x509.fingerprint256,
        pem: x509.toString(),
        validFrom: new Date(x509.validFrom),
        validTo: new Date(x509.validTo),
      })
    })
    socket.once('timeout', () => {
      socket.destroy()
      reject(
        clientError(
          status.UNAVAILABLE,
          `no TLS handshake with ${server.target} within ${CERTIFICATE_FETCH_TIMEOUT_MS / 1000} s`,
        ),
      )
    })
    socket.once('error', (error) => {
      socket.destroy()
      reject(
        clientError(status.UNAVAILABLE, `cannot read the TLS certificate of ${server.target}: ${error.message}`, error),
      )
    })
  })
}

async function pinnedCredentials(server: ServerAddress, pinText: string): Promise<ChannelCredentials> {
  const pin = normaliseFingerprint(pinText)
  const presented = await fetchCertificate(server)
  if (!sameFingerprint(presented.fingerprint, pin)) {
    throw clientError(
      status.UNAVAILABLE,
      `the TLS certificate of ${server.target} is not the pinned one: pinned SHA-256 ${pin}, server presents ${presented.fingerprint}`,
    )
  }
  const now = Date.now()
  if (presented.validTo.getTime() < now || presented.validFrom.getTime() > now) {
    throw clientError(
      status.UNAVAILABLE,
      `the pinned certificate of ${server.target} is outside its validity (${presented.validFrom.toISOString()} to ${presented.validTo.toISOString()})`,
    )
  }
  const secureContext = tls.createSecureContext({ ca: presented.pem, allowPartialTrustChain: true })
  return credentials.createFromSecureContext(secureContext, {
    checkServerIdentity: (_host, certificate) =>
      sameFingerprint(certificate.fingerprint256, pin)
        ? undefined
        : new Error(`certificate SHA-256 ${certificate.fingerprint256} is not the pinned ${pin}`),
  })
}

/** The channel credentials for the address and options; with a pin, checks it before any call. */
export async function channelCredentials(
  server: ServerAddress,
  options: TlsOptions | undefined,
): Promise<ChannelCredentials> {
  if (!server.tls) {
    if (options?.pinnedCertificateSha256 || options?.ca)
      throw clientError(
        status.INVALID_ARGUMENT,
        `TLS options were given for the plaintext address http://${server.target}`,
      )
    return credentials.createInsecure()
  }
  if (options?.insecure)
    return credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined })
  if (options?.pinnedCertificateSha256) return pinnedCredentials(server, options.pinnedCertificateSha256)
  return credentials.createSsl(options?.ca === undefined ? null : Buffer.from(options.ca))
}
