import type { ServerContext } from '../../../domain/context.js'
import { type Embedder as DomainEmbedder, embedderUseCases } from '../../../domain/embedders.js'
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
import { enumOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
import * as registrations from './registrations.js'

const createFromProto = (
  request: CreateEmbedderRequest,
): ProtoInput<CreateEmbedderRequest, typeof createEmbedderSchema> => ({
  embedderId: request.embedderId,
  ...registrations.sharedCreateFromProto(request),
  dimensionality: request.dimensionality,
  distributionType: enumOrUndefined(request.distributionType),
  maxSequenceLength: request.maxSequenceLength,
})

const listEmbeddersFromProto = (
  request: ListEmbeddersRequest,
): ProtoInput<ListEmbeddersRequest, typeof listEmbeddersSchema> => registrations.listFromProto(request)

/** The embedder's id travels beside the fields, as in the REST path. */
const updateFromProto = ({
  embedderId: _id,
  ...fields
}: UpdateEmbedderRequest): ProtoInput<typeof fields, typeof updateEmbedderSchema> => ({
  ...registrations.sharedUpdateFromProto(fields),
  dimensionality: fields.dimensionality,
  distributionType: enumOrUndefined(fields.distributionType),
  maxSequenceLength: fields.maxSequenceLength,
})

const embedderToProto = (embedder: DomainEmbedder): ToProto<DomainEmbedder, Embedder> => ({
  ...embedder,
  ...registrations.sharedToProto(embedder),
  providerType: protoEnum(Embedder_ProviderType, embedder.providerType),
  distributionType: protoEnum(Embedder_DistributionType, embedder.distributionType),
})

export function addEmbedderService(grpc: GrpcServer, server: ServerContext): void {
  const handlers = registrations.registryHandlers(server, embedderUseCases, 'embedderId', {
    createFromProto,
    listFromProto: listEmbeddersFromProto,
    updateFromProto,
    toProto: embedderToProto,
  })
  grpc.addService(EmbedderServiceService, {
    createEmbedder: handlers.create,
    listEmbedders: handlers.list,
    getEmbedder: handlers.get,
    updateEmbedder: handlers.update,
    deleteEmbedder: handlers.delete,
    probeEmbedder: handlers.probe,
  })
}
