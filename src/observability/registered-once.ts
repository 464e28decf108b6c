import type { Registry } from 'prom-client'

/**
 * The registry's metric of this name, registered by the first handler that records into it: the
 * others get that one (prom-client refuses a second metric of the same name in a registry).
 */
export function registeredOnce<Config extends { name: string; registers?: Registry[] }, Metric>(
  registry: Registry,
  type: new (config: Config) => Metric,
  config: Config,
): Metric {
  return (registry.getSingleMetric(config.name) as Metric | undefined) ?? new type({ ...config, registers: [registry] })
}
