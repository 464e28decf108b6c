import type { ServerContext } from '../../../domain/context.js'
import { drainServer } from '../../../domain/drain.js'
import { AdminServiceService } from '../../../generated/memsvc/v1/admin.js'
import { LifecycleState } from '../../../generated/memsvc/v1/system.js'
import type { GrpcServer } from '../grpc-server.js'
import { defined } from '../proto-input.js'

export function addAdminService(grpc: GrpcServer, server: ServerContext): void {
  grpc.addService(
    AdminServiceService,
    {
      async drain(request, call) {
        const input = defined({ timeoutSec: request.timeoutSec, reason: request.reason, waitForQuiesce: request.waitForQuiesce })
        const result = await drainServer(server.domain, call, input)
        return { ...result, state: LifecycleState[result.state] }
      },
    },
    { controlMethods: ['drain'] },
  )
}
