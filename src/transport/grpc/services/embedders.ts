import type { ServerContext } from '../../../domain/context.js'
import { createEmbedder, deleteEmbedder, type Embedder as DomainEmbedder, getEmbedder, listEmbedders, updateEmbedder } from '../../../domain/embedders.js'
import { requestProbe } from '../../../domain/probes.js'
import {
  type CreateEmbedderRequest,
  type Embedder,
  Embedder_DistributionType,
  Embedder_ProviderType,
  EmbedderServiceService,
  type ListEmbeddersRequest,
  type UpdateEmbedderRequest,
} from '../../../generated/memsvc/v1/embedders.js'
import type { createEmbedderSchema, listEmbeddersSchema, updateEmbedderSchema } from '../../../validation/registry.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, enumOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
import { credentialsToProto, listFromProto, modalitiesToProto, sharedCreateFromProto, sharedUpdateFromProto } from './registrations.js'

const createFromProto = (request: CreateEmbedderRequest): ProtoInput<CreateEmbedderRequest, typeof createEmbedderSchema> => ({
  embedderId: request.embedderId,
  ...sharedCreateFromProto(request),
  dimensionality: request.dimensionality,
  distributionType: enumOrUndefined(request.distributionType),
  maxSequenceLength: request.maxSequenceLength,
})

const listEmbeddersFromProto = (request: ListEmbeddersRequest): ProtoInput<ListEmbeddersRequest, typeof listEmbeddersSchema> => listFromProto(request)

/** The embedder's id travels beside the fields, as in the REST path. */
const updateFromProto = ({ embedderId: _id, ...fields }: UpdateEmbedderRequest): ProtoInput<typeof fields, typeof updateEmbedderSchema> => ({
  ...sharedUpdateFromProto(fields),
  dimensionality: fields.dimensionality,
  distributionType: enumOrUndefined(fields.distributionType),
  maxSequenceLength: fields.maxSequenceLength,
})

const embedderToProto = (embedder: DomainEmbedder): ToProto<DomainEmbedder, Embedder> => ({
  ...embedder,
  providerType: protoEnum(Embedder_ProviderType, embedder.providerType),
  distributionType: protoEnum(Embedder_DistributionType, embedder.distributionType),
  supportedModalities: modalitiesToProto(embedder.supportedModalities),
  credentials: credentialsToProto(embedder.credentials),
})

export function addEmbedderService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(EmbedderServiceService, {
    createEmbedder: async (request, call) => embedderToProto(await createEmbedder(server.domain, call, defined(createFromProto(request)))),
    async listEmbedders(request, call) {
      const page = await listEmbedders(server.domain, call, defined(listEmbeddersFromProto(request)))
      return { embedders: page.embedders.map(embedderToProto), nextToken: page.nextToken }
    },
    getEmbedder: async (request, call) => embedderToProto(await getEmbedder(server.domain, call, request.embedderId)),
    updateEmbedder: async (request, call) => embedderToProto(await updateEmbedder(server.domain, call, request.embedderId, defined(updateFromProto(request)))),
    async deleteEmbedder(request, call) {
      await deleteEmbedder(server.domain, call, request.embedderId)
      return {}
    },
    probeEmbedder: async (request, call) => requestProbe(server.domain, call, 'EMBEDDER', request.embedderId),
  })
}
