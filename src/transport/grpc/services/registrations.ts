import type { CredentialsView } from '../../../domain/registry.js'
import type { CreateEmbedderRequest, ListEmbeddersRequest, UpdateEmbedderRequest } from '../../../generated/memsvc/v1/embedders.js'
import type { CreateLlmRequest, ListLlmsRequest, UpdateLlmRequest } from '../../../generated/memsvc/v1/llms.js'
import { type Credentials, Credentials_Kind, Modality } from '../../../generated/memsvc/v1/registry.js'
import type { Modality as DomainModality } from '../../../validation/registry-values.js'
import { defined, enumOrUndefined, listOrUndefined, mapOrUndefined, protoEnum, type ToProto } from '../proto-mapping.js'

// The fields embedders and LLMs share, mapped the same way for both; each kind's service
// file (embedders.ts, llms.ts) adds its own fields, and its ProtoInput type checks that
// together they are every field of the message.

function credentialsFromProto(credentials: Credentials | undefined): Record<string, unknown> | undefined {
  if (!credentials) return undefined
  return defined({
    kind: enumOrUndefined(credentials.kind),
    apiKey: credentials.apiKey && defined({ ...credentials.apiKey }),
    cloudAdc: credentials.cloudAdc && defined({ scopes: listOrUndefined(credentials.cloudAdc.scopes), quotaProjectId: credentials.cloudAdc.quotaProjectId }),
  })
}

export const sharedCreateFromProto = (request: CreateEmbedderRequest | CreateLlmRequest) => ({
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

export const listFromProto = (request: ListEmbeddersRequest | ListLlmsRequest) => ({
  maxResults: request.maxResults,
  nextToken: request.nextToken,
  ownerId: request.ownerId,
  providerType: enumOrUndefined(request.providerType),
  labelFilter: mapOrUndefined(request.labelFilter),
})

/** Wrapper messages mean "given", even when empty (an empty ModalityList is refused by validation, not ignored). */
export const sharedUpdateFromProto = (fields: Omit<UpdateEmbedderRequest, 'embedderId'> | Omit<UpdateLlmRequest, 'llmId'>) => ({
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

export const credentialsToProto = (view: CredentialsView): ToProto<CredentialsView, Credentials> => ({ ...view, kind: protoEnum(Credentials_Kind, view.kind) })

export const modalitiesToProto = (modalities: DomainModality[]): Modality[] => modalities.map((modality) => protoEnum(Modality, modality))
