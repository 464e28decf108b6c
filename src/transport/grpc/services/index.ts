import type { ServerContext } from '../../../domain/context.js'
import type { GrpcServer } from '../grpc-server.js'
import { addAdminService } from './admin.js'
import { addIdentityServices } from './identity.js'
import { addRegistryServices } from './registry.js'

export function registerGrpcServices(grpc: GrpcServer, server: ServerContext): void {
  addIdentityServices(grpc, server)
  addRegistryServices(grpc, server)
  addAdminService(grpc, server)
}
