import type { CallContext } from '../../../domain/call-context.js'
import type { ServerContext } from '../../../domain/context.js'
import { requestProbe } from '../../../domain/probes.js'
import type { RegistryPage, RegistryUseCases } from '../../../domain/registration-use-cases.js'
import type { CredentialsView } from '../../../domain/registry.js'
import type {
  CreateEmbedderRequest,
  ListEmbeddersRequest,
  UpdateEmbedderRequest,
} from '../../../generated/memsvc/v1/embedders.js'
import type { CreateLlmRequest, ListLlmsRequest, UpdateLlmRequest } from '../../../generated/memsvc/v1/llms.js'
import { type Credentials, Credentials_Kind, Modality } from '../../../generated/memsvc/v1/registry.js'
import type {
  CreateRerankerRequest,
  ListRerankersRequest,
  UpdateRerankerRequest,
} from '../../../generated/memsvc/v1/rerankers.js'
import type { Modality as DomainModality } from '../../../validation/registry-values.js'
import { defined, enumOrUndefined, listOrUndefined, mapOrUndefined, protoEnum, type ToProto } from '../proto-mapping.js'

// The fields and methods embedders, LLMs and rerankers share, mapped the same way for
// every kind; each kind's service file (embedders.ts, llms.ts, rerankers.ts) adds its own
// fields, its ProtoInput type checks that together they are every field of the message,
// and it names registryHandlers' six handlers after its service's methods.

function credentialsFromProto(credentials: Credentials | undefined): Record<string, unknown> | undefined {
  if (!credentials) return undefined
  return defined({
    kind: enumOrUndefined(credentials.kind),
    apiKey: credentials.apiKey && defined({ ...credentials.apiKey }),
    cloudAdc:
      credentials.cloudAdc &&
      defined({
        scopes: listOrUndefined(credentials.cloudAdc.scopes),
        quotaProjectId: credentials.cloudAdc.quotaProjectId,
      }),
  })
}

export const sharedCreateFromProto = (request: CreateEmbedderRequest | CreateLlmRequest | CreateRerankerRequest) => ({
  ownerId: request.ownerId,
  displayName: request.displayName,
  description: request.description,
  providerType: enumOrUndefined(request.providerType),
  endpointUrl: request.endpointUrl,
  apiPath: request.apiPath,
  modelIdentifier: request.modelIdentifier,
  supportedModalities: listOrUndefined(request.supportedModalities),
  labels: mapOrUndefined(request.labels),
  version: request.version,
  monitoringEndpoint: request.monitoringEndpoint,
  credentials: credentialsFromProto(request.credentials),
})

export const listFromProto = (request: ListEmbeddersRequest | ListLlmsRequest | ListRerankersRequest) => ({
  maxResults: request.maxResults,
  nextToken: request.nextToken,
  ownerId: request.ownerId,
  providerType: enumOrUndefined(request.providerType),
  labelFilter: mapOrUndefined(request.labelFilter),
})

/** Wrapper messages mean "given", even when empty (an empty ModalityList is refused by validation, not ignored). */
export const sharedUpdateFromProto = (
  fields:
    | Omit<UpdateEmbedderRequest, 'embedderId'>
    | Omit<UpdateLlmRequest, 'llmId'>
    | Omit<UpdateRerankerRequest, 'rerankerId'>,
) => ({
  displayName: fields.displayName,
  description: fields.description,
  providerType: enumOrUndefined(fields.providerType),
  endpointUrl: fields.endpointUrl,
  apiPath: fields.apiPath,
  modelIdentifier: fields.modelIdentifier,
  supportedModalities: fields.supportedModalities?.items,
  version: fields.version,
  monitoringEndpoint: fields.monitoringEndpoint,
  credentials: credentialsFromProto(fields.credentials),
  replaceLabels: fields.replaceLabels?.items,
  mergeLabels: fields.mergeLabels?.items,
})

const credentialsToProto = (view: CredentialsView): ToProto<CredentialsView, Credentials> => ({
  ...view,
  kind: protoEnum(Credentials_Kind, view.kind),
})

/** The fields of a registration whose values differ between domain and proto and convert the same for every kind. */
export const sharedToProto = (item: { supportedModalities: DomainModality[]; credentials: CredentialsView }) => ({
  supportedModalities: item.supportedModalities.map((modality): Modality => protoEnum(Modality, modality)),
  credentials: credentialsToProto(item.credentials),
})

/** How one kind's messages map to and from the domain (each function typed by ProtoInput or ToProto in the kind's file). */
export interface RegistryMessages<Item, ProtoItem, CreateRequest, ListRequest, UpdateRequest> {
  createFromProto(request: CreateRequest): Record<string, unknown>
  listFromProto(request: ListRequest): Record<string, unknown>
  /** The fields only: the id travels beside them, as in the REST path. */
  updateFromProto(request: UpdateRequest): Record<string, unknown>
  toProto(item: Item): ProtoItem
}

/**
 * Create, list, get, update, delete and probe of one registry kind over gRPC, the same
 * for every kind; `idField` names the id in its request messages ("embedderId").
 */
export function registryHandlers<
  Item,
  Collection extends string,
  IdField extends string,
  ProtoItem,
  CreateRequest,
  ListRequest,
  UpdateRequest extends Record<IdField, string>,
>(
  server: ServerContext,
  kind: RegistryUseCases<Item, Collection>,
  idField: IdField,
  messages: RegistryMessages<Item, ProtoItem, CreateRequest, ListRequest, UpdateRequest>,
) {
  // server.domain is read per call: it is not there until the database is ready.
  type IdRequest = Record<IdField, string>
  return {
    create: async (request: CreateRequest, call: CallContext) =>
      messages.toProto(await kind.create(server.domain, call, defined(messages.createFromProto(request)))),
    async list(request: ListRequest, call: CallContext): Promise<RegistryPage<Collection, ProtoItem>> {
      const page = await kind.list(server.domain, call, defined(messages.listFromProto(request)))
      const items: RegistryPage<Collection, Item>[Collection] = page[kind.collection]
      return {
        [kind.collection]: items.map((item) => messages.toProto(item)),
        nextToken: page.nextToken,
      } as RegistryPage<Collection, ProtoItem>
    },
    get: async (request: IdRequest, call: CallContext) =>
      messages.toProto(await kind.get(server.domain, call, request[idField])),
    update: async (request: UpdateRequest, call: CallContext) =>
      messages.toProto(
        await kind.update(server.domain, call, request[idField], defined(messages.updateFromProto(request))),
      ),
    async delete(request: IdRequest, call: CallContext): Promise<Record<string, never>> {
      await kind.delete(server.domain, call, request[idField])
      return {}
    },
    probe: (request: IdRequest, call: CallContext) =>
      requestProbe(server.domain, call, kind.resource, request[idField]),
  }
}
