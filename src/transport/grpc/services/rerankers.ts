import type { ServerContext } from '../../../domain/context.js'
import { type Reranker as DomainReranker, rerankerUseCases } from '../../../domain/rerankers.js'
import {
  type CreateRerankerRequest,
  type ListRerankersRequest,
  type Reranker,
  Reranker_ProviderType,
  RerankerServiceService,
  type UpdateRerankerRequest,
} from '../../../generated/memsvc/v1/rerankers.js'
import type { createRerankerSchema, listRerankersSchema, updateRerankerSchema } from '../../../validation/registry.js'
import type { GrpcServer } from '../grpc-server.js'
import { type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
import * as registrations from './registrations.js'

// A reranker has only the fields every registration has.

const createFromProto = (
  request: CreateRerankerRequest,
): ProtoInput<CreateRerankerRequest, typeof createRerankerSchema> => ({
  rerankerId: request.rerankerId,
  ...registrations.sharedCreateFromProto(request),
})

const listRerankersFromProto = (
  request: ListRerankersRequest,
): ProtoInput<ListRerankersRequest, typeof listRerankersSchema> => registrations.listFromProto(request)

const updateFromProto = ({
  rerankerId: _id,
  ...fields
}: UpdateRerankerRequest): ProtoInput<typeof fields, typeof updateRerankerSchema> =>
  registrations.sharedUpdateFromProto(fields)

const rerankerToProto = (reranker: DomainReranker): ToProto<DomainReranker, Reranker> => ({
  ...reranker,
  ...registrations.sharedToProto(reranker),
  providerType: protoEnum(Reranker_ProviderType, reranker.providerType),
})

export function addRerankerService(grpc: GrpcServer, server: ServerContext): void {
  const handlers = registrations.registryHandlers(server, rerankerUseCases, 'rerankerId', {
    createFromProto,
    listFromProto: listRerankersFromProto,
    updateFromProto,
    toProto: rerankerToProto,
  })
  grpc.addService(RerankerServiceService, {
    createReranker: handlers.create,
    listRerankers: handlers.list,
    getReranker: handlers.get,
    updateReranker: handlers.update,
    deleteReranker: handlers.delete,
    probeReranker: handlers.probe,
  })
}
