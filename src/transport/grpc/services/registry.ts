import type { ServerContext } from '../../../domain/context.js'
import { createEmbedder, deleteEmbedder, getEmbedder, listEmbedders, updateEmbedder } from '../../../domain/embedders.js'
import { createLlm, deleteLlm, getLlm, listLlms, updateLlm } from '../../../domain/llms.js'
import { type Embedder, EmbedderServiceService } from '../../../generated/memsvc/v1/embedders.js'
import { type Llm, type LlmCapabilities, LlmServiceService, type SamplingParams } from '../../../generated/memsvc/v1/llms.js'
import type { Credentials, Modality } from '../../../generated/memsvc/v1/registry.js'
import { requestProbe } from '../../../domain/probes.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, enumOrUndefined, mapOrUndefined } from '../proto-input.js'

// Domain objects use the same string values as the generated string enums (nested
// enums keep the spec's plain names: VENDORA, TEI, DENSE, API_KEY, …).
const asProtoEmbedder = (embedder: unknown) => embedder as Embedder
const asProtoLlm = (llm: unknown) => llm as Llm

/** proto3: an empty repeated field means "not given". */
const listOrUndefined = <T>(items: T[] | undefined): T[] | undefined => (items && items.length > 0 ? items : undefined)

const modalities = (items: Modality[] | undefined) => listOrUndefined(items)

function credentialsInput(credentials: Credentials | undefined): Record<string, unknown> | undefined {
  if (!credentials) return undefined
  return defined({
    kind: enumOrUndefined(credentials.kind),
    apiKey: credentials.apiKey && defined({ ...credentials.apiKey }),
    cloudAdc: credentials.cloudAdc && defined({ scopes: listOrUndefined(credentials.cloudAdc.scopes), quotaProjectId: credentials.cloudAdc.quotaProjectId }),
  })
}

const capabilitiesInput = (capabilities: LlmCapabilities | undefined) => capabilities && defined({ ...capabilities })

const samplingInput = (sampling: SamplingParams | undefined) =>
  sampling && defined({ ...sampling, stopSequences: listOrUndefined(sampling.stopSequences) })

// The request fields both services have, turned into the domain's input the same way for
// both; each service adds the conversions of its own fields (`own`).

interface CreateRequestFields {
  providerType: string
  supportedModalities: Modality[]
  labels: { [key: string]: string }
  credentials?: Credentials | undefined
}

function createInput(request: CreateRequestFields, own: Record<string, unknown> = {}) {
  return defined({
    ...request,
    providerType: enumOrUndefined(request.providerType),
    supportedModalities: modalities(request.supportedModalities),
    labels: mapOrUndefined(request.labels),
    credentials: credentialsInput(request.credentials),
    ...own,
  })
}

interface ListRequestFields {
  maxResults?: number | undefined
  nextToken?: string | undefined
  ownerId?: string | undefined
  providerType: string
  labelFilter: { [key: string]: string }
}

const listInput = (request: ListRequestFields) =>
  defined({
    maxResults: request.maxResults,
    nextToken: request.nextToken,
    ownerId: request.ownerId,
    providerType: enumOrUndefined(request.providerType),
    labelFilter: mapOrUndefined(request.labelFilter),
  })

interface UpdateRequestFields {
  providerType: string
  supportedModalities?: { items: Modality[] } | undefined
  credentials?: Credentials | undefined
  replaceLabels?: { items: { [key: string]: string } } | undefined
  mergeLabels?: { items: { [key: string]: string } } | undefined
}

/** `fields` is the request without its id; wrapper messages mean "given", even when empty. */
function updateInput(fields: UpdateRequestFields, own: Record<string, unknown> = {}) {
  return defined({
    ...fields,
    providerType: enumOrUndefined(fields.providerType),
    supportedModalities: fields.supportedModalities && fields.supportedModalities.items,
    credentials: credentialsInput(fields.credentials),
    replaceLabels: fields.replaceLabels?.items,
    mergeLabels: fields.mergeLabels?.items,
    ...own,
  })
}

export function addRegistryServices(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(EmbedderServiceService, {
    async createEmbedder(request, call) {
      const input = createInput(request, { distributionType: enumOrUndefined(request.distributionType) })
      return asProtoEmbedder(await createEmbedder(server.domain, call, input))
    },
    async listEmbedders(request, call) {
      const page = await listEmbedders(server.domain, call, listInput(request))
      return { embedders: page.embedders.map(asProtoEmbedder), nextToken: page.nextToken }
    },
    getEmbedder: async (request, call) => asProtoEmbedder(await getEmbedder(server.domain, call, request.embedderId)),
    async updateEmbedder(request, call) {
      const { embedderId, ...fields } = request
      const input = updateInput(fields, { distributionType: enumOrUndefined(request.distributionType) })
      return asProtoEmbedder(await updateEmbedder(server.domain, call, embedderId, input))
    },
    async deleteEmbedder(request, call) {
      await deleteEmbedder(server.domain, call, request.embedderId)
      return {}
    },
    probeEmbedder: async (request, call) => requestProbe(server.domain, call, 'EMBEDDER', request.embedderId),
  })

  grpc.addService(LlmServiceService, {
    async createLlm(request, call) {
      const input = createInput(request, {
        capabilities: capabilitiesInput(request.capabilities),
        defaultSamplingParams: samplingInput(request.defaultSamplingParams),
      })
      return asProtoLlm(await createLlm(server.domain, call, input))
    },
    async listLlms(request, call) {
      const page = await listLlms(server.domain, call, listInput(request))
      return { llms: page.llms.map(asProtoLlm), nextToken: page.nextToken }
    },
    getLlm: async (request, call) => asProtoLlm(await getLlm(server.domain, call, request.llmId)),
    async updateLlm(request, call) {
      const { llmId, ...fields } = request
      const input = updateInput(fields, {
        capabilities: capabilitiesInput(request.capabilities),
        defaultSamplingParams: samplingInput(request.defaultSamplingParams),
      })
      return asProtoLlm(await updateLlm(server.domain, call, llmId, input))
    },
    async deleteLlm(request, call) {
      await deleteLlm(server.domain, call, request.llmId)
      return {}
    },
    probeLlm: async (request, call) => requestProbe(server.domain, call, 'LLM', request.llmId),
  })
}
