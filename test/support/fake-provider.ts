import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  path: string
  headers: http.IncomingHttpHeaders
  body: any
}

export const FAKE_DIMENSIONS = 8
export const FAKE_SECRET = 'sk-fake-provider-secret-0123456789'

/**
 * A local stand-in for model providers, on 127.0.0.1 only. Paths:
 *   /openai/v1/embeddings, /openai/v1/chat/completions — OpenAI-style, need Bearer FAKE_SECRET
 *     (a wrong key gets a 401 that echoes it, as some providers do)
 *   /tei/embed — TEI-style nested arrays, no auth
 *   /short/v1/embeddings — returns 4 dimensions
 *   /hang/… — never answers
 *   /echo/<form>/… — a 401 that quotes the bearer key URL-encoded (form "url") or in base64 ("base64"), as text
 */
export async function startFakeProvider(): Promise<{
  url: string
  requests: RecordedRequest[]
  close(): Promise<void>
}> {
  const requests: RecordedRequest[] = []
  const hanging = new Set<http.ServerResponse>()
  const server = http.createServer((request, response) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (text += chunk))
    request.on('end', () => {
      const body = text ? JSON.parse(text) : undefined
      const path = request.url ?? ''
      requests.push({ path, headers: request.headers, body })
      const json = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(value))
      }
      const vector = (length: number) => Array.from({ length }, (_, i) => i / length)
      if (path.startsWith('/hang/')) {
        hanging.add(response)
        return
      }
      if (path.startsWith('/openai/')) {
        const authorization = request.headers.authorization ?? ''
        if (authorization !== `Bearer ${FAKE_SECRET}`)
          return json(401, {
            error: { message: `Incorrect API key provided: ${authorization.replace(/^Bearer /, '')}` },
          })
        if (path.endsWith('/embeddings'))
          return json(200, {
            object: 'list',
            data: [{ object: 'embedding', index: 0, embedding: vector(FAKE_DIMENSIONS) }],
          })
        if (path.endsWith('/chat/completions'))
          return json(200, { choices: [{ index: 0, message: { role: 'assistant', content: 'p' } }] })
      }
      if (path.startsWith('/echo/')) {
        const key = (request.headers.authorization ?? '').replace(/^Bearer /, '')
        const quoted = path.startsWith('/echo/url/')
          ? `key=${encodeURIComponent(key)}`
          : Buffer.from(key).toString('base64')
        response.writeHead(401, { 'content-type': 'text/plain' })
        response.end(`rejected credentials: ${quoted}`)
        return
      }
      if (path === '/tei/embed') return json(200, [vector(FAKE_DIMENSIONS)])
      if (path === '/short/v1/embeddings') return json(200, { data: [{ embedding: vector(4) }] })
      json(404, { error: 'no such path' })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
