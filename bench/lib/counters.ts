// Server-side request counters. wrk reports only at its end, but the soak needs a rate
// every sample interval under one uninterrupted load (restarting wrk would let
// postgres.js's queues drain, which resets exactly the degradation the soak looks for).
// So the soak reads the server's own count: memsvc's Prometheus counters, or a floor's
// /__bench/count.
import { COUNT_PATH } from '../floors/floor-common.js'

const SCRAPE_TIMEOUT_MS = 5_000
/** `name{labels} value` — prom-client's text format, one sample a line. */
const SAMPLE_LINE = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)$/
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g

export interface MetricsEndpoint {
  restUrl: string
  secret: string
}

export async function scrape(endpoint: MetricsEndpoint): Promise<string> {
  const response = await fetch(`${endpoint.restUrl}/metrics`, {
    headers: { 'x-service-metrics-key': endpoint.secret },
    signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS),
  })
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`)
  return response.text()
}

/** Sum of every sample of `name` whose labels include all of `match` (and, if given, pass `keep`). */
export async function metricSum(
  endpoint: MetricsEndpoint,
  name: string,
  match: Record<string, string>,
  keep: (labels: Record<string, string>) => boolean = () => true,
): Promise<number> {
  return sumInScrape(await scrape(endpoint), name, match, keep)
}

/** metricSum over a scrape already read, for several metrics from one scrape. */
export function sumInScrape(
  text: string,
  name: string,
  match: Record<string, string> = {},
  keep: (labels: Record<string, string>) => boolean = () => true,
): number {
  let sum = 0
  for (const line of text.split('\n')) {
    const sample = SAMPLE_LINE.exec(line)
    if (!sample || sample[1] !== name) continue
    const labels: Record<string, string> = {}
    for (const [, key, value] of (sample[2] ?? '').matchAll(LABEL)) labels[key!] = value!
    if (Object.entries(match).every(([key, value]) => labels[key] === value) && keep(labels)) sum += Number(sample[3])
  }
  return sum
}

/** Successful `GET route` responses memsvc had served at this scrape. */
export const routeCountInScrape = (text: string, route: string) =>
  sumInScrape(text, 'http_server_request_duration_seconds_count', { method: 'GET', route, status_code: '200' })

/** gRPC calls of a method that ended with any status but OK. */
export const memsvcGrpcFailures = (endpoint: MetricsEndpoint, service: string, method: string) =>
  metricSum(
    endpoint,
    'grpc_server_handled_total',
    { grpc_service: service, grpc_method: method },
    (labels) => labels.grpc_code !== 'OK',
  )

export async function floorCount(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}${COUNT_PATH}`, {
    signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS),
  })
  return ((await response.json()) as { count: number }).count
}
