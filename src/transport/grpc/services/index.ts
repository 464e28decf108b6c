import type { ServerContext } from '../../../domain/context.js'
import type { GrpcServer } from '../grpc-server.js'
import { addAdminService } from './admin.js'
import { addApiKeyService } from './api-keys.js'
import { addEmbedderService } from './embedders.js'
import { addLlmService } from './llms.js'
import { addMemoryService } from './memories.js'
import { addRerankerService } from './rerankers.js'
import { addSpaceService } from './spaces.js'
import { addSystemService } from './system.js'
import { addUserService } from './users.js'

/** One file per service, named like the REST route file of the same resource (src/transport/rest/routes). */
export function registerGrpcServices(grpc: GrpcServer, server: ServerContext): void {
  addSystemService(grpc, server)
  addUserService(grpc, server)
  addApiKeyService(grpc, server)
  addEmbedderService(grpc, server)
  addLlmService(grpc, server)
  addRerankerService(grpc, server)
  addSpaceService(grpc, server)
  addMemoryService(grpc, server)
  addAdminService(grpc, server)
}
