import * as grpc from '@grpc/grpc-js'
import type { SpaceImport, SpaceServiceClient } from '../../src/generated/memsvc/v1/spaces.js'
import type { ApiResult, Transport } from './api-client.js'
import { grpcFailure } from './api-client.js'
import type { Actor, IdentityFixture } from './identity-fixture.js'

/**
 * A space's export and import over either transport, as the CLI and other clients send them:
 * REST `GET /v1/spaces/{id}:export` (NDJSON answer) and `POST /v1/spaces:import` (the stream
 * as the body, parameters in the query); gRPC ExportSpace (server stream of bytes) and
 * ImportSpace (a header message, then the bytes in data messages).
 */

export interface ImportParameters {
  spaceId?: string
  newSpaceName?: string
  embedderIds?: string[]
  importId?: string
}

export interface ExportResult {
  /** 'OK', or the error's status name. */
  status: string
  message: string
  text: string
  lines: Array<Record<string, any>>
}

/** gRPC import data messages at most this large (a client chooses; the server takes up to 4 MiB). */
const IMPORT_MESSAGE_BYTES = 256 * 1024

const metadataOf = (actor: Actor) => {
  const metadata = new grpc.Metadata()
  metadata.set('authorization', `Bearer ${actor.apiKey}`)
  return metadata
}

const spaceClient = (fixture: IdentityFixture) => fixture.client.client('spaces') as unknown as SpaceServiceClient

export const linesOf = (text: string): Array<Record<string, any>> =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))

/** The whole export as text (with its lines parsed), or the error that refused it. */
export async function exportSpaceText(
  fixture: IdentityFixture,
  actor: Actor,
  transport: Transport,
  spaceId: string,
  options: { omitVectors?: boolean } = {},
): Promise<ExportResult> {
  if (transport === 'rest') {
    const query = options.omitVectors === undefined ? '' : `?omitVectors=${options.omitVectors}`
    const response = await fetch(`${fixture.server.restUrl}/v1/spaces/${spaceId}:export${query}`, {
      headers: { authorization: `Bearer ${actor.apiKey}` },
    })
    const text = await response.text()
    if (!response.ok) {
      const body = JSON.parse(text)
      return { status: body.error.status, message: body.error.message, text: '', lines: [] }
    }
    return { status: 'OK', message: '', text, lines: linesOf(text) }
  }
  return new Promise((resolve) => {
    const pieces: Buffer[] = []
    const call = spaceClient(fixture).exportSpace({ spaceId, omitVectors: options.omitVectors }, metadataOf(actor))
    call.on('data', (chunk: { data: Buffer }) => pieces.push(chunk.data))
    call.on('error', (error: grpc.ServiceError) => {
      const failure = grpcFailure(error)
      resolve({ status: failure.status, message: failure.message, text: '', lines: [] })
    })
    call.on('end', () => {
      const text = Buffer.concat(pieces).toString('utf8')
      resolve({ status: 'OK', message: '', text, lines: linesOf(text) })
    })
  })
}

function importQuery(parameters: ImportParameters): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(parameters)) {
    if (value === undefined) continue
    for (const item of [value].flat()) query.append(name, String(item))
  }
  return query.toString()
}

const toBytes = (body: string | Uint8Array) =>
  typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body)

/** Imports `body` (the export's text or bytes); the answer's body is the SpaceImport. */
export async function importSpaceStream(
  fixture: IdentityFixture,
  actor: Actor,
  transport: Transport,
  parameters: ImportParameters,
  body: string | Uint8Array,
  options: { contentType?: string } = {},
): Promise<ApiResult> {
  const bytes = toBytes(body)
  if (transport === 'rest') {
    const response = await fetch(`${fixture.server.restUrl}/v1/spaces:import?${importQuery(parameters)}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${actor.apiKey}`,
        'content-type': options.contentType ?? 'application/x-ndjson',
      },
      body: bytes,
    })
    const text = await response.text()
    const parsed = text ? JSON.parse(text) : undefined
    return {
      status: response.ok ? 'OK' : (parsed?.error?.status ?? String(response.status)),
      rawStatus: response.status,
      body: parsed,
      headers: response.headers,
      fields: (parsed?.error?.details ?? []).map((detail: { field: string }) => detail.field),
      message: parsed?.error?.message ?? '',
    }
  }
  return new Promise((resolve) => {
    const call = spaceClient(fixture).importSpace(metadataOf(actor), (error, response?: SpaceImport) =>
      resolve(error ? grpcFailure(error) : { status: 'OK', rawStatus: 0, body: response, fields: [], message: '' }),
    )
    call.write({
      part: {
        $case: 'header',
        value: { ...parameters, embedderIds: parameters.embedderIds ?? [] },
      },
    })
    for (let offset = 0; offset < bytes.length; offset += IMPORT_MESSAGE_BYTES)
      call.write({ part: { $case: 'data', value: bytes.subarray(offset, offset + IMPORT_MESSAGE_BYTES) } })
    call.end()
  })
}

/** GET /v1/imports/{id} or GetSpaceImport. */
export async function getImport(
  fixture: IdentityFixture,
  actor: Actor,
  transport: Transport,
  importId: string,
): Promise<ApiResult> {
  if (transport === 'rest') {
    const response = await fetch(`${fixture.server.restUrl}/v1/imports/${importId}`, {
      headers: { authorization: `Bearer ${actor.apiKey}` },
    })
    const parsed = await response.json()
    return {
      status: response.ok ? 'OK' : parsed.error.status,
      rawStatus: response.status,
      body: parsed,
      fields: (parsed?.error?.details ?? []).map((detail: { field: string }) => detail.field),
      message: parsed?.error?.message ?? '',
    }
  }
  return new Promise((resolve) => {
    spaceClient(fixture).getSpaceImport({ importId }, metadataOf(actor), (error, response) =>
      resolve(error ? grpcFailure(error) : { status: 'OK', rawStatus: 0, body: response, fields: [], message: '' }),
    )
  })
}

/** The lines of an export as NDJSON text again. */
export const textOf = (lines: Array<Record<string, unknown>>) =>
  lines.map((line) => `${JSON.stringify(line)}\n`).join('')
