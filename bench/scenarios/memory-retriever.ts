// How the memory benchmark asks memsvc to retrieve: REST `POST /v1/memories:retrieve` on
// the running executable, or, on a branch where that route is not there yet, the domain
// use case itself (src/domain/retrieval.ts retrieveMemories) in a server started in this
// process on the same database. Either way the answer is the chunk ids, best first.
import http from 'node:http'
import { vectorSearchPlan } from '../../src/domain/retrieval.js'

export type RetrievalMode = 'VECTOR' | 'HYBRID' | 'KEYWORD'

export interface Retriever {
  /** What the requests went through, for the report. */
  via: string
  /** The process that answers, when it is not this one: its CPU per request is reported. */
  serverPid?: number
  retrieve(message: string, mode: RetrievalMode, requestedSize: number): Promise<string[]>
  /** The efSearch memsvc's vector search sets for this requested size, for the floor to set too. */
  efSearch(requestedSize: number): number
  /** Candidates memsvc's vector search asks PostgreSQL for. */
  candidates(requestedSize: number): number
  close(): Promise<void>
}

const RETRIEVE_PATH = '/v1/memories:retrieve'

/** The efSearch memsvc's vector search sets (src/domain/retrieval.ts vectorSearchPlan). */
export const defaultEfSearch = (requestedSize: number) => vectorSearchPlan(requestedSize).efSearch

export function chunkIdsOf(events: Iterable<Record<string, unknown>>): string[] {
  const ids: string[] = []
  for (const event of events) {
    const item = event.retrievedItem as { chunk: { chunkId: string } } | undefined
    if (item) ids.push(item.chunk.chunkId)
  }
  return ids
}

export const retrieveBody = (spaceId: string, message: string, mode: RetrievalMode, requestedSize: number) => ({
  message,
  mode,
  requestedSize,
  fetchMemory: false,
  spaceKeys: [{ spaceId }],
})

/** True when the executable serves the REST retrieve route (a 404 for the route itself means it does not). */
export async function hasRestRetrieve(restUrl: string, key: string): Promise<boolean> {
  const response = await fetch(`${restUrl}${RETRIEVE_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  })
  await response.text()
  return response.status !== 404
}

/**
 * One POST on a kept-alive connection through node:http. The load client shares the two
 * cores with memsvc and PostgreSQL while the floor's client is the floor itself, so it is
 * kept light: fetch (undici) cost this process about 500 µs more per request (1,294 against
 * 786 µs for the floor's side in one 100k run), CPU taken from memsvc's side only.
 */
function post(agent: http.Agent, url: URL, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const parts: Buffer[] = []
        response.on('data', (part: Buffer) => parts.push(part))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString() }))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

export function restRetriever(restUrl: string, key: string, spaceId: string, serverPid: number): Retriever {
  const agent = new http.Agent({ keepAlive: true })
  const url = new URL(`${restUrl}${RETRIEVE_PATH}`)
  if (url.protocol !== 'http:')
    throw new Error(`the memory benchmark's retrieval client speaks plain HTTP, not ${url.protocol}`)
  return {
    via: `REST POST ${RETRIEVE_PATH} (NDJSON, node:http keep-alive)`,
    serverPid,
    async retrieve(message, mode, requestedSize) {
      const { status, text } = await post(
        agent,
        url,
        key,
        JSON.stringify(retrieveBody(spaceId, message, mode, requestedSize)),
      )
      if (status !== 200) throw new Error(`retrieve: ${status} ${text.slice(0, 300)}`)
      return chunkIdsOf(
        text
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      )
    },
    efSearch: defaultEfSearch,
    candidates: (requestedSize) => vectorSearchPlan(requestedSize).limit,
    close: async () => agent.destroy(),
  }
}
