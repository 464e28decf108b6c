import net from 'node:net'
import tls from 'node:tls'

export interface RawExchange {
  /** Everything the server sent, as text. */
  received: string
  /** The status codes of the responses in `received`, in order. */
  statuses: number[]
  /** Whether the server closed the connection (false: still open when the wait ended). */
  closed: boolean
  elapsedMs: number
}

/**
 * Writes `bytes` on a fresh loopback connection and collects what comes back until the server
 * closes, `expectResponses` responses are complete, or `waitMs` passes (the connection is then
 * destroyed). For requests no ordinary client would send: pipelines, bad framing, odd bytes.
 */
/** A loopback connection, over TLS if asked (any certificate accepted); `onConnect` once it is ready for bytes. */
export function connectRaw(port: number, overTls: boolean, onConnect: () => void): net.Socket {
  // servername: a name, since Node warns when SNI would carry an IP address.
  return overTls
    ? tls.connect({ port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false }, onConnect)
    : net.connect(port, '127.0.0.1', onConnect)
}

export interface RawExchangeOptions {
  waitMs?: number
  expectResponses?: number
  /** Over TLS (any certificate accepted). */
  tls?: boolean
  /** Pause between parts, so that the server reads them separately. */
  gapMs?: number
}

export function exchangeRaw(
  port: number,
  bytes: string | Buffer | Buffer[],
  options: RawExchangeOptions = {},
): Promise<RawExchange> {
  const waitMs = options.waitMs ?? 5_000
  const started = Date.now()
  return new Promise((resolve) => {
    // Parts are written one by one, so a large shared body is never copied on the client side.
    const parts = Array.isArray(bytes) ? bytes : [bytes]
    const writeParts = () => {
      if (!options.gapMs) {
        for (const part of parts) socket.write(part)
        return
      }
      socket.setNoDelay(true)
      for (const [index, part] of parts.entries()) {
        setTimeout(() => socket.writable && socket.write(part), index * options.gapMs!)
      }
    }
    const socket = connectRaw(port, options.tls ?? false, writeParts)
    const chunks: Buffer[] = []
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const received = Buffer.concat(chunks).toString('utf8')
      resolve({ received, statuses: statusesIn(received), closed, elapsedMs: Date.now() - started })
    }
    const timer = setTimeout(() => finish(false), waitMs)
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      if (
        options.expectResponses !== undefined &&
        completeResponses(Buffer.concat(chunks).toString('utf8')) >= options.expectResponses
      )
        finish(false)
    })
    socket.on('error', () => {})
    socket.on('close', () => finish(true))
  })
}

/** Status codes of the HTTP/1.1 responses in a received stream. */
export function statusesIn(received: string): number[] {
  return [...received.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]))
}

/** How many responses in `received` have their whole Content-Length body. */
function completeResponses(received: string): number {
  return bodiesIn(received).length
}

/** The bodies of the complete Content-Length responses in a received stream, in order. */
export function bodiesIn(received: string): string[] {
  const bodies: string[] = []
  let rest = Buffer.from(received)
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n')
    if (headEnd === -1) return bodies
    const length = Number(/content-length: *(\d+)/i.exec(rest.subarray(0, headEnd).toString())?.[1] ?? 0)
    const bodyStart = headEnd + 4
    if (rest.length - bodyStart < length) return bodies
    bodies.push(rest.subarray(bodyStart, bodyStart + length).toString())
    rest = rest.subarray(bodyStart + length)
  }
}

/** One request as bytes: `head` lines, then the body with its Content-Length (unless the caller framed it). */
export function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Buffer {
  const bodyBytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body)
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'host: test',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ]
  if (
    bodyBytes !== undefined &&
    !Object.keys(headers).some(
      (name) => name.toLowerCase() === 'content-length' || name.toLowerCase() === 'transfer-encoding',
    )
  ) {
    lines.push(`content-length: ${bodyBytes.length}`)
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), bodyBytes ?? Buffer.alloc(0)])
}
