import type { ServerContext } from '../../../domain/context.js'
import { type SystemInfo as DomainSystemInfo, getSystemInfo, initializeSystem } from '../../../domain/system.js'
import { LifecycleState, type SystemInfo, SystemServiceService } from '../../../generated/memsvc/v1/system.js'
import type { GrpcServer } from '../grpc-server.js'
import { protoEnum, type ToProto } from '../proto-mapping.js'

const systemInfoToProto = (info: DomainSystemInfo): ToProto<DomainSystemInfo, SystemInfo> => ({
  ...info,
  lifecycleState: protoEnum(LifecycleState, info.lifecycleState),
})

export function addSystemService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(SystemServiceService, {
    getSystemInfo: async () => systemInfoToProto(await getSystemInfo(server)),
    initializeSystem: async () => initializeSystem(server.domain),
  })
}
