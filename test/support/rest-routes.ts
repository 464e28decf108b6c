import { resolveServerConfig } from '../../src/config/server-config.js'
import { DomainContext } from '../../src/domain/context.js'
import { readLicenseSummary } from '../../src/domain/licenses.js'
import { Lifecycle } from '../../src/lifecycle/lifecycle.js'
import { createLogger } from '../../src/observability/logger.js'
import { createMetrics } from '../../src/observability/metrics.js'
import { createRestServer } from '../../src/server/server.js'
import type { HttpServer } from '../../src/transport/rest/http-server.js'

export type RegisteredRoute = HttpServer['routes'][number]

const ROUTE_TABLE_CONFIG = resolveServerConfig({ 'tls-disabled': true, 'metrics-scrape-secret': 'route-table-secret', 'data-dir': '/nonexistent' }, {}, {})

/**
 * A REST server wired as `serve` wires it (never listening), over `wrap(context)`: tests that
 * walk every route read its `routes`, so a route added later is covered without editing them.
 */
export function restServerOver(options: { lifecycle: Lifecycle; log?: (line: string) => void; wrap?: (context: DomainContext) => DomainContext }): HttpServer {
  const log = createLogger('debug', options.log ?? (() => {}))
  const context = new DomainContext(new Lifecycle(), log, 'test', readLicenseSummary('/nonexistent'), false)
  const lifecycle = options.lifecycle
  return createRestServer({ config: ROUTE_TABLE_CONFIG, context: options.wrap ? options.wrap(context) : context, lifecycle, metrics: createMetrics(lifecycle, async () => []), log })
}

/** Every route `serve` registers. */
export function registeredRestRoutes(): readonly RegisteredRoute[] {
  return restServerOver({ lifecycle: new Lifecycle() }).routes
}

/** A concrete path for a route pattern, with `value` for every parameter (and `:probe` for the custom-method routes). */
export function pathFor(route: Pick<RegisteredRoute, 'method' | 'pattern'>, value: string): string {
  const customMethod = route.method === 'POST' && /\/(embedders|llms)\/:id$/.test(route.pattern) ? ':probe' : ''
  return route.pattern.replace(/\/:\w+/g, `/${value}`) + customMethod
}

export const sendsBody = (method: string): boolean => method === 'POST' || method === 'PUT'
