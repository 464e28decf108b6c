// Product and floor alternate (floor first in odd rounds, product first in even ones),
// so slow drift on a shared machine hits both sides alike. Each side's best run counts:
// other work on the machine only ever slows a run down.
import type { LoadResult } from '../lib/load-result.js'
import type { Comparison } from './types.js'

export interface ComparisonPlan {
  id: string
  measure: string
  floor: string
  target: number
  rounds: number
  /** Each runs warm-up plus one measured run and returns the measured one. */
  runProduct(): Promise<LoadResult>
  runFloor(): Promise<LoadResult>
  notes?: string[]
}

const best = (results: LoadResult[]) => results.reduce((top, result) => (result.rate > top.rate ? result : top))

/**
 * Below this share of one core, the server under test was not what limited the rate:
 * the load generator or PostgreSQL (both on the other core) was.
 */
const SATURATED_CORE_SHARE = 0.8
const US_PER_SECOND = 1e6

/** Share of one core the measured process used: CPU per request × requests per second. */
export const coreShare = (result: LoadResult) =>
  result.cpuUsPerRequest === undefined ? undefined : (result.cpuUsPerRequest * result.rate) / US_PER_SECOND

export async function compare(plan: ComparisonPlan): Promise<Comparison> {
  const rounds: Comparison['rounds'] = []
  for (let round = 0; round < plan.rounds; round++) {
    const order: Array<'product' | 'floor'> = round % 2 === 0 ? ['floor', 'product'] : ['product', 'floor']
    for (const side of order) {
      const result = side === 'product' ? await plan.runProduct() : await plan.runFloor()
      rounds.push({ side, result })
      const label = side === 'product' ? 'memsvc' : plan.floor
      console.log(
        `  ${plan.id} round ${round + 1} ${label}: ${Math.round(result.rate)}/s p50 ${result.p50Ms?.toFixed(2)} ms p99 ${result.p99Ms?.toFixed(2)} ms, ${result.cpuUsPerRequest?.toFixed(0) ?? '?'} µs CPU/req, errors ${result.errors}`,
      )
    }
  }
  const product = best(rounds.filter((entry) => entry.side === 'product').map((entry) => entry.result))
  const floorResult = best(rounds.filter((entry) => entry.side === 'floor').map((entry) => entry.result))
  const notes = [...(plan.notes ?? [])]
  for (const [side, result] of [
    ['memsvc', product],
    [plan.floor, floorResult],
  ] as const) {
    const share = coreShare(result)
    if (share !== undefined && share < SATURATED_CORE_SHARE) {
      notes.push(
        `${side} used ${(share * 100).toFixed(0)} % of its core: something else (load generator, PostgreSQL, other work on the machine) limited its rate`,
      )
    }
    if (result.errors > 0)
      notes.push(
        `${side}: ${result.errors} failed requests in the counted run ${JSON.stringify(result.errorKinds ?? {})}`,
      )
  }
  return {
    id: plan.id,
    measure: plan.measure,
    floor: plan.floor,
    target: plan.target,
    product,
    floorResult,
    ratio: product.rate / floorResult.rate,
    rounds,
    notes,
  }
}
