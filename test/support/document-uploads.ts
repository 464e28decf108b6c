import * as grpc from '@grpc/grpc-js'
import type { CreateMemoryRequest, MemoryServiceClient } from '../../src/generated/memsvc/v1/memories.js'
import type { ApiResult, Transport } from './api-client.js'
import { chunkingMessage, grpcFailure } from './api-client.js'
import type { Actor } from './identity-fixture.js'
import type { MemoryFixture } from './memory-fixture.js'
import { waitFor } from './wait.js'

/**
 * Every way a document reaches the server, for tests that hold them to the same outcome:
 * REST raw body (fields in the query), REST multipart (a `request` part, then the file),
 * REST JSON with base64, gRPC CreateMemory with bytes, gRPC UploadMemory streamed.
 */
export type UploadWay = 'rest-raw' | 'rest-multipart' | 'rest-base64' | 'grpc-bytes' | 'grpc-stream'
export const UPLOAD_WAYS: UploadWay[] = ['rest-raw', 'rest-multipart', 'rest-base64', 'grpc-bytes', 'grpc-stream']
export const transportOf = (way: UploadWay): Transport => (way.startsWith('rest') ? 'rest' : 'grpc')

export interface UploadFields {
  spaceId: string
  memoryId?: string
  contentType?: string
  fileName?: string
  metadata?: Record<string, unknown>
  chunkingConfig?: Record<string, unknown>
  ocr?: 'AUTO' | 'ON' | 'OFF'
  extractPageImages?: boolean
  pageImageDpi?: number
  ocrLanguages?: string[]
  dedupe?: boolean
}

/** The bytes of a streamed upload go in messages of this size (gRPC) or are sent as they are (REST). */
const STREAM_MESSAGE_BYTES = 256 * 1024

function queryOf(fields: UploadFields): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || name === 'contentType') continue
    // Lists go comma-separated; objects as JSON.
    const text = Array.isArray(value)
      ? value.join(',')
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)
    query.set(name, text)
  }
  return query.toString()
}

async function restAnswer(response: Response): Promise<ApiResult> {
  const text = await response.text()
  const body = text ? JSON.parse(text) : undefined
  return {
    status: response.ok ? 'OK' : (body?.error?.status ?? String(response.status)),
    rawStatus: response.status,
    body,
    headers: response.headers,
    fields: (body?.error?.details ?? []).map((detail: { field: string }) => detail.field),
    message: body?.error?.message ?? '',
  }
}

function grpcHeader(fields: UploadFields): CreateMemoryRequest {
  return {
    spaceId: fields.spaceId,
    memoryId: fields.memoryId,
    contentType: fields.contentType,
    fileName: fields.fileName,
    metadata: fields.metadata,
    chunkingConfig: chunkingMessage(fields.chunkingConfig) as CreateMemoryRequest['chunkingConfig'],
    documentOptions: {
      ocr: fields.ocr,
      extractPageImages: fields.extractPageImages,
      pageImageDpi: fields.pageImageDpi,
      ocrLanguages: fields.ocrLanguages ?? [],
    },
    dedupe: fields.dedupe,
  }
}

function metadataOf(actor: Actor): grpc.Metadata {
  const metadata = new grpc.Metadata()
  metadata.set('authorization', `Bearer ${actor.apiKey}`)
  return metadata
}

const grpcOk = (response: { memory?: unknown; created?: boolean }): ApiResult => ({
  status: 'OK',
  rawStatus: 0,
  body: response.memory,
  fields: [],
  message: '',
})

/** Uploads `bytes` one way; the answer as ApiResult (body: the memory). */
export async function uploadDocument(
  fixture: MemoryFixture,
  actor: Actor,
  way: UploadWay,
  fields: UploadFields,
  bytes: Uint8Array,
): Promise<ApiResult> {
  const restUrl = fixture.server.restUrl
  const authorization = `Bearer ${actor.apiKey}`
  if (way === 'rest-raw') {
    return restAnswer(
      await fetch(`${restUrl}/v1/memories?${queryOf(fields)}`, {
        method: 'POST',
        headers: { authorization, 'content-type': fields.contentType ?? 'application/octet-stream' },
        body: Buffer.from(bytes),
      }),
    )
  }
  if (way === 'rest-multipart') {
    const form = new FormData()
    const { contentType, fileName, ...request } = fields
    form.set('request', JSON.stringify(request))
    form.set(
      'file',
      new Blob([Buffer.from(bytes)], { type: contentType ?? 'application/octet-stream' }),
      fileName ?? 'upload',
    )
    return restAnswer(await fetch(`${restUrl}/v1/memories`, { method: 'POST', headers: { authorization }, body: form }))
  }
  if (way === 'rest-base64') {
    return restAnswer(
      await fetch(`${restUrl}/v1/memories`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({
          ...fields,
          contentType: fields.contentType ?? 'application/octet-stream',
          originalContentB64: Buffer.from(bytes).toString('base64'),
        }),
      }),
    )
  }
  const client = fixture.client.client('memories') as unknown as MemoryServiceClient
  if (way === 'grpc-bytes') {
    return new Promise((resolve) => {
      client.createMemory(
        { ...grpcHeader(fields), originalContentBytes: Buffer.from(bytes) },
        metadataOf(actor),
        (error, response) => resolve(error ? grpcFailure(error) : grpcOk(response)),
      )
    })
  }
  return new Promise((resolve) => {
    const call = client.uploadMemory(metadataOf(actor), (error, response) =>
      resolve(error ? grpcFailure(error) : grpcOk(response)),
    )
    call.write({ part: { $case: 'header', value: grpcHeader(fields) } })
    for (let offset = 0; offset < bytes.length; offset += STREAM_MESSAGE_BYTES)
      call.write({ part: { $case: 'data', value: Buffer.from(bytes.subarray(offset, offset + STREAM_MESSAGE_BYTES)) } })
    call.end()
  })
}

/** Waits for the memory to be COMPLETED or FAILED (extraction, then chunking and embedding). */
export async function settledDocument(fixture: MemoryFixture, memoryId: string, timeoutMs = 60_000) {
  return waitFor(
    `memory ${memoryId} to finish`,
    async () => {
      const answer = await fixture.call('rest', 'getMemory', { memoryId }, fixture.root.apiKey)
      const status = answer.body?.processingStatus
      return status === 'COMPLETED' || status === 'FAILED' ? answer.body : undefined
    },
    { timeoutMs, intervalMs: 100 },
  )
}

/** The original bytes of a memory over REST, with the answer's headers. */
export async function downloadRest(fixture: MemoryFixture, actor: Actor, memoryId: string) {
  const response = await fetch(`${fixture.server.restUrl}/v1/memories/${memoryId}/content`, {
    headers: { authorization: `Bearer ${actor.apiKey}` },
  })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

/** The original bytes of a memory over gRPC (DownloadMemoryContent), with the first message's header fields. */
export async function downloadGrpc(fixture: MemoryFixture, actor: Actor, memoryId: string) {
  const client = fixture.client.client('memories') as unknown as MemoryServiceClient
  return new Promise<{ contentType?: string; fileName?: string; contentBytes?: number; bytes: Buffer }>(
    (resolve, reject) => {
      const pieces: Buffer[] = []
      let first: { contentType?: string; fileName?: string; contentBytes?: number } = {}
      const call = client.downloadMemoryContent({ memoryId }, metadataOf(actor))
      call.on('data', (chunk: { contentType?: string; fileName?: string; contentBytes?: number; data: Buffer }) => {
        if (pieces.length === 0)
          first = { contentType: chunk.contentType, fileName: chunk.fileName, contentBytes: chunk.contentBytes }
        pieces.push(chunk.data)
      })
      call.on('error', reject)
      call.on('end', () => resolve({ ...first, bytes: Buffer.concat(pieces) }))
    },
  )
}

/** A retrieval's chunks (KEYWORD: no embedder needed) over either transport. */
export async function retrieveChunks(
  fixture: MemoryFixture,
  actor: Actor,
  transport: Transport,
  spaceId: string,
  message: string,
): Promise<Array<Record<string, any>>> {
  const answer = await fixture.call(
    transport,
    'retrieveMemories',
    { message, spaceKeys: [{ spaceId }], mode: 'KEYWORD', requestedSize: 5 },
    actor.apiKey,
  )
  if (answer.status !== 'OK') throw new Error(`retrieval failed: ${answer.status} ${answer.message}`)
  return (answer.body.events as Array<Record<string, any>>)
    .filter((event) => event.retrievedItem)
    .map((event) => event.retrievedItem.chunk)
}

/** A rendered page over gRPC (GetPageImage). */
export async function pageImageGrpc(fixture: MemoryFixture, actor: Actor, memoryId: string, pageNumber: number) {
  const client = fixture.client.client('memories') as unknown as MemoryServiceClient
  return new Promise<ApiResult>((resolve) => {
    client.getPageImage({ memoryId, pageNumber }, metadataOf(actor), (error, response) =>
      resolve(error ? grpcFailure(error) : { status: 'OK', rawStatus: 0, body: response, fields: [], message: '' }),
    )
  })
}
