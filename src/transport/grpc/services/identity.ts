import { createApiKey, deleteApiKey, listApiKeys, updateApiKey } from '../../../domain/api-keys.js'
import type { ServerContext } from '../../../domain/context.js'
import { getSystemInfo, initializeSystem } from '../../../domain/system.js'
import { createUser, deleteUser, getMe, getUser, listUsers } from '../../../domain/users.js'
import { type ApiKey, ApiKeyServiceService } from '../../../generated/memsvc/v1/apikeys.js'
import { LifecycleState, SystemServiceService } from '../../../generated/memsvc/v1/system.js'
import { type User, UserServiceService } from '../../../generated/memsvc/v1/users.js'
import { listApiKeysFromJson } from '../encoded-api-keys.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, enumOrUndefined, mapOrUndefined } from '../proto-input.js'

// Domain objects use the same string values as the generated string enums.
const asProtoKey = (key: unknown) => key as ApiKey
const asProtoUser = (user: unknown) => user as User

export function addIdentityServices(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(SystemServiceService, {
    async getSystemInfo() {
      const info = await getSystemInfo(server)
      return { ...info, lifecycleState: LifecycleState[info.lifecycleState] }
    },
    initializeSystem: async () => initializeSystem(server.domain),
  })

  grpc.addService(UserServiceService, {
    async createUser(request, call) {
      const input = defined({ userId: request.userId, username: request.username, displayName: request.displayName, role: enumOrUndefined(request.role) })
      return asProtoUser(await createUser(server.domain, call, input))
    },
    async listUsers(request, call) {
      const page = await listUsers(server.domain, call, defined({ maxResults: request.maxResults, nextToken: request.nextToken }))
      return { users: page.users.map(asProtoUser), nextToken: page.nextToken }
    },
    getUser: async (request, call) => asProtoUser(await getUser(server.domain, call, request.userId)),
    async deleteUser(request, call) {
      await deleteUser(server.domain, call, request.userId)
      return {}
    },
    getMe: async (_request, call) => asProtoUser(await getMe(server.domain, call)),
  })

  grpc.addService({ ...ApiKeyServiceService, listApiKeys: listApiKeysFromJson }, {
    async createApiKey(request, call) {
      const input = defined({
        labels: mapOrUndefined(request.labels),
        expiresAt: request.expiresAt,
        ownerId: request.ownerId,
        apiKeyId: request.apiKeyId,
      })
      const created = await createApiKey(server.domain, call, input)
      return { apiKeyMetadata: asProtoKey(created.apiKeyMetadata), rawApiKey: created.rawApiKey }
    },
    async listApiKeys(request, call) {
      const input = defined({
        maxResults: request.maxResults,
        nextToken: request.nextToken,
        ownerId: request.ownerId,
        status: enumOrUndefined(request.status),
        labelFilter: mapOrUndefined(request.labelFilter),
      })
      const page = await listApiKeys(server.domain, call, input)
      return { keys: page.keysJson, nextToken: page.nextToken }
    },
    async updateApiKey(request, call) {
      const input = defined({
        status: enumOrUndefined(request.status),
        replaceLabels: request.replaceLabels?.items,
        mergeLabels: request.mergeLabels?.items,
      })
      return asProtoKey(await updateApiKey(server.domain, call, request.apiKeyId, input))
    },
    async deleteApiKey(request, call) {
      await deleteApiKey(server.domain, call, request.apiKeyId)
      return {}
    },
  })
}
