import net from 'node:net'
import { badInput } from './exit-codes.js'

export const DEFAULT_SERVER = 'https://localhost:9090'
const DEFAULT_PORT = 9090

/** Where the gRPC server is and whether to speak TLS to it. */
export interface ServerAddress {
  /** Normalised form, e.g. https://localhost:9090; what the config file stores and messages show. */
  url: string
  tls: boolean
  /** Host name or IP, without IPv6 brackets. */
  host: string
  port: number
  /** grpc-js target: host:port, IPv6 in brackets. */
  target: string
}

/**
 * Accepts https://host:port (TLS), http://host:port (plaintext) or a bare host:port,
 * which means TLS because the server's default is TLS. The port defaults to 9090.
 */
export function parseServerAddress(text: string): ServerAddress {
  const trimmed = text.trim()
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(trimmed)
  const scheme = schemeMatch ? schemeMatch[1]!.toLowerCase() : 'https'
  if (scheme !== 'http' && scheme !== 'https') {
    throw badInput(`--server ${text}: use https://host:port (TLS), http://host:port (plaintext) or host:port`)
  }
  let url: URL
  try {
    url = new URL(schemeMatch ? trimmed : `https://${trimmed}`)
  } catch {
    throw badInput(`--server ${text}: not a valid address; use https://host:port, http://host:port or host:port`)
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) {
    throw badInput(`--server ${text}: give only a scheme, host and port (gRPC has no path)`)
  }
  // URL drops the port when it is the scheme's default (80/443); take it from the text then.
  const explicitPort = /:(\d+)\/?$/.exec(trimmed)
  const port = url.port ? Number(url.port) : explicitPort ? Number(explicitPort[1]) : DEFAULT_PORT
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (!host) throw badInput(`--server ${text}: no host`)
  const hostForTarget = net.isIPv6(host) ? `[${host}]` : host
  const tls = scheme === 'https'
  return {
    url: `${tls ? 'https' : 'http'}://${hostForTarget}:${port}`,
    tls,
    host,
    port,
    target: `${hostForTarget}:${port}`,
  }
}
