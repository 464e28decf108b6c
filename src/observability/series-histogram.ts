import type { Registry } from 'prom-client'

/** One label set of a SeriesHistogram: observing through it does no label work at all. */
export interface HistogramSeries {
  observe(seconds: number): void
}

interface Series extends HistogramSeries {
  readonly labels: Record<string, string>
  /** Per bucket, not yet cumulative; the last slot is +Inf. */
  readonly counts: Float64Array
  sum: number
  count: number
}

/**
 * A Prometheus histogram whose label sets are looked up once and then held by the caller.
 * prom-client's Histogram validates and hashes the label object on every observe(), which
 * was about a tenth of the request wrapper's CPU time (bench profile of GET
 * /v1/users/me); the transports observe once per request, so they resolve a series per
 * route and status and keep it. The exposition is the same as prom-client's histogram
 * (buckets cumulative, then +Inf, _sum and _count) and registers in the same registry.
 */
export class SeriesHistogram<Label extends string> {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #upperBounds: readonly number[]
  readonly #series = new Map<string, Series>()

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly Label[],
    upperBounds: readonly number[],
    registry: Registry,
  ) {
    this.#upperBounds = [...upperBounds].sort((a, b) => a - b)
    registry.registerMetric(this as never)
  }

  /** The series for these label values (created at zero on first use). Keep it; this call allocates a key. */
  series(labels: Record<Label, string>): HistogramSeries {
    const key = this.labelNames.map((name) => labels[name]).join('\u0000')
    let series = this.#series.get(key)
    if (!series) {
      series = this.#newSeries({ ...labels })
      this.#series.set(key, series)
    }
    return series
  }

  #newSeries(labels: Record<string, string>): Series {
    const upperBounds = this.#upperBounds
    const series: Series = {
      labels,
      counts: new Float64Array(upperBounds.length + 1),
      sum: 0,
      count: 0,
      observe(seconds: number) {
        let bucket = 0
        while (bucket < upperBounds.length && seconds > upperBounds[bucket]!) bucket++
        series.counts[bucket]!++
        series.sum += seconds
        series.count++
      },
    }
    return series
  }

  /** What prom-client's registry reads to write the exposition. */
  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = []
    for (const series of this.#series.values()) {
      let cumulative = 0
      this.#upperBounds.forEach((le, bucket) => {
        cumulative += series.counts[bucket]!
        values.push({ labels: { ...series.labels, le }, value: cumulative, metricName: `${this.name}_bucket` })
      })
      values.push({ labels: { ...series.labels, le: '+Inf' }, value: series.count, metricName: `${this.name}_bucket` })
      values.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` })
      values.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  /** Each series's label values and how many observations it has. */
  counts(): Array<{ labels: Record<string, string>; count: number }> {
    return [...this.#series.values()].map((series) => ({ labels: series.labels, count: series.count }))
  }

  /** Zeroes every series in place: callers keep holding theirs. */
  reset(): void {
    for (const series of this.#series.values()) {
      series.counts.fill(0)
      series.sum = 0
      series.count = 0
    }
  }
}

/**
 * A counter read off a SeriesHistogram's counts, for metrics that count exactly what the
 * histogram observes (grpc_server_handled_total beside grpc_server_handling_seconds): the
 * request path then records once instead of twice.
 */
export class SeriesCounter {
  readonly type = 'counter'
  readonly aggregator = 'sum'

  constructor(
    readonly name: string,
    readonly help: string,
    readonly histogram: SeriesHistogram<string>,
    registry: Registry,
  ) {
    registry.registerMetric(this as never)
  }

  async get() {
    const values = this.histogram.counts().map(({ labels, count }) => ({ labels, value: count }))
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  /** Nothing of its own to reset: it reads the histogram. */
  reset(): void {}
}
