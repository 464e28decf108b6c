// How the memory benchmark asks memsvc to retrieve: REST `POST /v1/memories:retrieve` on
// the running executable, or, on a branch where that route is not there yet, the domain
// use case itself (src/domain/retrieval.ts retrieveMemories) in a server started in this
// process on the same database. Either way the answer is the chunk ids, best first.
import { vectorSearchPlan } from '../../src/domain/retrieval.js'

export type RetrievalMode = 'VECTOR' | 'HYBRID' | 'KEYWORD'

export interface Retriever {
  /** What the requests went through, for the report. */
  via: string
  /** The process that answers, when it is not this one: its CPU per request is reported. */
  serverPid?: number
  retrieve(message: string, mode: RetrievalMode, requestedSize: number): Promise<string[]>
  /** The settings statement memsvc's vector search sends, for the floor to send too. */
  sqlSettings(requestedSize: number): string
  /** Candidates memsvc's vector search asks PostgreSQL for. */
  candidates(requestedSize: number): number
  close(): Promise<void>
}

const RETRIEVE_PATH = '/v1/memories:retrieve'

/** The settings statement memsvc sends with its vector search (src/db/sql/retrieval.ts). */
export function vectorSettings(requestedSize: number): string {
  return `select set_config('hnsw.ef_search', '${vectorSearchPlan(requestedSize).efSearch}', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`
}

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

export function restRetriever(restUrl: string, key: string, spaceId: string, serverPid: number): Retriever {
  return {
    via: `REST POST ${RETRIEVE_PATH} (NDJSON)`,
    serverPid,
    async retrieve(message, mode, requestedSize) {
      const response = await fetch(`${restUrl}${RETRIEVE_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(retrieveBody(spaceId, message, mode, requestedSize)),
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`retrieve: ${response.status} ${text.slice(0, 300)}`)
      return chunkIdsOf(
        text
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      )
    },
    sqlSettings: vectorSettings,
    candidates: (requestedSize) => vectorSearchPlan(requestedSize).limit,
    close: async () => {},
  }
}
