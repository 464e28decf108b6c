/** Nearest-rank percentile of values already sorted ascending; undefined for no values. */
export function percentile(sorted: number[], fraction: number): number | undefined {
  if (sorted.length === 0) return undefined
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))
  return sorted[rank]
}

/** p50 and p99 in milliseconds from latencies in microseconds. */
export function latencySummary(latenciesUs: number[]): { p50Ms?: number; p99Ms?: number } {
  const sorted = Float64Array.from(latenciesUs).sort()
  const asArray = Array.from(sorted)
  const p50 = percentile(asArray, 0.5)
  const p99 = percentile(asArray, 0.99)
  return { p50Ms: p50 === undefined ? undefined : p50 / 1000, p99Ms: p99 === undefined ? undefined : p99 / 1000 }
}

export const round = (value: number, digits = 2) => Number(value.toFixed(digits))
