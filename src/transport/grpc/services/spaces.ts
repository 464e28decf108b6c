import type { ServerContext } from '../../../domain/context.js'
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
  type ListSpacesRequest,
  type RemoveSpaceEmbedderRequest,
  type Space,
  type SpaceEmbedder,
  SpaceEmbedder_IndexState,
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
import type { GrpcServer } from '../grpc-server.js'
import { defined, mapOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
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

export function addSpaceService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(SpaceServiceService, {
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
  })
}
