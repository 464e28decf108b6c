// How the client decides to trust a TLS server: system CAs by default, or a
// certificate pinned on first use by `memsvc init`, or nothing with --insecure.
//
// Why not grpc-js `createSsl(null, null, null, {rejectUnauthorized: false,
// checkServerIdentity})` for the pin: Node calls checkServerIdentity only after the
// chain has verified, so with a self-signed certificate and rejectUnauthorized false
// it is never called and ANY certificate would be accepted. Instead the pinned
// certificate becomes the only trust anchor (allowPartialTrustChain, so a pinned leaf
// issued by a private CA works too) and checkServerIdentity compares fingerprints in
// place of the hostname check, on the very connection the calls use.
import crypto from 'node:crypto'
import net from 'node:net'
import tls from 'node:tls'
import { type ChannelCredentials, credentials } from '@grpc/grpc-js'
import type { ClientSettings } from './client-settings.js'
import { badInput, unreachable } from './exit-codes.js'
import type { ServerAddress } from './server-address.js'

const PROBE_TIMEOUT_MS = 10_000
const SHA256_BYTES = 32

export interface PresentedCertificate {
  /** SHA-256 of the DER certificate, AA:BB:… */
  fingerprint: string
  pem: string
  /** Verified against the system CAs and the host name. */
  trusted: boolean
  /** Why it is not trusted (OpenSSL code such as DEPTH_ZERO_SELF_SIGNED_CERT). */
  trustError?: string
  validTo: Date
  validFrom: Date
}

/** Upper-case, colon-separated; accepts the same with or without colons, any case. */
export function normaliseFingerprint(text: string, what = 'fingerprint'): string {
  const hex = text
    .replace(/^sha256:/i, '')
    .replaceAll(':', '')
    .trim()
    .toUpperCase()
  if (!/^[0-9A-F]+$/.test(hex) || hex.length !== SHA256_BYTES * 2)
    throw badInput(`${what} "${text}" is not a SHA-256 fingerprint (64 hex digits, colons optional)`)
  return hex.match(/../g)!.join(':')
}

const firstLine = (text: string) => text.split('\n')[0]!.trim()

export function sameFingerprint(a: string, b: string): boolean {
  return a.replaceAll(':', '').toUpperCase() === b.replaceAll(':', '').toUpperCase()
}

/** Turns a socket error into one line that names the address and says what to try. */
export function describeConnectFailure(server: ServerAddress, error: NodeJS.ErrnoException): string {
  const code = error.code ?? ''
  const where = server.target
  const hint = 'check the address or choose another with --server (or SERVICE_SERVER)'
  switch (code) {
    case 'ECONNREFUSED':
      return `cannot connect to ${where}: connection refused; is the server running? ${hint}`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve host "${server.host}"; ${hint}`
    case 'ETIMEDOUT':
    case 'ETIMEOUT':
      return `cannot connect to ${where}: timed out; ${hint}`
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `cannot connect to ${where}: no route to host; ${hint}`
    default:
      return `cannot connect to ${where}: ${firstLine(error.message)}; ${hint}`
  }
}

/** Errors of a TLS handshake with a peer that does not speak TLS. */
function looksLikePlaintextPeer(error: NodeJS.ErrnoException): boolean {
  return (
    error.code === 'ECONNRESET' ||
    error.code === 'EPROTO' ||
    /wrong version number|packet length too long|disconnected before secure TLS connection/i.test(error.message)
  )
}

/**
 * Opens one TLS connection without verifying anything, only to read the certificate
 * the server presents (and whether the system CAs would trust it).
 */
export function fetchCertificate(server: ServerAddress, timeoutMs = PROBE_TIMEOUT_MS): Promise<PresentedCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: server.host,
      port: server.port,
      // SNI must not carry an IP address (RFC 6066).
      servername: net.isIP(server.host) ? undefined : server.host,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
      timeout: timeoutMs,
    })
    socket.once('secureConnect', () => {
      const peer = socket.getPeerCertificate()
      socket.destroy()
      if (!peer?.raw) {
        reject(unreachable(`${server.target} presented no TLS certificate`))
        return
      }
      const x509 = new crypto.X509Certificate(peer.raw)
      resolve({
        fingerprint: x509.fingerprint256,
        pem: x509.toString(),
        trusted: socket.authorized,
        trustError: socket.authorized ? undefined : String(socket.authorizationError ?? 'not trusted'),
        validFrom: new Date(x509.validFrom),
        validTo: new Date(x509.validTo),
      })
    })
    socket.once('timeout', () => {
      socket.destroy()
      reject(
        unreachable(
          `cannot connect to ${server.target}: no TLS handshake within ${timeoutMs / 1000} s; ` +
            'check the address or choose another with --server',
        ),
      )
    })
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy()
      if (error.syscall === 'connect' || error.syscall === 'getaddrinfo')
        reject(unreachable(describeConnectFailure(server, error)))
      else if (looksLikePlaintextPeer(error)) {
        reject(
          unreachable(
            `${server.target} does not answer with TLS; if the server runs with --tls-disabled, use --server http://${server.target}`,
          ),
        )
      } else reject(unreachable(`TLS handshake with ${server.target} failed: ${firstLine(error.message)}`))
    })
  })
}

/** The message for a server whose certificate is not the pinned one. Never silently accepted. */
export function pinMismatchMessage(settings: ClientSettings, presented: string): string {
  return (
    `the TLS certificate of ${settings.server.url} has CHANGED: pinned SHA-256 ${settings.pin}, server now presents ${presented}. ` +
    'This happens when the server got a new certificate (e.g. a new data directory), ' +
    'but it can also mean someone is intercepting the connection. ' +
    'If you expected it, re-pin with "memsvc init --repin" ' +
    `(or put the new fingerprint in pinnedCertificateSha256 in ${settings.configPath}); ` +
    '--insecure skips verification for one command'
  )
}

export function untrustedMessage(settings: ClientSettings, presented: PresentedCertificate): string {
  return (
    `the TLS certificate of ${settings.server.url} is not trusted (${presented.trustError}; SHA-256 ${presented.fingerprint}). ` +
    'For a self-signed server run "memsvc init" (or "memsvc init --api-key KEY" if it is already initialised) to pin it; ' +
    '--insecure skips verification'
  )
}

/** Credentials that accept exactly the pinned certificate, on the connection the calls use. */
export function pinnedCredentials(pem: string, pin: string): ChannelCredentials {
  const secureContext = tls.createSecureContext({ ca: pem, allowPartialTrustChain: true })
  return credentials.createFromSecureContext(secureContext, {
    checkServerIdentity: (_host, certificate) =>
      sameFingerprint(certificate.fingerprint256, pin)
        ? undefined
        : new Error(`certificate SHA-256 ${certificate.fingerprint256} is not the pinned ${pin}`),
  })
}

/** --insecure: encrypted, but nothing verified. */
export function unverifiedCredentials(): ChannelCredentials {
  return credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined })
}

/**
 * Chooses the channel credentials for the settings. With a pin, first reads the
 * presented certificate so that a change is reported clearly before any call.
 */
export async function channelCredentials(settings: ClientSettings): Promise<ChannelCredentials> {
  if (!settings.server.tls) return credentials.createInsecure()
  if (settings.insecure) return unverifiedCredentials()
  if (!settings.pin) return credentials.createSsl()
  const pin = normaliseFingerprint(settings.pin, `pinnedCertificateSha256 in ${settings.configPath}`)
  const presented = await fetchCertificate(settings.server)
  if (!sameFingerprint(presented.fingerprint, pin))
    throw unreachable(pinMismatchMessage({ ...settings, pin }, presented.fingerprint))
  const now = Date.now()
  if (presented.validTo.getTime() < now || presented.validFrom.getTime() > now) {
    throw unreachable(
      `the pinned certificate of ${settings.server.url} is outside its validity ` +
        `(${presented.validFrom.toISOString()} to ${presented.validTo.toISOString()}); ` +
        'restart the server so that it renews it, then re-pin with "memsvc init --repin"; --insecure skips verification',
    )
  }
  return pinnedCredentials(presented.pem, pin)
}
