/**
 * What both listeners offer: TLS 1.3 (all of its suites are AEAD with forward secrecy)
 * and, for older clients, TLS 1.2 with ECDHE key exchange and an AEAD cipher only. No
 * CBC (SHA-1 MACs, Lucky13), no static RSA key exchange, no CCM, ARIA or Camellia.
 * ECDSA suites serve the self-signed P-256 certificate, RSA ones a given RSA certificate.
 */
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':')

export const TLS13_CIPHERSUITES = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
].join(':')

export const MIN_TLS_VERSION = 'TLSv1.2'

/** Node's form (gRPC): one list, the TLS 1.3 names recognised by their TLS_ prefix. */
export const NODE_TLS_OPTIONS = {
  ciphers: `${TLS13_CIPHERSUITES}:${TLS12_CIPHERS}`,
  minVersion: MIN_TLS_VERSION,
} as const
