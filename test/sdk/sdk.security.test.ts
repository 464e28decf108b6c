// TLS from the SDK against a server with its self-signed certificate: pinned by SHA-256 as
// `memsvc init` pins it, or the certificate given as a CA. A wrong pin, or no trust at all,
// never reaches the server.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENTRY_POINTS, loadSdk } from '../support/sdk.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const WRONG_PIN = `${'AB:'.repeat(31)}AB`

describe('SDK over TLS with the self-signed certificate', () => {
  let server: TestServer
  let pem: string
  let fingerprint: string
  let address: string

  beforeAll(async () => {
    server = await startTestServer({ engine: 'embedded', flags: { 'tls-disabled': false } })
    pem = fs.readFileSync(path.join(server.dataDir, 'tls', 'server.crt'), 'utf8')
    fingerprint = new crypto.X509Certificate(pem).fingerprint256
    address = `https://${server.grpcAddress}`
  })

  afterAll(async () => {
    await server?.stop()
  })

  it.each(ENTRY_POINTS)('%s: a pinned certificate is trusted, with or without colons, any case', async (entry) => {
    const sdk = await loadSdk(entry)
    for (const pin of [fingerprint, fingerprint.replaceAll(':', '').toLowerCase()]) {
      const client = new sdk.MemsvcClient({ address, tls: { pinnedCertificateSha256: pin } })
      try {
        const info = await client.system.info()
        expect(info.tlsEnabled).toBe(true)
        const init = await client.system.initialize()
        expect(typeof init.alreadyInitialized).toBe('boolean')
      } finally {
        client.close()
      }
    }
  })

  it.each(ENTRY_POINTS)(
    '%s: another pin fails UNAVAILABLE naming both fingerprints, without retrying into success',
    async (entry) => {
      const sdk = await loadSdk(entry)
      const client = new sdk.MemsvcClient({
        address,
        tls: { pinnedCertificateSha256: WRONG_PIN },
        retry: { maxAttempts: 1 },
      })
      try {
        const error = await client.system.info().catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(sdk.MemsvcError)
        expect(error).toMatchObject({ code: 'UNAVAILABLE', grpcStatus: 14 })
        expect((error as Error).message).toContain(fingerprint)
        expect((error as Error).message).toContain(WRONG_PIN)
      } finally {
        client.close()
      }
    },
  )

  it('the system CAs do not trust it; the certificate given as CA does', async () => {
    const sdk = await loadSdk('esm')
    const untrusting = new sdk.MemsvcClient({ address, retry: { maxAttempts: 1 } })
    try {
      await expect(untrusting.system.info()).rejects.toMatchObject({ name: 'MemsvcError', code: 'UNAVAILABLE' })
    } finally {
      untrusting.close()
    }
    const withCa = new sdk.MemsvcClient({ address, tls: { ca: pem } })
    try {
      expect((await withCa.system.info()).tlsEnabled).toBe(true)
    } finally {
      withCa.close()
    }
  })

  it('a malformed pin is INVALID_ARGUMENT; TLS options with a plaintext address are refused', async () => {
    const sdk = await loadSdk('esm')
    const badPin = new sdk.MemsvcClient({ address, tls: { pinnedCertificateSha256: 'not-hex' } })
    await expect(badPin.system.info()).rejects.toMatchObject({ name: 'MemsvcError', code: 'INVALID_ARGUMENT' })
    badPin.close()
    const plaintext = new sdk.MemsvcClient({
      address: `http://${server.grpcAddress}`,
      tls: { pinnedCertificateSha256: fingerprint },
    })
    await expect(plaintext.system.info()).rejects.toMatchObject({ name: 'MemsvcError', code: 'INVALID_ARGUMENT' })
    plaintext.close()
  })
})
