import type { ServerContext } from '../../../domain/context.js'
import { drainServer } from '../../../domain/drain.js'
import { AdminServiceService, type DrainRequest } from '../../../generated/memsvc/v1/admin.js'
import { LifecycleState } from '../../../generated/memsvc/v1/system.js'
import type { drainSchema } from '../../../validation/admin.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined, type ProtoInput, protoEnum } from '../proto-mapping.js'

const drainFromProto = (request: DrainRequest): ProtoInput<DrainRequest, typeof drainSchema> => ({
  timeoutSec: request.timeoutSec,
  reason: request.reason,
  waitForQuiesce: request.waitForQuiesce,
})

export function addAdminService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(
    AdminServiceService,
    {
      async drain(request, call) {
        const result = await drainServer(server.domain, call, defined(drainFromProto(request)))
        return { ...result, state: protoEnum(LifecycleState, result.state) }
      },
    },
    { drainExempt: { drain: 'drain-control' } },
  )
}
