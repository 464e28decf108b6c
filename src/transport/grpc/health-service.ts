import * as grpc from '@grpc/grpc-js'
import {
  HealthService,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from '../../generated/grpc/health/v1/health.js'
import type { Lifecycle } from '../../lifecycle/lifecycle.js'

const MAX_NAME_IN_MESSAGE = 200

/**
 * grpc.health.v1 following the lifecycle: SERVING exactly when /readyz says ready.
 * "" is the whole server; each registered service name answers the same.
 */
export function addHealthService(server: grpc.Server, lifecycle: Lifecycle, serviceNames: string[]): void {
  const known = new Set(['', ...serviceNames])
  const currentStatus = () => (lifecycle.ready ? ServingStatus.SERVING : ServingStatus.NOT_SERVING)
  // The name is caller input: echoing all of it into grpc-message can exceed the peer's
  // header-list limit, and the client then never sees the status (it waits for its deadline).
  const shown = (name: string) =>
    name.length > MAX_NAME_IN_MESSAGE ? `${name.slice(0, MAX_NAME_IN_MESSAGE)}...` : name
  server.addService(HealthService, {
    check(call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<unknown>) {
      if (!known.has(call.request.service)) {
        callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${shown(call.request.service)}` })
        return
      }
      callback(null, { status: currentStatus() })
    },
    watch(call: grpc.ServerWritableStream<{ service: string }, unknown>) {
      if (!known.has(call.request.service)) {
        call.write({ status: ServingStatus.SERVICE_UNKNOWN })
        return
      }
      let last = currentStatus()
      call.write({ status: last })
      const onChange = () => {
        const next = currentStatus()
        if (next === last) return
        last = next
        call.write({ status: next })
      }
      lifecycle.on('change', onChange)
      call.on('cancelled', () => lifecycle.off('change', onChange))
      call.on('close', () => lifecycle.off('change', onChange))
    },
  })
}
