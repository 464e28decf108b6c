import type { ServerContext } from '../../../domain/context.js'
import type { ReplicaStatus } from '../../../domain/read-routing.js'
import { AppError } from '../../../errors/app-error.js'
import type { Lifecycle } from '../../../lifecycle/lifecycle.js'
import { secretsEqual } from '../../../secrets/secrets-equal.js'
import { json } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import type { RestRoute } from '../rest-route.js'

/** Why a started server is not ready, when the database is the reason. */
function databaseReason(lifecycle: Lifecycle): { reason?: string } {
  if (!lifecycle.databaseReachable) return { reason: 'database unreachable' }
  if (lifecycle.databaseDiskFull) return { reason: 'database disk full' }
  return {}
}

/**
 * Each read replica's state. A replica out of rotation leaves the server ready: its reads go
 * to the other replicas or the primary, so this only tells the operator which one and why.
 */
function readReplicas(server: ServerContext): { replicas?: ReplicaStatus[] } {
  const replicas = server.domainIfOpen?.readRouting.replicaStatus()
  return replicas ? { replicas } : {}
}

const NO_STORE = { 'cache-control': 'no-store' }
const PROBE = { tag: 'operations', errors: [], examples: [{}], exampleStatus: 200 }

/** Probes and metrics: no API key, never refused while draining (see DrainExemption). */
export const OPERATIONS_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    pattern: '/livez',
    drainExempt: 'probe',
    openapi: {
      ...PROBE,
      operationId: 'livez',
      summary: 'Liveness probe',
      answers: { 200: json('The process is alive.', VIEW.Liveness) },
    },
    handle: (_request, { server }) => ({
      status: 200,
      headers: NO_STORE,
      json: { state: server.facts.lifecycle.state },
    }),
  },
  {
    method: 'GET',
    pattern: '/readyz',
    drainExempt: 'probe',
    openapi: {
      ...PROBE,
      operationId: 'readyz',
      summary: 'Readiness probe',
      answers: {
        200: json('Ready for traffic.', VIEW.Readiness),
        503: json('Not ready (starting, draining, or the database is unreachable).', VIEW.Readiness),
      },
    },
    handle: (_request, { server }) => {
      const lifecycle = server.facts.lifecycle
      const ready = lifecycle.ready
      return {
        status: ready ? 200 : 503,
        headers: NO_STORE,
        json: {
          ready,
          state: lifecycle.state,
          ...(lifecycle.started ? databaseReason(lifecycle) : {}),
          ...readReplicas(server),
        },
      }
    },
  },
  {
    method: 'GET',
    pattern: '/startupz',
    drainExempt: 'probe',
    openapi: {
      ...PROBE,
      operationId: 'startupz',
      summary: 'Startup probe',
      answers: { 200: json('Started.', VIEW.Startup), 503: json('Still starting.', VIEW.Startup) },
    },
    handle: (_request, { server }) => {
      const lifecycle = server.facts.lifecycle
      return {
        status: lifecycle.started ? 200 : 503,
        headers: NO_STORE,
        json: { started: lifecycle.started, state: lifecycle.state },
      }
    },
  },
  {
    method: 'GET',
    pattern: '/metrics',
    drainExempt: 'metrics',
    readHeaders: ['x-service-metrics-key'],
    openapi: {
      operationId: 'metrics',
      tag: 'operations',
      summary: 'Prometheus metrics',
      security: 'metrics',
      answers: {
        200: {
          description: 'Metrics in the Prometheus text format.',
          content: { 'text/plain': { type: 'string' } },
        },
      },
      errors: ['UNAUTHENTICATED'],
      examples: [{}],
      exampleStatus: 200,
    },
    handle: async (request, { config, metrics }) => {
      if (!config.metrics.authDisabled) {
        const given = request.headers['x-service-metrics-key']
        if (given === undefined) throw new AppError('UNAUTHENTICATED', 'missing X-Service-Metrics-Key header')
        if (!secretsEqual(given, config.metrics.secret))
          throw new AppError('UNAUTHENTICATED', 'invalid X-Service-Metrics-Key')
      }
      return {
        status: 200,
        headers: NO_STORE,
        contentType: metrics.registry.contentType,
        text: await metrics.registry.metrics(),
      }
    },
  },
]
