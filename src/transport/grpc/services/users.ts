import type { ServerContext } from '../../../domain/context.js'
import { createUser, type User as DomainUser, deleteUser, getMe, getUser, listUsers } from '../../../domain/users.js'
import {
  type CreateUserRequest,
  type ListUsersRequest,
  Role,
  type User,
  UserServiceService,
} from '../../../generated/memsvc/v1/users.js'
import type { createUserSchema, listUsersSchema } from '../../../validation/identity.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, enumOrUndefined, type ProtoInput, protoEnum, type ToProto } from '../proto-mapping.js'

const createFromProto = (request: CreateUserRequest): ProtoInput<CreateUserRequest, typeof createUserSchema> => ({
  userId: request.userId,
  username: request.username,
  displayName: request.displayName,
  role: enumOrUndefined(request.role),
})

const listFromProto = (request: ListUsersRequest): ProtoInput<ListUsersRequest, typeof listUsersSchema> => ({
  maxResults: request.maxResults,
  nextToken: request.nextToken,
})

const userToProto = (user: DomainUser): ToProto<DomainUser, User> => ({ ...user, role: protoEnum(Role, user.role) })

export function addUserService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(UserServiceService, {
    createUser: async (request, call) =>
      userToProto(await createUser(server.domain, call, defined(createFromProto(request)))),
    async listUsers(request, call) {
      const page = await listUsers(server.domain, call, defined(listFromProto(request)))
      return { users: page.users.map(userToProto), nextToken: page.nextToken }
    },
    getUser: async (request, call) => userToProto(await getUser(server.domain, call, request.userId)),
    async deleteUser(request, call) {
      await deleteUser(server.domain, call, request.userId)
      return {}
    },
    getMe: async (_request, call) => userToProto(await getMe(server.domain, call)),
  })
}
