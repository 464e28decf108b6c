import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import tls from 'node:tls'

export interface HttpResult {
  status: number
  /** Lower-case names. */
  headers: http.IncomingHttpHeaders
  body: string
  /** The body parsed as JSON (throws if it is not JSON). */
  json<T = any>(): T
}

export interface HttpRequestOptions {
  method?: string
  headers?: Record<string, string>
  body?: string | Buffer
  /** PEM of the CA (or self-signed certificate) to trust for https URLs. */
  ca?: string | Buffer
  /** For https URLs whose certificate the test does not care about. */
  insecure?: boolean
  timeoutMs?: number
}

/**
 * One request on a fresh connection (no keep-alive agent, so nothing lingers after a
 * server stops). Works for http and https, with a pinned CA for self-signed servers.
 */
export function httpRequest(url: string, options: HttpRequestOptions = {}): Promise<HttpResult> {
  const target = new URL(url)
  const isHttps = target.protocol === 'https:'
  const body =
    options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body)
  const headers: Record<string, string> = { ...options.headers }
  if (body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(body.length)
  const requestOptions: https.RequestOptions = {
    method: options.method ?? 'GET',
    hostname: target.hostname.replace(/^\[|\]$/g, ''),
    port: target.port,
    path: `${target.pathname}${target.search}`,
    headers,
    agent: false,
    timeout: options.timeoutMs ?? 10_000,
    ...(isHttps ? { ca: options.ca, rejectUnauthorized: !options.insecure } : {}),
  }
  return new Promise((resolve, reject) => {
    const request = (isHttps ? https : http).request(requestOptions, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: text,
          json: () => JSON.parse(text),
        })
      })
    })
    request.on('timeout', () => request.destroy(new Error(`request to ${url} timed out`)))
    request.on('error', reject)
    request.end(body)
  })
}

export interface RawHttpResponse {
  status: number
  headers: Record<string, string>
  body: string
}

function parseRawResponse(raw: string): RawHttpResponse {
  const split = raw.indexOf('\r\n\r\n')
  const head = split === -1 ? raw : raw.slice(0, split)
  const body = split === -1 ? '' : raw.slice(split + 4)
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const status = Number(statusLine.split(' ')[1])
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status, headers, body }
}

/**
 * Sends only a request head (no body bytes) and reads the response. Used to check
 * that the server rejects a declared body size from the headers alone, without the
 * client having to upload it (and without a reset racing the response).
 */
export function sendRequestHead(
  baseUrl: string,
  head: { method: string; path: string; headers: Record<string, string> },
  options: { ca?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawHttpResponse> {
  const target = new URL(baseUrl)
  const lines = [
    `${head.method} ${head.path} HTTP/1.1`,
    `host: ${target.host}`,
    ...Object.entries(head.headers).map(([name, value]) => `${name}: ${value}`),
  ]
  return sendRawRequest(baseUrl, Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), options)
}

/**
 * Writes `bytes` as they are on a fresh connection and reads one response (complete
 * once its Content-Length has arrived, or when the server closes). The connection is
 * left open after writing, so the server never sees a half-sent request end early.
 */
export function sendRawRequest(
  baseUrl: string,
  bytes: Buffer,
  options: { ca?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawHttpResponse> {
  const target = new URL(baseUrl)
  const port = Number(target.port)
  const host = target.hostname.replace(/^\[|\]$/g, '')
  const timeoutMs = options.timeoutMs ?? 10_000
  return new Promise((resolve, reject) => {
    const isTls = target.protocol === 'https:'
    const socket: net.Socket = isTls
      ? tls.connect({ host, port, ca: options.ca, rejectUnauthorized: options.ca !== undefined })
      : net.connect(port, host)
    const chunks: Buffer[] = []
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(parseRawResponse(Buffer.concat(chunks).toString('utf8')))
    }
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      socket.destroy()
      reject(new Error(`no complete response within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.on(isTls ? 'secureConnect' : 'connect', () => socket.write(bytes))
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      const sofar = Buffer.concat(chunks).toString('utf8')
      if (!sofar.includes('\r\n\r\n')) return
      const parsed = parseRawResponse(sofar)
      const length = Number(parsed.headers['content-length'])
      if (Number.isInteger(length) && Buffer.byteLength(parsed.body) >= length) finish()
    })
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', (error) => {
      if (chunks.length > 0) finish()
      else if (!settled) {
        settled = true
        clearTimeout(timer)
        reject(error)
      }
    })
  })
}

/** A JSON API answer read whole: its status, text, the text parsed (undefined when it is not JSON) and headers. */
export interface JsonAnswer {
  status: number
  text: string
  json: any
  headers: Headers
}

/** One call with an API key and a JSON body (sent as given when it is a string), through fetch. */
export async function callJson(method: string, url: string, apiKey: string, body?: unknown): Promise<JsonAnswer> {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: response.status, text, json, headers: response.headers }
}
