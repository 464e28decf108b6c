import { resolveServerConfig } from '../../src/config/server-config.js'
import { ServerContext } from '../../src/domain/context.js'
import { readLicenseSummary } from '../../src/domain/licenses.js'
import { DrainController } from '../../src/lifecycle/drain.js'
import { Lifecycle } from '../../src/lifecycle/lifecycle.js'
import { createLogger } from '../../src/observability/logger.js'
import { createMetrics } from '../../src/observability/metrics.js'
import { createRestServer } from '../../src/server/server.js'
import type { HttpServer } from '../../src/transport/rest/http-server.js'

export type RegisteredRoute = HttpServer['routes'][number]

const ROUTE_TABLE_CONFIG = resolveServerConfig(
  { 'tls-disabled': true, 'metrics-scrape-secret': 'route-table-secret', 'data-dir': '/nonexistent' },
  {},
  {},
)

/**
 * A REST server wired as `serve` wires it (never listening), over `wrap(server)`: tests that
 * walk every route read its `routes`, so a route added later is covered without editing them.
 * The server context has no database: its use cases answer UNAVAILABLE unless wrapped.
 */
export function restServerOver(options: {
  lifecycle: Lifecycle
  log?: (line: string) => void
  wrap?: (server: ServerContext) => ServerContext
}): HttpServer {
  const log = createLogger('debug', options.log ?? (() => {}))
  const lifecycle = options.lifecycle
  const routesLifecycle = new Lifecycle()
  const server = new ServerContext({
    lifecycle: routesLifecycle,
    log,
    version: 'test',
    licenses: readLicenseSummary('/nonexistent'),
    tlsEnabled: false,
    drainController: new DrainController(routesLifecycle, log),
  })
  return createRestServer({
    config: ROUTE_TABLE_CONFIG,
    server: options.wrap ? options.wrap(server) : server,
    lifecycle,
    metrics: createMetrics(lifecycle, async () => []),
    log,
  })
}

/** Every route `serve` registers. */
export function registeredRestRoutes(): readonly RegisteredRoute[] {
  return restServerOver({ lifecycle: new Lifecycle() }).routes
}

/** Each resource's custom method on `POST /v1/{resource}/{id}:verb` routes. */
const CUSTOM_METHODS: Record<string, string> = {
  embedders: ':probe',
  llms: ':probe',
  rerankers: ':probe',
  spaces: ':addEmbedder',
}

/** A concrete path for a route pattern, with `value` for every parameter (and a verb for the custom-method routes). */
export function pathFor(route: Pick<RegisteredRoute, 'method' | 'pattern'>, value: string): string {
  const resource = route.method === 'POST' ? /^\/v1\/(\w+)\/:id$/.exec(route.pattern)?.[1] : undefined
  return route.pattern.replace(/\/:\w+/g, `/${value}`) + (resource ? (CUSTOM_METHODS[resource] ?? '') : '')
}

export const sendsBody = (method: string): boolean => method === 'POST' || method === 'PUT'
