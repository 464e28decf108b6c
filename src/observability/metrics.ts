import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import { LIFECYCLE_STATES, type Lifecycle } from '../lifecycle/lifecycle.js'
import { SeriesCounter, SeriesHistogram } from './series-histogram.js'

/** Buckets in seconds, from sub-millisecond cache hits to multi-second slow queries. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface PoolStats {
  pool: string
  max: number
  open: number
  /** Absent where the engine cannot tell busy from idle connections. */
  active?: number
}

/** What the replica gauges show of a read replica (db/read-replicas.ts's ReplicaStatus has it). */
export interface ReplicaGaugeSample {
  name: string
  state: string
  inRotation: boolean
  lagSeconds?: number
}

export interface ServerMetrics {
  registry: Registry
  httpDuration: SeriesHistogram<'method' | 'route' | 'status_code'>
  grpcDuration: SeriesHistogram<'grpc_service' | 'grpc_method' | 'grpc_code'>
  /** One series per MCP tool and outcome (OK or the error's status); every call of any tool is also one POST /mcp in httpDuration. */
  mcpToolDuration: SeriesHistogram<'tool' | 'status'>
  /** Retrieval's query vectors: hit (from the server's cache) or miss (the embedder was asked). */
  queryEmbeddingCache: Counter<'outcome'>
  /** Reads of the read use cases, by where they went (src/domain/read-routing.ts, ReadRoute). */
  dbReads: Counter<'route'>
}

/**
 * A registry per server instance (tests run several in one process), with
 * Prometheus/OpenTelemetry-style names and the process defaults.
 */
export function createMetrics(
  lifecycle: Lifecycle,
  poolStats: () => Promise<PoolStats[]>,
  replicaStatus: () => ReplicaGaugeSample[] = () => [],
): ServerMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // prom-client also exports these three as gauges ending in _total, which
  // `promtool check metrics` rejects; nodejs_active_{handles,requests,resources}
  // carry the same counts by type.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name)
  }
  // prom-client leaves out the part of nodejs_external_memory_bytes that ArrayBuffers and Buffers hold.
  new Gauge({
    name: 'nodejs_array_buffers_bytes',
    help: 'Memory held by ArrayBuffers and Buffers, in bytes (part of nodejs_external_memory_bytes).',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().arrayBuffers)
    },
  })

  // One pool query per scrape, shared by the gauges that need it: the registry collects
  // them concurrently, so a value set by another gauge's collect would show a scrape late.
  let pendingStats: Promise<PoolStats[]> | undefined
  const scrapePoolStats = () => {
    pendingStats ??= poolStats()
      // The database may be down; the gauges then stay empty rather than failing the scrape.
      .catch(() => [] as PoolStats[])
      .finally(() => {
        pendingStats = undefined
      })
    return pendingStats
  }

  const latencyHistogram = <Label extends string>(name: string, help: string, labels: readonly Label[]) =>
    new SeriesHistogram(name, help, labels, LATENCY_BUCKETS, registry)
  const httpDuration = latencyHistogram('http_server_request_duration_seconds', 'Duration of HTTP server requests.', [
    'method',
    'route',
    'status_code',
  ] as const)
  const grpcDuration = latencyHistogram(
    'grpc_server_handling_seconds',
    'Histogram of response latency of RPCs handled by the server.',
    ['grpc_service', 'grpc_method', 'grpc_code'] as const,
  )
  new SeriesCounter(
    'grpc_server_handled_total',
    'Total number of RPCs completed on the server, regardless of success or failure.',
    grpcDuration,
    registry,
  )
  const mcpToolDuration = latencyHistogram(
    'memsvc_mcp_tool_call_duration_seconds',
    'Duration of MCP tool calls, by tool and outcome (OK or the error status the tool answered).',
    ['tool', 'status'] as const,
  )
  const queryEmbeddingCache = new Counter({
    name: 'memsvc_query_embedding_cache_total',
    help: "Query embeddings retrieval needed, by outcome: hit (from the server's cache) or miss (the embedder was asked).",
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'memsvc_lifecycle_state',
    help: 'Current lifecycle state of the server (1 for the current state, 0 otherwise).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      for (const state of LIFECYCLE_STATES) this.set({ state }, lifecycle.state === state ? 1 : 0)
    },
  })
  new Gauge({
    name: 'memsvc_ready',
    help: 'Whether the server is ready to serve traffic (1) or not (0).',
    registers: [registry],
    collect() {
      this.set(lifecycle.ready ? 1 : 0)
    },
  })
  new Gauge({
    name: 'memsvc_requests_in_flight',
    help: 'Requests being handled right now, over both transports.',
    registers: [registry],
    collect() {
      this.set(lifecycle.inFlight)
    },
  })
  new Gauge({
    name: 'memsvc_db_pool_max_connections',
    help: 'Configured maximum connections of a database pool.',
    labelNames: ['pool'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const entry of await scrapePoolStats()) this.set({ pool: entry.pool }, entry.max)
    },
  })
  new Gauge({
    name: 'memsvc_db_pool_connections',
    help: 'Open database connections of a pool, by state (used/idle; open where the engine cannot tell).',
    labelNames: ['pool', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const entry of await scrapePoolStats()) {
        if (entry.active === undefined) {
          this.set({ pool: entry.pool, state: 'open' }, entry.open)
        } else {
          this.set({ pool: entry.pool, state: 'used' }, entry.active)
          this.set({ pool: entry.pool, state: 'idle' }, Math.max(0, entry.open - entry.active))
        }
      }
    },
  })
  const dbReads = new Counter({
    name: 'memsvc_db_reads_total',
    help:
      "Read requests by where they were sent: replica, replica-after-wait (after the caller's own write), " +
      'primary-no-replica, primary-own-write (no replica replayed it in time), primary-replica-failed.',
    labelNames: ['route'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'memsvc_db_replica_in_rotation',
    help: 'Whether a read replica is read from (1) or set aside as down, lagging or not a replica (0).',
    labelNames: ['replica', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const replica of replicaStatus())
        this.set({ replica: replica.name, state: replica.state }, replica.inRotation ? 1 : 0)
    },
  })
  new Gauge({
    name: 'memsvc_db_replica_lag_seconds',
    help: 'How long a read replica has lacked WAL the primary had, at its last check (absent while it does not answer).',
    labelNames: ['replica'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const replica of replicaStatus())
        if (replica.lagSeconds !== undefined) this.set({ replica: replica.name }, replica.lagSeconds)
    },
  })
  return { registry, httpDuration, grpcDuration, mcpToolDuration, queryEmbeddingCache, dbReads }
}
