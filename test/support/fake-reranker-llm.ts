import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A deterministic local chat-completions and rerank server on 127.0.0.1. POST
 * …/chat/completions (OpenAI shape) answers by quoting the first context passage of the
 * user message, so a test knows what a correct answer is. POST …/rerank answers TEI's
 * {query, texts} with [{index, score}] and the Cohere-style {query, documents, top_n}
 * with {results: [{index, relevance_score}]}; the score is rerankScore below. Faults are scripted like the fake embedder's:
 * `plan` queues a status or a stall for the next requests; `hold` keeps every answer
 * until released, so a test can observe what happened before the answer existed.
 */

export type ProviderFault = { kind: 'status'; status: number; message?: string } | { kind: 'stall' }

export interface FakeProviderRequest {
  path: string
  body: any
  authorization?: string
}

export interface FakeRerankerLlm {
  url: string
  requests: FakeProviderRequest[]
  plan(...faults: ProviderFault[]): void
  hold(): () => void
  /** Requests whose caller closed the connection before an answer was written (a cancelled call). */
  readonly abandoned: number
  close(): Promise<void>
}

/** What the fake answers for a user message: the first numbered passage, quoted. */
export function expectedAnswer(userMessage: string): string {
  const first = /\[1\] ([^\n]*)/.exec(userMessage)?.[1]
  return first ? `According to the context: ${first}` : 'I do not know.'
}

const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])

/** The share of the query's distinct words that the document contains. */
export function rerankScore(query: string, document: string): number {
  const queryWords = wordsOf(query)
  const documentWords = wordsOf(document)
  if (queryWords.size === 0) return 0
  return [...queryWords].filter((word) => documentWords.has(word)).length / queryWords.size
}

function rerankAnswer(body: any): unknown {
  const documents: string[] = body?.texts ?? body?.documents ?? []
  const ranked = documents
    .map((document, index) => ({ index, score: rerankScore(body?.query ?? '', document) }))
    .sort((a, b) => b.score - a.score)
  if (body?.texts) return ranked
  return {
    id: 'fake-rerank',
    results: ranked
      .slice(0, body?.top_n ?? ranked.length)
      .map(({ index, score }) => ({ index, relevance_score: score })),
  }
}

export async function startFakeRerankerLlm(): Promise<FakeRerankerLlm> {
  const faults: ProviderFault[] = []
  const requests: FakeProviderRequest[] = []
  const stalled = new Set<http.ServerResponse>()
  let held: Array<() => void> | undefined
  let abandoned = 0
  const server = http.createServer((request, response) => {
    response.on('close', () => {
      if (!response.writableEnded) abandoned++
    })
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (text += chunk))
    request.on('end', () => {
      const body = text ? JSON.parse(text) : undefined
      requests.push({ path: request.url ?? '', body, authorization: request.headers.authorization })
      const fault = faults.shift()
      if (fault?.kind === 'stall') {
        stalled.add(response)
        return
      }
      const send = () => {
        if (response.destroyed) return
        if (fault?.kind === 'status') {
          response.writeHead(fault.status, { 'content-type': 'application/json' })
          response.end(JSON.stringify({ error: { message: fault.message ?? `scripted ${fault.status}` } }))
          return
        }
        if ((request.url ?? '').endsWith('/rerank')) {
          response.writeHead(200, { 'content-type': 'application/json' })
          response.end(JSON.stringify(rerankAnswer(body)))
          return
        }
        const user =
          [...(body?.messages ?? [])].reverse().find((message: any) => message.role === 'user')?.content ?? ''
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify({
            id: 'fake-chat',
            object: 'chat.completion',
            model: body?.model,
            choices: [
              { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: expectedAnswer(user) } },
            ],
          }),
        )
      }
      if (held) held.push(send)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    plan: (...planned) => void faults.push(...planned),
    get abandoned() {
      return abandoned
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
