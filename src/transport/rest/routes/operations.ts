import type { ServerConfig } from '../../../config/server-config.js'
import { AppError } from '../../../errors/app-error.js'
import type { Lifecycle } from '../../../lifecycle/lifecycle.js'
import type { ServerMetrics } from '../../../observability/metrics.js'
import { secretsEqual } from '../../../secrets/secrets-equal.js'
import type { HttpServer } from '../http-server.js'

/** Why a started server is not ready, when the database is the reason. */
function databaseReason(lifecycle: Lifecycle): { reason?: string } {
  if (!lifecycle.databaseReachable) return { reason: 'database unreachable' }
  if (lifecycle.databaseDiskFull) return { reason: 'database disk full' }
  return {}
}

/** Probes and metrics: no API key, never refused while draining (see DrainExemption). */
export function registerOperationsRoutes(
  http: HttpServer,
  lifecycle: Lifecycle,
  metrics: ServerMetrics,
  config: ServerConfig,
): void {
  const noStore = { 'cache-control': 'no-store' }
  const probe = { drainExempt: 'probe' } as const
  http.route('GET', '/livez', () => ({ status: 200, headers: noStore, json: { state: lifecycle.state } }), probe)
  http.route(
    'GET',
    '/readyz',
    () => {
      const ready = lifecycle.ready
      return {
        status: ready ? 200 : 503,
        headers: noStore,
        json: { ready, state: lifecycle.state, ...(lifecycle.started ? databaseReason(lifecycle) : {}) },
      }
    },
    probe,
  )
  http.route(
    'GET',
    '/startupz',
    () => ({
      status: lifecycle.started ? 200 : 503,
      headers: noStore,
      json: { started: lifecycle.started, state: lifecycle.state },
    }),
    probe,
  )
  http.route(
    'GET',
    '/metrics',
    async (request) => {
      if (!config.metrics.authDisabled) {
        const given = request.headers['x-service-metrics-key']
        if (given === undefined) throw new AppError('UNAUTHENTICATED', 'missing X-Service-Metrics-Key header')
        if (!secretsEqual(given, config.metrics.secret))
          throw new AppError('UNAUTHENTICATED', 'invalid X-Service-Metrics-Key')
      }
      return {
        status: 200,
        headers: noStore,
        contentType: metrics.registry.contentType,
        text: await metrics.registry.metrics(),
      }
    },
    { drainExempt: 'metrics', readHeaders: ['x-service-metrics-key'] },
  )
}
