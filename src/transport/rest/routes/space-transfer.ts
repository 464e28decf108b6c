import { exportErrorLine, exportSpace } from '../../../domain/space-export.js'
import { getSpaceImport, importSpace } from '../../../domain/space-import.js'
import { AppError, invalidArgument } from '../../../errors/app-error.js'
import { exportSpaceSchema, importSpaceSchema } from '../../../validation/space-transfer.js'
import { NDJSON_TYPE } from '../event-stream.js'
import { EXAMPLE_IDS } from '../openapi/examples.js'
import { BY_ID, Component, json, type Operation } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import { callContext, customMethodTarget, listQuery } from '../request-input.js'
import type { RestRequest, RestResponse } from '../rest-messages.js'
import type { RestRoute, RouteDeps } from '../rest-route.js'
import { callWithId } from '../use-case-handlers.js'

// Moving a space between servers (docs/export-format.md): its export streams out as NDJSON, and
// the same stream is read back in as an import's request body, as it arrives.

/** GET /v1/spaces/{id}:export: served by the `GET /v1/spaces/:id` route (routes/spaces.ts), as uWS reads the verb as part of the id. */
export const EXPORT_SPACE_OPERATION: Operation = {
  customMethod: 'export',
  operationId: 'exportSpace',
  tag: 'spaces',
  summary: 'Export a space (streamed NDJSON)',
  description:
    'The space, its embedders (each with its fingerprint: provider type, model, dimensionality), then one line per ' +
    'memory with its chunks and their vectors, then an end line with the counts (docs/export-format.md). ' +
    '`POST /v1/spaces:import` reads it back, here or on another server. Whoever may read every memory of the space ' +
    'may export it. `omitVectors=true` leaves the vectors out (the import then embeds every memory again). ' +
    'Empty lines are heartbeats; a failure after the first line is a last line of kind `error`.',
  query: Component.of('ExportSpaceQuery', exportSpaceSchema),
  answers: {
    200: { description: 'The export, line by line.', content: { [NDJSON_TYPE]: VIEW.SpaceExportLine } },
  },
  errors: [...BY_ID, 'FAILED_PRECONDITION'],
  examples: [{ path: { id: EXAMPLE_IDS.space } }],
  exampleStatus: 200,
}

/** Answers the export of the space named by `{id}:export`. */
export async function exportSpaceAnswer(request: RestRequest, { server }: RouteDeps): Promise<RestResponse> {
  const spaceId = customMethodTarget(request, 'export')
  const call = { ...callContext(request), signal: request.cancellation() }
  const pieces = await exportSpace(server.domain, call, { ...listQuery(request), spaceId })
  return {
    status: 200,
    stream: {
      contentType: `${NDJSON_TYPE}; charset=utf-8`,
      pieces: pieces[Symbol.asyncIterator](),
      // An empty line: an import skips it.
      heartbeat: '\n',
      failurePiece: exportErrorLine,
    },
  }
}

/** What an import's body may be declared as: the export's own type, or a generic one (curl's, a file's). */
const IMPORT_BODY_TYPES = [
  NDJSON_TYPE,
  'application/jsonl',
  'application/json',
  'application/octet-stream',
  'text/plain',
]

function requireImportBody(contentType: string | undefined): void {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase()
  if (mediaType === undefined || mediaType === '' || IMPORT_BODY_TYPES.includes(mediaType)) return
  throw new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    `content-type: expected ${NDJSON_TYPE} (an export as GET /v1/spaces/{id}:export wrote it), got ${JSON.stringify(
      contentType!.slice(0, 100),
    )}`,
    [{ field: 'content-type', description: `must be ${NDJSON_TYPE}` }],
  )
}

/** The import's parameters from the query string: embedderIds repeated or comma-separated, the others once. */
function importQuery(request: RestRequest): Record<string, unknown> {
  const input: Record<string, unknown> = {}
  const embedderIds: string[] = []
  for (const [rawName, value] of request.query) {
    const name = rawName.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())
    if (name === 'embedderIds') {
      embedderIds.push(...value.split(',').filter((id) => id !== ''))
      continue
    }
    if (Object.hasOwn(input, name)) throw invalidArgument(name, 'given more than once')
    input[name] = value
  }
  if (embedderIds.length > 0) input.embedderIds = embedderIds
  return input
}

export const SPACE_TRANSFER_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/v1/spaces:import',
    needsApiKey: true,
    // The export arrives as the body itself, read line by line as it streams in, however large.
    streamBody: () => true,
    openapi: {
      operationId: 'importSpace',
      tag: 'spaces',
      summary: 'Import a space export (streamed NDJSON body)',
      description:
        'The body is an export as `GET /v1/spaces/{id}:export` wrote it (`application/x-ndjson`), read as it ' +
        'arrives; the parameters are in the query: `spaceId` (an existing space) or `newSpaceName` (a new one, ' +
        "with the export's settings and labels, owned by the caller; `embedderIds`, repeated, names its " +
        'embedders, otherwise it gets, for each embedder of the export, one of yours with the same fingerprint). ' +
        'A memory whose content the space already holds is skipped; one keeps its chunks and vectors when every ' +
        'embedder of the space has a match of the same fingerprint in the export, otherwise it is chunked and ' +
        'embedded again. Lines are applied in batches, a memory whole or not at all: a stream that was cut ' +
        '(400 naming the import) is resumed by sending it whole again with `importId`, and the lines already ' +
        'applied are skipped. A refused line is a 4xx naming the line and the field; nothing of its batch is applied.',
      query: Component.of('ImportSpaceQuery', importSpaceSchema),
      answers: { 200: { ...json('The import, COMPLETED.', VIEW.SpaceImport), headers: ['Location'] } },
      errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'PERMISSION_DENIED', 'ALREADY_EXISTS', 'FAILED_PRECONDITION'],
      // The walk-through sends no body: an empty stream, refused for its missing header line.
      examples: [{ query: { spaceId: EXAMPLE_IDS.space } }],
      exampleStatus: 400,
    },
    handle: async (request, { server }) => {
      requireImportBody(request.headers['content-type'])
      const call = { ...callContext(request), signal: request.cancellation() }
      const body = request.bodyStream ?? [request.body]
      const spaceImport = await importSpace(server.domain, call, importQuery(request), body)
      return { status: 200, headers: { location: `/v1/imports/${spaceImport.importId}` }, json: spaceImport }
    },
  },
  {
    method: 'GET',
    pattern: '/v1/imports/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'getSpaceImport',
      tag: 'spaces',
      summary: "Get an import's progress",
      description: 'Only its creator (or an administrator) sees it.',
      answers: { 200: json('The import.', VIEW.SpaceImport) },
      errors: BY_ID,
      // The walk-through's import was refused before it began: there is none to show.
      examples: [{ path: { id: EXAMPLE_IDS.space } }],
      exampleStatus: 404,
    },
    handle: callWithId(getSpaceImport),
  },
]
