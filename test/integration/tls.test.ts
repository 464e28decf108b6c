import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import * as grpc from '@grpc/grpc-js'
import { generate } from 'selfsigned'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TLS12_CIPHERS } from '../../src/tls/cipher-policy.js'
import { HealthProbe, ServingStatus } from '../support/grpc-clients.js'
import { httpRequest } from '../support/http-client.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2'
const TLS_ON = { 'tls-disabled': false }

/** The outer signatureAlgorithm OID of a DER certificate, read from the bytes themselves. */
function signatureAlgorithmOid(der: Buffer): string {
  let offset = 0
  const header = () => {
    const tag = der[offset++]!
    let length = der[offset++]!
    if (length & 0x80) {
      const bytes = length & 0x7f
      length = 0
      for (let i = 0; i < bytes; i++) length = length * 256 + der[offset++]!
    }
    return { tag, length }
  }
  expect(header().tag).toBe(0x30) // Certificate SEQUENCE
  const tbs = header()
  expect(tbs.tag).toBe(0x30)
  offset += tbs.length // skip tbsCertificate
  expect(header().tag).toBe(0x30) // AlgorithmIdentifier SEQUENCE
  const oid = header()
  expect(oid.tag).toBe(0x06)
  const bytes = der.subarray(offset, offset + oid.length)
  const parts = [Math.floor(bytes[0]! / 40), bytes[0]! % 40]
  let value = 0
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f)
    if (!(byte & 0x80)) {
      parts.push(value)
      value = 0
    }
  }
  return parts.join('.')
}

interface PeerCertificate {
  fingerprint256: string
  subjectaltname?: string
  raw: Buffer
  authorized: boolean
  alpn: string | false | null
}

/** Opens a TLS connection to a listener and returns the certificate it presents. */
function peerCertificate(
  port: number,
  options: { ca?: Buffer | string; servername?: string; alpn?: string[] } = {},
): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      ca: options.ca,
      servername: options.servername,
      ALPNProtocols: options.alpn,
      rejectUnauthorized: false, // inspected below instead, so a failure shows what was served
    })
    socket.setTimeout(10_000, () => socket.destroy(new Error('TLS handshake timed out')))
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerCertificate()
      resolve({
        fingerprint256: certificate.fingerprint256,
        subjectaltname: certificate.subjectaltname,
        raw: certificate.raw,
        authorized: socket.authorized,
        alpn: socket.alpnProtocol,
      })
      socket.end()
    })
    socket.once('error', reject)
  })
}

const restPort = (server: TestServer) => server.server.restPort
const grpcPort = (server: TestServer) => server.server.grpcPort

/**
 * One `openssl s_client` handshake; resolves with the negotiated cipher, or undefined when
 * the server refused. Asynchronous: the server under test runs in this process.
 */
function opensslHandshake(port: number, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-alpn', 'h2', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    const timer = setTimeout(() => child.kill(), 5_000)
    child.on('close', () => {
      clearTimeout(timer)
      const cipher = /Cipher is (\S+)/.exec(output)?.[1]
      resolve(cipher && cipher !== '(NONE)' ? cipher : undefined)
    })
  })
}

/** TLS 1.2 suites OpenSSL's defaults accept and the policy must not: CBC with SHA-1 and SHA-256, CCM, ARIA, Camellia, static RSA, DHE. */
const REFUSED_TLS12_SUITES = [
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-ECDSA-AES128-SHA256',
  'ECDHE-ECDSA-AES128-CCM',
  'ECDHE-ECDSA-AES256-CCM8',
  'ECDHE-ECDSA-ARIA128-GCM-SHA256',
  'ECDHE-ECDSA-CAMELLIA128-SHA256',
  'AES128-GCM-SHA256',
  'AES128-SHA',
  'DHE-RSA-AES128-GCM-SHA256',
]

describe('TLS with the default self-signed certificate (embedded, in-process)', () => {
  let dataDir: string
  let server: TestServer | undefined
  let certPem: string
  let certificate: crypto.X509Certificate
  const certFile = () => path.join(dataDir, 'tls', 'server.crt')
  const keyFile = () => path.join(dataDir, 'tls', 'server.key')

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-tls-'))
    server = await startTestServer({ engine: 'embedded', dataDir, flags: TLS_ON })
    certPem = fs.readFileSync(certFile(), 'utf8')
    certificate = new crypto.X509Certificate(certPem)
  })

  afterAll(async () => {
    await server?.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  describe('first start', () => {
    it('TLS is on by default: REST URL is https and the server reports the certificate it made', () => {
      expect(server!.restUrl.startsWith('https://')).toBe(true)
      expect(server!.server.tls).toMatchObject({
        certFile: certFile(),
        keyFile: keyFile(),
        selfSigned: true,
        fingerprint: certificate.fingerprint256,
      })
      expect(server!.logs.some((line) => line.includes('created a self-signed certificate'))).toBe(true)
    })

    it('EC P-256 key with an ecdsa-with-SHA256 signature', () => {
      expect(certificate.publicKey.asymmetricKeyType).toBe('ec')
      expect(certificate.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1')
      expect(signatureAlgorithmOid(certificate.raw)).toBe(ECDSA_WITH_SHA256)
      expect(certificate.checkPrivateKey(crypto.createPrivateKey(fs.readFileSync(keyFile())))).toBe(true)
      expect(certificate.verify(certificate.publicKey)).toBe(true) // self-signed
    })

    it('SANs are exactly localhost, 127.0.0.1 and ::1', () => {
      expect(certificate.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1')
      expect(certificate.checkHost('localhost')).toBe('localhost')
      expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1')
      expect(certificate.checkIP('::1')).toBe('::1')
      expect(certificate.checkHost('example.org')).toBeUndefined()
      expect(certificate.subject).not.toContain('example.org')
    })

    it('is currently valid and is not a CA', () => {
      const now = Date.now()
      expect(new Date(certificate.validFrom).getTime()).toBeLessThan(now)
      expect(new Date(certificate.validTo).getTime()).toBeGreaterThan(now + 365 * 86_400_000)
      expect(certificate.ca).toBe(false)
    })

    it('the key is private (0600) in a private directory (0700)', () => {
      expect(fs.statSync(keyFile()).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.dirname(keyFile())).mode & 0o777).toBe(0o700)
    })

    it('REST serves that certificate, and a client pinning it verifies it by name and by IP', async () => {
      for (const servername of ['localhost', undefined]) {
        const peer = await peerCertificate(restPort(server!), { ca: certPem, servername })
        expect(peer.fingerprint256).toBe(certificate.fingerprint256)
        expect(peer.authorized).toBe(true)
      }
      const response = await httpRequest(`${server!.restUrl}/readyz`, { ca: certPem })
      expect(response.status).toBe(200)
      expect(response.json()).toEqual({ ready: true, state: 'READY' })
    })

    it('gRPC serves the same certificate (h2 over TLS), and health answers over it', async () => {
      const peer = await peerCertificate(grpcPort(server!), { ca: certPem, alpn: ['h2'] })
      expect(peer.fingerprint256).toBe(certificate.fingerprint256)
      expect(peer.alpn).toBe('h2')
      const health = new HealthProbe({ address: server!.grpcAddress, ca: certPem })
      try {
        expect(await health.check('')).toBe(ServingStatus.SERVING)
      } finally {
        health.close()
      }
    })

    it('a client that does not trust the certificate is refused (REST and gRPC)', async () => {
      await expect(httpRequest(`${server!.restUrl}/livez`)).rejects.toThrow(/self[- ]signed/i)
      const otherCa = generate([{ name: 'commonName', value: 'someone else' }], {
        keyType: 'ec',
        curve: 'P-256',
        algorithm: 'sha256',
      })
      const health = new HealthProbe({ address: server!.grpcAddress, ca: (await otherCa).cert })
      try {
        await expect(health.check('', 5_000)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE })
      } finally {
        health.close()
      }
    })

    it('both ports accept only ECDHE+AEAD suites over TLS 1.2 (CBC-SHA1 refused) and speak TLS 1.3', async () => {
      // The self-signed certificate is EC: of the policy, the ECDSA suites are the ones it can use.
      const wanted = TLS12_CIPHERS.split(':').filter((name) => name.includes('ECDSA'))
      for (const port of [restPort(server!), grpcPort(server!)]) {
        const refused = await Promise.all(
          REFUSED_TLS12_SUITES.map((cipher) => opensslHandshake(port, ['-tls1_2', '-cipher', cipher])),
        )
        expect(
          Object.fromEntries(REFUSED_TLS12_SUITES.map((cipher, index) => [cipher, refused[index]])),
          `port ${port}`,
        ).toEqual(Object.fromEntries(REFUSED_TLS12_SUITES.map((cipher) => [cipher, undefined])))
        const accepted = await Promise.all(
          wanted.map((cipher) => opensslHandshake(port, ['-tls1_2', '-cipher', cipher])),
        )
        expect(accepted, `port ${port}`).toEqual(wanted)
        expect(await opensslHandshake(port, ['-tls1_3'])).toMatch(/^TLS_/)
        expect(await opensslHandshake(port, ['-tls1_1'])).toBeUndefined()
      }
    })

    it('plaintext requests to the TLS port get no answer', async () => {
      await expect(httpRequest(`http://127.0.0.1:${restPort(server!)}/livez`, { timeoutMs: 5_000 })).rejects.toThrow()
    })
  })

  describe('restarts', () => {
    it('the same certificate is reused on restart with the same data dir', async () => {
      await server!.stop()
      server = undefined
      server = await startTestServer({ engine: 'embedded', dataDir, flags: TLS_ON })
      expect(fs.readFileSync(certFile(), 'utf8')).toBe(certPem)
      expect(server.server.tls?.fingerprint).toBe(certificate.fingerprint256)
      expect((await peerCertificate(restPort(server))).fingerprint256).toBe(certificate.fingerprint256)
      expect((await peerCertificate(grpcPort(server), { alpn: ['h2'] })).fingerprint256).toBe(
        certificate.fingerprint256,
      )
      expect(server.logs.some((line) => line.includes('self-signed certificate'))).toBe(false)
    })

    it('SERVICE_TLS_SELF_SIGNED_HOSTNAMES changes the SANs and regenerates the certificate on restart', async () => {
      await server!.stop()
      server = undefined
      const env = { SERVICE_TLS_SELF_SIGNED_HOSTNAMES: 'memsvc.example.test,10.20.30.40' }
      server = await startTestServer({ engine: 'embedded', dataDir, flags: TLS_ON, env })
      const regenerated = new crypto.X509Certificate(fs.readFileSync(certFile(), 'utf8'))
      expect(regenerated.fingerprint256).not.toBe(certificate.fingerprint256)
      expect(regenerated.subjectAltName).toBe('DNS:memsvc.example.test, IP Address:10.20.30.40')
      expect(regenerated.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1')
      expect(signatureAlgorithmOid(regenerated.raw)).toBe(ECDSA_WITH_SHA256)
      expect(server.logs.some((line) => line.includes('replacing the self-signed certificate'))).toBe(true)
      // Both listeners serve the new one; a client verifies it under the new name.
      const rest = await peerCertificate(restPort(server), {
        ca: regenerated.toString(),
        servername: 'memsvc.example.test',
      })
      expect(rest).toMatchObject({ fingerprint256: regenerated.fingerprint256, authorized: true })
      const grpcPeer = await peerCertificate(grpcPort(server), {
        ca: regenerated.toString(),
        servername: 'memsvc.example.test',
        alpn: ['h2'],
      })
      expect(grpcPeer).toMatchObject({ fingerprint256: regenerated.fingerprint256, authorized: true })
      const health = new HealthProbe({
        address: server.grpcAddress,
        ca: regenerated.toString(),
        serverName: 'memsvc.example.test',
      })
      try {
        expect(await health.check('')).toBe(ServingStatus.SERVING)
      } finally {
        health.close()
      }

      // Same hostnames again: kept, not regenerated.
      await server.stop()
      server = undefined
      server = await startTestServer({ engine: 'embedded', dataDir, flags: TLS_ON, env })
      expect(server.server.tls?.fingerprint).toBe(regenerated.fingerprint256)
      expect(server.logs.some((line) => line.includes('self-signed certificate'))).toBe(false)
    })
  })
})

describe('TLS with a certificate pair given by flags (embedded, in-process)', () => {
  let dir: string
  let dataDir: string
  let pair: { cert: string; key: string; certFile: string; keyFile: string; fingerprint: string }
  let server: TestServer | undefined

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-tls-pair-'))
    dataDir = path.join(dir, 'data')
    const made = await generate([{ name: 'commonName', value: 'memsvc-flags.test' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'memsvc-flags.test' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    })
    pair = {
      cert: made.cert,
      key: made.private,
      certFile: path.join(dir, 'given.crt'),
      keyFile: path.join(dir, 'given.key'),
      fingerprint: new crypto.X509Certificate(made.cert).fingerprint256,
    }
    fs.writeFileSync(pair.certFile, pair.cert)
    fs.writeFileSync(pair.keyFile, pair.key, { mode: 0o600 })
    server = await startTestServer({
      engine: 'embedded',
      dataDir,
      flags: { ...TLS_ON, 'tls-cert-file': pair.certFile, 'tls-key-file': pair.keyFile },
    })
  })

  afterAll(async () => {
    await server?.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('REST serves the given certificate', async () => {
    const peer = await peerCertificate(restPort(server!), { ca: pair.cert })
    expect(peer).toMatchObject({ fingerprint256: pair.fingerprint, authorized: true })
    const response = await httpRequest(`${server!.restUrl}/livez`, { ca: pair.cert })
    expect(response.status).toBe(200)
  })

  it('gRPC serves the same given certificate, and health answers over it', async () => {
    const peer = await peerCertificate(grpcPort(server!), { ca: pair.cert, alpn: ['h2'] })
    expect(peer).toMatchObject({ fingerprint256: pair.fingerprint, authorized: true, alpn: 'h2' })
    const health = new HealthProbe({ address: server!.grpcAddress, ca: pair.cert })
    try {
      expect(await health.check('')).toBe(ServingStatus.SERVING)
    } finally {
      health.close()
    }
  })

  it('no self-signed certificate is made when a pair is given', () => {
    expect(server!.server.tls).toMatchObject({
      certFile: pair.certFile,
      keyFile: pair.keyFile,
      selfSigned: false,
      fingerprint: pair.fingerprint,
    })
    expect(fs.existsSync(path.join(dataDir, 'tls'))).toBe(false)
  })

  it('a key that does not belong to the certificate stops start-up, naming the flags', async () => {
    const other = await generate([{ name: 'commonName', value: 'other' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
    })
    const wrongKey = path.join(dir, 'wrong.key')
    fs.writeFileSync(wrongKey, other.private, { mode: 0o600 })
    const otherDataDir = path.join(dir, 'data-wrong')
    await expect(
      startTestServer({
        engine: 'embedded',
        dataDir: otherDataDir,
        flags: { ...TLS_ON, 'tls-cert-file': pair.certFile, 'tls-key-file': wrongKey },
      }),
    ).rejects.toThrow(/--tls-key-file does not match the certificate in --tls-cert-file/)
  })
})
