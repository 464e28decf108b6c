import crypto from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A deterministic local embedding server, on 127.0.0.1 only, speaking the protocols the
 * embedding client uses: OpenAI-style POST …/embeddings ({model, input[]} →
 * {data[{index, embedding}]}), TEI POST …/embed ({inputs} → [[…]]) and VENDORD
 * POST …/v2/embed ({texts} → {embeddings: {float}}). Vectors are hashed bags of words:
 * the same text always gives the same unit vector, and texts sharing words are close.
 *
 * Faults are scripted: `plan(...)` queues what the next requests get (a status with an
 * optional Retry-After, a stall that never answers, wrong dimensions); unplanned requests
 * are answered normally. `refuseInputsContaining(text)` answers 400 to every request with
 * an input containing that text, as a provider refuses an input it cannot take. A path
 * prefix /dims/<n>/ answers with n dimensions; /scale/<k>/ multiplies every vector by k, as
 * a provider that does not normalise its embeddings.
 */

export type Fault =
  | { kind: 'status'; status: number; retryAfterSeconds?: number; message?: string }
  | { kind: 'stall' }
  | { kind: 'dimensions'; dimensions: number }

export interface FakeEmbedderRequest {
  path: string
  inputs: string[]
  authorization?: string
  answered: 'ok' | 'fault'
}

export interface FakeEmbedder {
  url: string
  dimensions: number
  requests: FakeEmbedderRequest[]
  plan(...faults: Fault[]): void
  /** From now on, 400 for any request with an input containing `text` (undefined: none). */
  refuseInputsContaining(text: string | undefined): void
  /** Holds every answer until the returned function is called. */
  hold(): () => void
  close(): Promise<void>
}

export function hashedBagOfWords(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0)
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const digest = crypto.createHash('sha256').update(word).digest()
    vector[digest.readUInt32BE(0) % dimensions]! += digest[4]! & 1 ? 1 : -1
  }
  const norm = Math.hypot(...vector) || 1
  return vector.map((value) => value / norm)
}

function inputsOf(path: string, body: any): string[] {
  if (path.endsWith('/v2/embed')) return body?.texts ?? []
  if (path.endsWith('/embed')) return typeof body?.inputs === 'string' ? [body.inputs] : (body?.inputs ?? [])
  return typeof body?.input === 'string' ? [body.input] : (body?.input ?? [])
}

function answerBody(path: string, vectors: number[][]): unknown {
  if (path.endsWith('/v2/embed')) return { id: 'fake', embeddings: { float: vectors } }
  if (path.endsWith('/embed')) return vectors
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: 'fake',
  }
}

export async function startFakeEmbedder(
  options: { dimensions?: number; requiredSecret?: string } = {},
): Promise<FakeEmbedder> {
  const dimensions = options.dimensions ?? 16
  const faults: Fault[] = []
  const requests: FakeEmbedderRequest[] = []
  const stalled = new Set<http.ServerResponse>()
  let held: Array<() => void> | undefined
  let refused: string | undefined
  const server = http.createServer((request, response) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (text += chunk))
    request.on('end', () => {
      const path = request.url ?? ''
      const body = text ? JSON.parse(text) : undefined
      const inputs = inputsOf(path, body)
      const refusal = refused !== undefined && inputs.some((input) => input.includes(refused!))
      const fault: Fault | undefined = refusal
        ? { kind: 'status', status: 400, message: `input refused: it contains ${refused}` }
        : faults.shift()
      requests.push({ path, inputs, authorization: request.headers.authorization, answered: fault ? 'fault' : 'ok' })
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        const send = () => {
          if (response.destroyed) return
          response.writeHead(status, { 'content-type': 'application/json', ...headers })
          response.end(JSON.stringify(value))
        }
        if (held) held.push(send)
        else send()
      }
      if (options.requiredSecret && request.headers.authorization !== `Bearer ${options.requiredSecret}`) {
        return json(401, {
          error: {
            message: `Incorrect API key provided: ${(request.headers.authorization ?? '').replace(/^Bearer /, '')}`,
          },
        })
      }
      if (fault?.kind === 'stall') {
        stalled.add(response)
        return
      }
      if (fault?.kind === 'status') {
        const headers: Record<string, string> =
          fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) }
        return json(fault.status, { error: { message: fault.message ?? `scripted ${fault.status}` } }, headers)
      }
      const sized = /^\/dims\/(\d+)\//.exec(path)
      const width = fault?.kind === 'dimensions' ? fault.dimensions : sized ? Number(sized[1]) : dimensions
      const scale = Number(/^\/scale\/([\d.e+]+)\//.exec(path)?.[1] ?? 1)
      json(
        200,
        answerBody(
          path,
          inputs.map((input) => hashedBagOfWords(input, width).map((value) => value * scale)),
        ),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    dimensions,
    requests,
    plan: (...planned) => void faults.push(...planned),
    refuseInputsContaining: (text) => {
      refused = text
    },
    hold() {
      const queue: Array<() => void> = []
      held = queue
      return () => {
        held = undefined
        for (const send of queue) send()
      }
    },
    async close() {
      for (const response of stalled) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
