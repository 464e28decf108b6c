import type { CallContext } from '../../../domain/call-context.js'
import type { ServerContext } from '../../../domain/context.js'
import { exportErrorLine, exportSpace } from '../../../domain/space-export.js'
import { type SpaceImport as DomainSpaceImport, getSpaceImport, importSpace } from '../../../domain/space-import.js'
import {
  addSpaceEmbedder,
  createSpace,
  type Space as DomainSpace,
  type SpaceEmbedder as DomainSpaceEmbedder,
  deleteSpace,
  getSpace,
  listSpaces,
  removeSpaceEmbedder,
  updateSpace,
} from '../../../domain/spaces.js'
import {
  type AddSpaceEmbedderRequest,
  type CreateSpaceRequest,
  type ExportSpaceChunk,
  type ExportSpaceRequest,
  type ImportSpaceHeader,
  type ImportSpaceRequest,
  type ListSpacesRequest,
  type RemoveSpaceEmbedderRequest,
  type Space,
  type SpaceEmbedder,
  SpaceEmbedder_IndexState,
  type SpaceImport,
  SpaceServiceService,
  type UpdateSpaceRequest,
} from '../../../generated/memsvc/v1/spaces.js'
import type {
  addEmbedderSchema,
  createSpaceSchema,
  listSpacesSchema,
  removeEmbedderSchema,
  updateSpaceSchema,
} from '../../../validation/memory.js'
import type { exportSpaceSchema, importSpaceSchema } from '../../../validation/space-transfer.js'
import type { GrpcServer } from '../grpc-server.js'
import { headerThenData } from '../header-then-data.js'
import { defined, listOrUndefined, mapOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
import { chunkingFromProto, chunkingToProto } from './chunking.js'

const createFromProto = (request: CreateSpaceRequest): ProtoInput<CreateSpaceRequest, typeof createSpaceSchema> => ({
  spaceId: request.spaceId,
  ownerId: request.ownerId,
  name: request.name,
  labels: mapOrUndefined(request.labels),
  // An empty list is a space with no embedders named (proto3 cannot tell it from an absent list).
  spaceEmbedders: request.spaceEmbedders.map((entry) => defined({ ...entry })),
  defaultChunkingConfig: chunkingFromProto(request.defaultChunkingConfig),
  publicRead: request.publicRead,
  textSearchLanguage: request.textSearchLanguage,
  defaultOcr: request.defaultOcr,
})

const listFromProto = (request: ListSpacesRequest): ProtoInput<ListSpacesRequest, typeof listSpacesSchema> => ({
  maxResults: request.maxResults,
  nextToken: request.nextToken,
  ownerId: request.ownerId,
  labelFilter: mapOrUndefined(request.labelFilter),
})

/** The space's id travels beside the fields, as in the REST path. */
const updateFromProto = ({
  spaceId: _id,
  ...fields
}: UpdateSpaceRequest): ProtoInput<typeof fields, typeof updateSpaceSchema> => ({
  name: fields.name,
  publicRead: fields.publicRead,
  // Passed on to be refused by name, as over REST: the language is fixed at creation.
  textSearchLanguage: fields.textSearchLanguage as never,
  defaultOcr: fields.defaultOcr,
  replaceLabels: fields.replaceLabels?.items,
  mergeLabels: fields.mergeLabels?.items,
})

const addEmbedderFromProto = ({
  spaceId: _id,
  ...fields
}: AddSpaceEmbedderRequest): ProtoInput<typeof fields, typeof addEmbedderSchema> => ({
  embedderId: fields.embedderId,
  defaultRetrievalWeight: fields.defaultRetrievalWeight,
})

const removeEmbedderFromProto = ({
  spaceId: _id,
  ...fields
}: RemoveSpaceEmbedderRequest): ProtoInput<typeof fields, typeof removeEmbedderSchema> => ({
  embedderId: fields.embedderId,
})

const spaceEmbedderToProto = (entry: DomainSpaceEmbedder): ToProto<DomainSpaceEmbedder, SpaceEmbedder> => ({
  ...entry,
  indexState: protoEnum(SpaceEmbedder_IndexState, entry.indexState),
})

export const spaceToProto = (space: DomainSpace): ToProto<DomainSpace, Space> => ({
  ...space,
  spaceEmbedders: space.spaceEmbedders.map(spaceEmbedderToProto),
  defaultChunkingConfig: chunkingToProto(space.defaultChunkingConfig),
})

const exportFromProto = (request: ExportSpaceRequest): ProtoInput<ExportSpaceRequest, typeof exportSpaceSchema> => ({
  spaceId: request.spaceId,
  omitVectors: request.omitVectors,
})

const importFromProto = (header: ImportSpaceHeader): ProtoInput<ImportSpaceHeader, typeof importSpaceSchema> => ({
  spaceId: header.spaceId,
  newSpaceName: header.newSpaceName,
  embedderIds: listOrUndefined(header.embedderIds),
  importId: header.importId,
})

const spaceImportToProto = (spaceImport: DomainSpaceImport): ToProto<DomainSpaceImport, SpaceImport> => spaceImport

/** An ImportSpace data message, at most: the stream's bytes in pieces of up to 4 MiB. */
const IMPORT_MESSAGE_BYTES = 4 * 1024 * 1024 + 1024
/** ExportSpace's pieces, each within every client's default 4 MiB receive limit. */
const EXPORT_MESSAGE_BYTES = 1024 * 1024

/** The export's text as ExportSpaceChunk messages: the same bytes as the REST answer, in pieces. */
async function* exportChunks(pieces: AsyncIterable<string>): AsyncGenerator<ExportSpaceChunk> {
  for await (const piece of pieces) {
    const bytes = Buffer.from(piece, 'utf8')
    for (let offset = 0; offset < bytes.length; offset += EXPORT_MESSAGE_BYTES)
      yield { data: bytes.subarray(offset, offset + EXPORT_MESSAGE_BYTES) }
  }
}

async function receiveImport(server: ServerContext, messages: AsyncIterable<ImportSpaceRequest>, call: CallContext) {
  const { header, data } = await headerThenData(messages, {
    header: 'the first message of an import is its header (an ImportSpaceHeader)',
    data: "after the header, every message of an import is data (the stream's bytes)",
  })
  return spaceImportToProto(await importSpace(server.domain, call, defined(importFromProto(header)), data))
}

export function addSpaceService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(
    SpaceServiceService,
    {
      createSpace: async (request, call) =>
        spaceToProto(await createSpace(server.domain, call, defined(createFromProto(request)))),
      async listSpaces(request, call) {
        const page = await listSpaces(server.domain, call, defined(listFromProto(request)))
        return { spaces: page.spaces.map(spaceToProto), nextToken: page.nextToken }
      },
      getSpace: async (request, call) => spaceToProto(await getSpace(server.domain, call, request.spaceId)),
      updateSpace: async (request, call) =>
        spaceToProto(await updateSpace(server.domain, call, request.spaceId, defined(updateFromProto(request)))),
      async deleteSpace(request, call) {
        await deleteSpace(server.domain, call, request.spaceId)
        return {}
      },
      addSpaceEmbedder: async (request, call) =>
        spaceToProto(
          await addSpaceEmbedder(server.domain, call, request.spaceId, defined(addEmbedderFromProto(request))),
        ),
      removeSpaceEmbedder: async (request, call) =>
        spaceToProto(
          await removeSpaceEmbedder(server.domain, call, request.spaceId, defined(removeEmbedderFromProto(request))),
        ),
      exportSpace: {
        open: async (request, call) =>
          exportChunks(await exportSpace(server.domain, call, defined(exportFromProto(request)))),
        // The same last line as over REST: an import refuses a stream that holds it.
        failureMessage: (error) => ({ data: Buffer.from(exportErrorLine(error), 'utf8') }),
      },
      importSpace: { receive: (messages, call) => receiveImport(server, messages, call) },
      getSpaceImport: async (request, call) =>
        spaceImportToProto(await getSpaceImport(server.domain, call, request.importId)),
    },
    { maxRequestBytes: { importSpace: IMPORT_MESSAGE_BYTES } },
  )
}
