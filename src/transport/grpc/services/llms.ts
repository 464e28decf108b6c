import type { ServerContext } from '../../../domain/context.js'
import { type Llm as DomainLlm, llmUseCases } from '../../../domain/llms.js'
import {
  type CreateLlmRequest,
  type ListLlmsRequest,
  type Llm,
  Llm_ProviderType,
  type LlmCapabilities,
  LlmServiceService,
  type SamplingParams,
  type UpdateLlmRequest,
} from '../../../generated/memsvc/v1/llms.js'
import type { createLlmSchema, listLlmsSchema, updateLlmSchema } from '../../../validation/registry.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, listOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'
import * as registrations from './registrations.js'

const capabilitiesFromProto = (capabilities: LlmCapabilities | undefined) =>
  capabilities && defined({ ...capabilities })

const samplingFromProto = (sampling: SamplingParams | undefined) =>
  sampling && defined({ ...sampling, stopSequences: listOrUndefined(sampling.stopSequences) })

const createFromProto = (request: CreateLlmRequest): ProtoInput<CreateLlmRequest, typeof createLlmSchema> => ({
  llmId: request.llmId,
  ...registrations.sharedCreateFromProto(request),
  clientConfig: request.clientConfig,
  maxContextLength: request.maxContextLength,
  capabilities: capabilitiesFromProto(request.capabilities),
  defaultSamplingParams: samplingFromProto(request.defaultSamplingParams),
})

const listLlmsFromProto = (request: ListLlmsRequest): ProtoInput<ListLlmsRequest, typeof listLlmsSchema> =>
  registrations.listFromProto(request)

/** The LLM's id travels beside the fields, as in the REST path. */
const updateFromProto = ({
  llmId: _id,
  ...fields
}: UpdateLlmRequest): ProtoInput<typeof fields, typeof updateLlmSchema> => ({
  ...registrations.sharedUpdateFromProto(fields),
  clientConfig: fields.clientConfig,
  maxContextLength: fields.maxContextLength,
  capabilities: capabilitiesFromProto(fields.capabilities),
  defaultSamplingParams: samplingFromProto(fields.defaultSamplingParams),
})

const llmToProto = (llm: DomainLlm): ToProto<DomainLlm, Llm> => ({
  ...llm,
  ...registrations.sharedToProto(llm),
  providerType: protoEnum(Llm_ProviderType, llm.providerType),
})

export function addLlmService(grpc: GrpcServer, server: ServerContext): void {
  const handlers = registrations.registryHandlers(server, llmUseCases, 'llmId', {
    createFromProto,
    listFromProto: listLlmsFromProto,
    updateFromProto,
    toProto: llmToProto,
  })
  grpc.addService(LlmServiceService, {
    createLlm: handlers.create,
    listLlms: handlers.list,
    getLlm: handlers.get,
    updateLlm: handlers.update,
    deleteLlm: handlers.delete,
    probeLlm: handlers.probe,
  })
}
