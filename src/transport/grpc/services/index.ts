import type { DomainContext } from '../../../domain/context.js'
import type { GrpcServer } from '../grpc-server.js'
import { addAdminService } from './admin.js'
import { addIdentityServices } from './identity.js'
import { addRegistryServices } from './registry.js'

export function registerGrpcServices(grpc: GrpcServer, context: DomainContext): void {
  addIdentityServices(grpc, context)
  addRegistryServices(grpc, context)
  addAdminService(grpc, context)
}
