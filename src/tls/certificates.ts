import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import type { TlsSettings } from '../config/server-config.js'
import type { Logger } from '../observability/logger.js'

export interface TlsMaterial {
  certFile: string
  keyFile: string
  /** SHA-256 of the DER certificate, as clients pin it. */
  fingerprint: string
  selfSigned: boolean
}

const CERT_VALIDITY_DAYS = 825
const RENEW_BEFORE_DAYS = 30
const MS_PER_DAY = 86_400_000

export function certificateFingerprint(pem: string): string {
  return new crypto.X509Certificate(pem).fingerprint256
}

function subjectAltNames(certificate: crypto.X509Certificate): string[] {
  return (certificate.subjectAltName ?? '')
    .split(', ')
    .filter(Boolean)
    .map((entry) => entry.replace(/^(DNS|IP Address):/, ''))
}

function normaliseHost(host: string): string {
  // X509Certificate prints IPv6 SANs in full form; compare canonical forms.
  if (net.isIPv6(host)) {
    const expanded = new URL(`http://[${host}]`).hostname.slice(1, -1)
    return expanded
  }
  return host.toLowerCase()
}

function coversHostnames(certificate: crypto.X509Certificate, hostnames: string[]): boolean {
  const names = new Set(subjectAltNames(certificate).map(normaliseHost))
  return hostnames.every((host) => names.has(normaliseHost(host)) || names.has(host.toLowerCase()))
}

/**
 * Resolves the certificate both listeners share. With no pair given, makes a
 * self-signed EC P-256 / SHA-256 certificate for the configured hostnames and keeps
 * it in the data directory, so clients can pin it across restarts; it is replaced
 * only when the hostnames change or it nears expiry.
 */
export async function resolveTlsMaterial(
  settings: TlsSettings,
  dataDir: string,
  log: Logger,
): Promise<TlsMaterial | undefined> {
  if (settings.mode === 'disabled') return undefined
  if (settings.trustCertFile)
    log.warn('--tls-trust-cert-file is accepted but unused: client-certificate auth is not supported yet', {
      file: settings.trustCertFile,
    })
  if (settings.mode === 'files') {
    const certPem = fs.readFileSync(settings.certFile, 'utf8')
    const keyPem = fs.readFileSync(settings.keyFile, 'utf8')
    const certificate = new crypto.X509Certificate(certPem)
    if (!certificate.checkPrivateKey(crypto.createPrivateKey(keyPem))) {
      throw new Error(`--tls-key-file does not match the certificate in --tls-cert-file`)
    }
    return {
      certFile: settings.certFile,
      keyFile: settings.keyFile,
      fingerprint: certificate.fingerprint256,
      selfSigned: false,
    }
  }

  const tlsDir = path.join(dataDir, 'tls')
  const certFile = path.join(tlsDir, 'server.crt')
  const keyFile = path.join(tlsDir, 'server.key')
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) {
    const certPem = fs.readFileSync(certFile, 'utf8')
    const certificate = new crypto.X509Certificate(certPem)
    const renewAfter = new Date(certificate.validTo).getTime() - RENEW_BEFORE_DAYS * MS_PER_DAY
    if (coversHostnames(certificate, settings.hostnames) && Date.now() < renewAfter) {
      return { certFile, keyFile, fingerprint: certificate.fingerprint256, selfSigned: true }
    }
    log.warn(
      'replacing the self-signed certificate: hostnames changed or it is about to expire; clients that pinned it must re-pin',
      { certFile },
    )
  }

  fs.mkdirSync(tlsDir, { recursive: true, mode: 0o700 })
  fs.chmodSync(tlsDir, 0o700)
  const now = new Date()
  // Loaded only to make a certificate, which is rare: its X.509 libraries took tens of milliseconds of every start.
  const { generate } = await import('selfsigned')
  const pems = await generate(
    [
      { name: 'commonName', value: settings.hostnames[0]! },
      { name: 'organizationName', value: 'memsvc self-signed' },
    ],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate: new Date(now.getTime() - MS_PER_DAY),
      notAfterDate: new Date(now.getTime() + CERT_VALIDITY_DAYS * MS_PER_DAY),
      extensions: [
        { name: 'basicConstraints', cA: false, critical: true },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: settings.hostnames.map((host) =>
            net.isIP(host) ? { type: 7 as const, ip: host } : { type: 2 as const, value: host },
          ),
        },
      ],
    },
  )
  fs.writeFileSync(keyFile, pems.private, { mode: 0o600 })
  fs.writeFileSync(certFile, pems.cert, { mode: 0o600 })
  const fingerprint = certificateFingerprint(pems.cert)
  log.info('created a self-signed certificate', { certFile, hostnames: settings.hostnames.join(','), fingerprint })
  return { certFile, keyFile, fingerprint, selfSigned: true }
}
