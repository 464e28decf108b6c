import type { ServerContext } from '../../../domain/context.js'
import { createLlm, deleteLlm, getLlm, type Llm as DomainLlm, listLlms, updateLlm } from '../../../domain/llms.js'
import { requestProbe } from '../../../domain/probes.js'
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
import { credentialsToProto, listFromProto, modalitiesToProto, sharedCreateFromProto, sharedUpdateFromProto } from './registrations.js'

const capabilitiesFromProto = (capabilities: LlmCapabilities | undefined) => capabilities && defined({ ...capabilities })

const samplingFromProto = (sampling: SamplingParams | undefined) => sampling && defined({ ...sampling, stopSequences: listOrUndefined(sampling.stopSequences) })

const createFromProto = (request: CreateLlmRequest): ProtoInput<CreateLlmRequest, typeof createLlmSchema> => ({
  llmId: request.llmId,
  ...sharedCreateFromProto(request),
  clientConfig: request.clientConfig,
  maxContextLength: request.maxContextLength,
  capabilities: capabilitiesFromProto(request.capabilities),
  defaultSamplingParams: samplingFromProto(request.defaultSamplingParams),
})

const listLlmsFromProto = (request: ListLlmsRequest): ProtoInput<ListLlmsRequest, typeof listLlmsSchema> => listFromProto(request)

/** The LLM's id travels beside the fields, as in the REST path. */
const updateFromProto = ({ llmId: _id, ...fields }: UpdateLlmRequest): ProtoInput<typeof fields, typeof updateLlmSchema> => ({
  ...sharedUpdateFromProto(fields),
  clientConfig: fields.clientConfig,
  maxContextLength: fields.maxContextLength,
  capabilities: capabilitiesFromProto(fields.capabilities),
  defaultSamplingParams: samplingFromProto(fields.defaultSamplingParams),
})

const llmToProto = (llm: DomainLlm): ToProto<DomainLlm, Llm> => ({
  ...llm,
  providerType: protoEnum(Llm_ProviderType, llm.providerType),
  supportedModalities: modalitiesToProto(llm.supportedModalities),
  credentials: credentialsToProto(llm.credentials),
})

export function addLlmService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(LlmServiceService, {
    createLlm: async (request, call) => llmToProto(await createLlm(server.domain, call, defined(createFromProto(request)))),
    async listLlms(request, call) {
      const page = await listLlms(server.domain, call, defined(listLlmsFromProto(request)))
      return { llms: page.llms.map(llmToProto), nextToken: page.nextToken }
    },
    getLlm: async (request, call) => llmToProto(await getLlm(server.domain, call, request.llmId)),
    updateLlm: async (request, call) => llmToProto(await updateLlm(server.domain, call, request.llmId, defined(updateFromProto(request)))),
    async deleteLlm(request, call) {
      await deleteLlm(server.domain, call, request.llmId)
      return {}
    },
    probeLlm: async (request, call) => requestProbe(server.domain, call, 'LLM', request.llmId),
  })
}
