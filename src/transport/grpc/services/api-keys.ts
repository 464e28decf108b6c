import {
  createApiKey,
  type ApiKey as DomainApiKey,
  deleteApiKey,
  listApiKeys,
  updateApiKey,
} from '../../../domain/api-keys.js'
import type { ServerContext } from '../../../domain/context.js'
import {
  type ApiKey,
  ApiKeyServiceService,
  ApiKeyStatus,
  type CreateApiKeyRequest,
  type ListApiKeysRequest,
  type UpdateApiKeyRequest,
} from '../../../generated/memsvc/v1/apikeys.js'
import type { createApiKeySchema, listApiKeysSchema, updateApiKeySchema } from '../../../validation/identity.js'
import { listApiKeysFromJson } from '../encoded-api-keys.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, enumOrUndefined, mapOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'

const createFromProto = (request: CreateApiKeyRequest): ProtoInput<CreateApiKeyRequest, typeof createApiKeySchema> => ({
  labels: mapOrUndefined(request.labels),
  expiresAt: request.expiresAt,
  ownerId: request.ownerId,
  apiKeyId: request.apiKeyId,
})

const listFromProto = (request: ListApiKeysRequest): ProtoInput<ListApiKeysRequest, typeof listApiKeysSchema> => ({
  maxResults: request.maxResults,
  nextToken: request.nextToken,
  ownerId: request.ownerId,
  status: enumOrUndefined(request.status),
  labelFilter: mapOrUndefined(request.labelFilter),
})

/** The key's id travels beside the fields, as in the REST path. */
const updateFromProto = ({
  apiKeyId: _id,
  ...fields
}: UpdateApiKeyRequest): ProtoInput<typeof fields, typeof updateApiKeySchema> => ({
  status: enumOrUndefined(fields.status),
  replaceLabels: fields.replaceLabels?.items,
  mergeLabels: fields.mergeLabels?.items,
})

export const apiKeyToProto = (key: DomainApiKey): ToProto<DomainApiKey, ApiKey> => ({
  ...key,
  status: protoEnum(ApiKeyStatus, key.status),
})

export function addApiKeyService(grpc: GrpcServer, server: ServerContext): void {
  // ListApiKeys answers with the keys' stored wire JSON, encoded once per key (encoded-api-keys.ts).
  grpc.addService(
    { ...ApiKeyServiceService, listApiKeys: listApiKeysFromJson },
    {
      async createApiKey(request, call) {
        const created = await createApiKey(server.domain, call, defined(createFromProto(request)))
        return { apiKeyMetadata: apiKeyToProto(created.apiKeyMetadata), rawApiKey: created.rawApiKey }
      },
      async listApiKeys(request, call) {
        const page = await listApiKeys(server.domain, call, defined(listFromProto(request)))
        return { keys: page.keysJson, nextToken: page.nextToken }
      },
      async updateApiKey(request, call) {
        return apiKeyToProto(
          await updateApiKey(server.domain, call, request.apiKeyId, defined(updateFromProto(request))),
        )
      },
      async deleteApiKey(request, call) {
        await deleteApiKey(server.domain, call, request.apiKeyId)
        return {}
      },
    },
  )
}
