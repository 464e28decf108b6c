// Product and floor alternate (floor first in odd rounds, product first in even ones),
// so slow drift on a shared machine hits both sides alike. A product measured against
// several floors runs once per round, beside each of them. Each side's best run counts:
// other work on the machine only ever slows a run down.
import type { LoadResult } from '../lib/load-result.js'
import type { Comparison } from './types.js'

export interface ComparisonPlan {
  id: string
  measure: string
  floor: string
  /** Absent for a ratio reported beside another floor's, without a target of its own. */
  target?: number
  rounds: number
  /** Each runs warm-up plus one measured run and returns the measured one. */
  runProduct(): Promise<LoadResult>
  runFloor(): Promise<LoadResult>
  notes?: string[]
}

/** One measure divided by several floors: every round runs each floor and the product once. */
export interface MultiFloorPlan {
  measure: string
  rounds: number
  runProduct(): Promise<LoadResult>
  floors: Array<Pick<ComparisonPlan, 'id' | 'floor' | 'target' | 'runFloor'>>
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
  const [comparison] = await compareWithFloors({
    measure: plan.measure,
    rounds: plan.rounds,
    runProduct: plan.runProduct,
    floors: [plan],
  })
  comparison!.notes.unshift(...(plan.notes ?? []))
  return comparison!
}

/**
 * The product and each floor take turns (floors first in odd rounds, the product first in
 * even ones); each floor's ratio uses the product's best run of all rounds.
 */
export async function compareWithFloors(plan: MultiFloorPlan): Promise<Comparison[]> {
  const productRuns: LoadResult[] = []
  const floorRuns: LoadResult[][] = plan.floors.map(() => [])
  const rounds: Comparison['rounds'] = []
  const label = plan.floors.map((floor) => floor.id).join(', ')
  for (let round = 0; round < plan.rounds; round++) {
    const floorsFirst = round % 2 === 0
    const steps: Array<number | 'product'> = plan.floors.map((_, index) => index)
    if (floorsFirst) steps.push('product')
    else steps.unshift('product')
    for (const step of steps) {
      const result = step === 'product' ? await plan.runProduct() : await plan.floors[step]!.runFloor()
      if (step === 'product') productRuns.push(result)
      else floorRuns[step]!.push(result)
      rounds.push({
        side: step === 'product' ? 'product' : 'floor',
        floor: step === 'product' ? undefined : plan.floors[step]!.floor,
        result,
      })
      const side = step === 'product' ? 'memsvc' : plan.floors[step]!.floor
      console.log(
        `  ${label} round ${round + 1} ${side}: ${Math.round(result.rate)}/s p50 ${result.p50Ms?.toFixed(2)} ms p99 ${result.p99Ms?.toFixed(2)} ms, ${result.cpuUsPerRequest?.toFixed(0) ?? '?'} µs CPU/req, errors ${result.errors}`,
      )
    }
  }
  const product = best(productRuns)
  return plan.floors.map((floor, index) => {
    const floorResult = best(floorRuns[index]!)
    const notes: string[] = []
    for (const [side, result] of [
      ['memsvc', product],
      [floor.floor, floorResult],
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
      id: floor.id,
      measure: plan.measure,
      floor: floor.floor,
      target: floor.target,
      product,
      floorResult,
      ratio: product.rate / floorResult.rate,
      rounds: rounds.filter((entry) => entry.side === 'product' || entry.floor === floor.floor),
      notes,
    }
  })
}
