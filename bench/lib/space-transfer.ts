// The lifecycle benchmark's clients: a space's export read over REST (bytes counted, or
// saved to a file), the COPY floor it is divided by, the export file checked line by line,
// and an import posted from that file and followed to its end.
import fs from 'node:fs'
import http from 'node:http'
import readline from 'node:readline'
import type postgres from 'postgres'
import { sleep } from './processes.js'

const MS_PER_SECOND = 1000
/** How often an import that answered before it finished is asked for its progress. */
const IMPORT_POLL_MS = 250
/** An import whose applied lines stay the same this long is stuck: fail the run rather than wait forever. */
const IMPORT_STALL_MS = 120_000
/** How much of an error answer goes into the run's error message. */
const ERROR_TEXT_CHARS = 2_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export interface Transfer {
  bytes: number
  seconds: number
}

/** A GET or POST through node:http (a kept-alive-free, plain client: fetch's stream costs more CPU per piece). */
function request(
  url: string,
  options: http.RequestOptions,
  body?: fs.ReadStream,
): Promise<{ response: http.IncomingMessage; sent: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(url, { ...options, agent: false }, (response) => resolve({ response, sent }))
    outgoing.on('error', reject)
    const sent = new Promise<void>((sentResolve, sentReject) => {
      outgoing.on('finish', () => sentResolve())
      outgoing.on('error', sentReject)
    })
    sent.catch(() => {})
    if (body) {
      body.on('error', (error) => outgoing.destroy(error))
      body.pipe(outgoing)
    } else outgoing.end()
  })
}

async function textOf(response: http.IncomingMessage): Promise<string> {
  response.setEncoding('utf8')
  let text = ''
  for await (const piece of response) text += piece
  return text
}

/**
 * `GET /v1/spaces/{id}:export` read to its end: its bytes and the seconds from the request
 * to the last byte. With `file`, the stream is also written there (with backpressure).
 */
export async function exportSpace(restUrl: string, key: string, spaceId: string, file?: string): Promise<Transfer> {
  const started = performance.now()
  const { response } = await request(`${restUrl}/v1/spaces/${spaceId}:export`, {
    method: 'GET',
    headers: { authorization: `Bearer ${key}` },
  })
  if (response.statusCode !== 200) {
    const text = await textOf(response)
    throw new Error(`GET /v1/spaces/${spaceId}:export: ${response.statusCode} ${text.slice(0, ERROR_TEXT_CHARS)}`)
  }
  let bytes = 0
  const sink = file ? fs.createWriteStream(file) : undefined
  for await (const piece of response as AsyncIterable<Buffer>) {
    bytes += piece.length
    if (sink && !sink.write(piece)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()))
  }
  const seconds = (performance.now() - started) / MS_PER_SECOND
  if (sink)
    await new Promise<void>((resolve, reject) =>
      sink.end((error?: Error | null) => (error ? reject(error) : resolve())),
    )
  return { bytes, seconds }
}

/**
 * The statement the export floor copies out: every row the export reads for one space and
 * one embedder, each memory's columns that its line carries beside its chunk's text,
 * offsets and source, and the vector as pgvector's text. No ORDER BY: the floor is the
 * cheapest way PostgreSQL hands these rows out. COPY takes no parameters, so the ids
 * (checked UUIDs) are written in.
 */
export function exportCopyStatement(spaceId: string, embedderId: string): string {
  if (!UUID.test(spaceId) || !UUID.test(embedderId)) throw new Error('export floor: the ids must be UUIDs')
  return `copy (
    select m.id, m.content_type, m.content, encode(m.content_sha256, 'hex'), m.metadata, m.chunking,
      m.created_at, m.updated_at, m.created_by, m.version, m.valid_until, m.file_name,
      c.chunk_index, c.text, c.start_offset, c.end_offset, c.source, v.embedding
    from memories m
    join chunks c on c.memory_id = m.id
    join chunk_vectors v on v.chunk_id = c.id and v.embedder_id = '${embedderId}'
    where m.space_id = '${spaceId}'
  ) to stdout`
}

/** The floor: `COPY (…) TO STDOUT` of the export's rows through postgres.js, bytes counted. */
export async function copyOut(sql: postgres.Sql, statement: string): Promise<Transfer> {
  const started = performance.now()
  const stream = await sql.unsafe(statement).readable()
  let bytes = 0
  for await (const piece of stream as AsyncIterable<Buffer>) bytes += piece.length
  return { bytes, seconds: (performance.now() - started) / MS_PER_SECOND }
}

/** The header's embedder: its fingerprint and the ref the memory lines name its vectors by. */
export interface ExportedEmbedder {
  ref: number
  embedderId: string
  providerType: string
  modelIdentifier: string
  dimensionality: number
}

export interface ExportContents {
  embedders: ExportedEmbedder[]
  memories: number
  chunks: number
  /** Vectors of the right dimension, over every embedder. */
  vectors: number
  /** Vectors whose length is not their embedder's dimensionality. */
  wrongDimension: number
  /** The trailer's counts (absent: the stream was cut). */
  end?: { memoryCount: number; chunkCount: number }
}

/** Reads an export file line by line (docs/export-format.md) and counts what it holds. */
export async function readExport(file: string): Promise<ExportContents> {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })
  const contents: ExportContents = { embedders: [], memories: 0, chunks: 0, vectors: 0, wrongDimension: 0 }
  const dimensions = new Map<string, number>()
  let lineNumber = 0
  for await (const text of lines) {
    lineNumber++
    if (text === '') continue
    const line = JSON.parse(text) as {
      kind: string
      format?: string
      embedders?: ExportedEmbedder[]
      chunks?: Array<{ vectors?: Record<string, number[]> }>
      memoryCount?: number
      chunkCount?: number
    }
    if (lineNumber === 1) {
      if (line.kind !== 'header' || line.format !== 'memsvc-space-export')
        throw new Error(`export: line 1 is not the header (${text.slice(0, 200)})`)
      contents.embedders = line.embedders ?? []
      for (const embedder of contents.embedders) dimensions.set(String(embedder.ref), embedder.dimensionality)
    } else if (line.kind === 'memory') {
      contents.memories++
      for (const chunk of line.chunks ?? []) {
        contents.chunks++
        for (const [ref, vector] of Object.entries(chunk.vectors ?? {})) {
          if (vector.length === dimensions.get(ref)) contents.vectors++
          else contents.wrongDimension++
        }
      }
    } else if (line.kind === 'end') {
      contents.end = { memoryCount: Number(line.memoryCount), chunkCount: Number(line.chunkCount) }
    } else throw new Error(`export: line ${lineNumber} is of an unknown kind "${line.kind}"`)
  }
  return contents
}

/** An import as `GET /v1/imports/{id}` and the import's own answer show it (docs: SpaceImport). */
export interface SpaceImport {
  importId: string
  spaceId: string
  state: string
  linesApplied: number
  memoriesExpected: number
  memoriesImported: number
  memoriesSkipped: number
  memoriesReembedding: number
  chunksImported: number
  vectorsImported: number
  error?: string
  createdAt: number
  updatedAt: number
}

/** int64 fields may come as JSON strings: every count as a number. */
function spaceImportOf(text: string): SpaceImport {
  const raw = JSON.parse(text) as Record<string, unknown>
  const counts = [
    'linesApplied',
    'memoriesExpected',
    'memoriesImported',
    'memoriesSkipped',
    'memoriesReembedding',
    'chunksImported',
    'vectorsImported',
    'createdAt',
    'updatedAt',
  ] as const
  const parsed = { ...raw } as unknown as SpaceImport
  for (const name of counts) parsed[name] = Number(raw[name] ?? 0)
  return parsed
}

export interface ImportRun {
  result: SpaceImport
  bytes: number
  /** From the request's first byte to the import COMPLETED (the server's own time of that, when it says). */
  seconds: number
  /** From the request's first byte to its answer. */
  answerSeconds: number
}

/**
 * `POST /v1/spaces:import?…` with the export file as the body, then, if it answered before
 * the import ended, its progress asked for until it is COMPLETED or FAILED.
 */
export async function importSpace(
  restUrl: string,
  key: string,
  file: string,
  query: Record<string, string>,
): Promise<ImportRun> {
  const bytes = fs.statSync(file).size
  const startedAt = Date.now()
  const started = performance.now()
  const { response, sent } = await request(
    `${restUrl}/v1/spaces:import?${new URLSearchParams(query)}`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/x-ndjson',
        'content-length': String(bytes),
      },
    },
    fs.createReadStream(file),
  )
  const text = await textOf(response)
  const answerSeconds = (performance.now() - started) / MS_PER_SECOND
  if ((response.statusCode ?? 0) >= 300)
    throw new Error(`POST /v1/spaces:import: ${response.statusCode} ${text.slice(0, ERROR_TEXT_CHARS)}`)
  await sent
  let result = spaceImportOf(text)
  const answeredDone = result.state !== 'RECEIVING'
  let lastProgress = performance.now()
  while (result.state === 'RECEIVING') {
    await sleep(IMPORT_POLL_MS)
    const { response: polled } = await request(`${restUrl}/v1/imports/${result.importId}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${key}` },
    })
    const polledText = await textOf(polled)
    if (polled.statusCode !== 200)
      throw new Error(
        `GET /v1/imports/${result.importId}: ${polled.statusCode} ${polledText.slice(0, ERROR_TEXT_CHARS)}`,
      )
    const next = spaceImportOf(polledText)
    if (next.linesApplied !== result.linesApplied) lastProgress = performance.now()
    else if (performance.now() - lastProgress > IMPORT_STALL_MS)
      throw new Error(`import ${result.importId} applied no line for ${IMPORT_STALL_MS / MS_PER_SECOND} s`)
    result = next
  }
  if (result.state !== 'COMPLETED') throw new Error(`import ${result.importId} ended ${result.state}: ${result.error}`)
  const seenSeconds = (performance.now() - started) / MS_PER_SECOND
  // Finished after its answer: the server's time of its last change is the end, when plausible
  // (same machine, same clock), rather than the poll that saw it.
  const serverSeconds = (result.updatedAt - startedAt) / MS_PER_SECOND
  const seconds = answeredDone
    ? answerSeconds
    : serverSeconds >= answerSeconds && serverSeconds <= seenSeconds
      ? serverSeconds
      : seenSeconds
  return { result, bytes, seconds, answerSeconds }
}
